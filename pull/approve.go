package pull

import (
	"fmt"
	"path/filepath"
	"slices"
)

// Approval is what Approve did: Tool is the entry after it, and
// NothingPending says there was nothing to approve (the lock unchanged).
type Approval struct {
	Tool           Tool
	NothingPending bool
	// NewNames are the names the approved version declares that were not
	// approved before.
	NewNames []string
}

// Approve grants what the tool name in dir's lock asks for and pins the
// version that asked. With want set, it refuses unless the pending
// version is that digest: a serve following the tag may have recorded a
// newer version, asking for more, since the operator saw want.
func Approve(dir, name, want string) (*Approval, error) {
	lock, err := ReadLock(dir)
	if err != nil {
		return nil, err
	}
	t := lock.Find(name)
	if t == nil {
		return nil, fmt.Errorf("%s has no tool %q", filepath.Join(dir, LockName), name)
	}
	if t.Approved != nil && t.PendingDigest == "" {
		return &Approval{Tool: *t, NothingPending: true}, nil
	}
	pending := t.PendingDigest
	if pending == "" {
		pending = t.Digest
	}
	if want != "" && want != pending {
		names := ""
		if t.PendingNames != nil {
			names = "declaring:\n" + DescribeNames(*t.PendingNames, NewNames(*t.PendingNames, t.Names))
		}
		return nil, fmt.Errorf("approve %s --digest %s refused: the pending version is now %s (recorded since, for example by a serve following the tag), asking for:\n%s%srun 'wasmcp approve %s --digest %s' to grant that", t.Name, want, pending, Describe(t.Pending), names, t.Name, pending)
	}
	g := append([]string{}, t.Pending...)
	t.Approved = &g
	var fresh []string
	if t.PendingNames != nil {
		// The approval is what the approved version declares, as its
		// grants are what it asks for.
		fresh = NewNames(*t.PendingNames, t.Names)
		n := slices.Clone(*t.PendingNames)
		t.Names = &n
	}
	if t.PendingDigest != "" {
		t.moveTo(t.PendingDigest)
	}
	t.Pending, t.PendingDigest, t.PendingNames = nil, "", nil
	if err := WriteLock(dir, lock); err != nil {
		return nil, err
	}
	return &Approval{Tool: *t, NewNames: fresh}, nil
}
