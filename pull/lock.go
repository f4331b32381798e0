package pull

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/wasmcp/wasmcp/internal/regfile"
	"github.com/wasmcp/wasmcp/pull/oci"
)

// LockName is the lock file's name in a tools directory.
const LockName = "wasmcp.lock"

// Lock is the lock file: one entry per pulled tool.
type Lock struct {
	// RevokedKeys are fingerprints of signing keys no longer trusted
	// ("sha256:<hex>" of the public key's DER, as a tool's signer line
	// shows it after "key "): a signature by one is refused for every tool.
	RevokedKeys []string `toml:"revoked_keys,omitempty"`
	Tools       []Tool   `toml:"tool"`

	// read is the file's content as ReadLock read it (nil: no file), so
	// that a writer after a long check can tell the operator edited it.
	read []byte
}

// Tool is one pulled tool. It owns NAME.wasm and NAME.policy.toml in the
// tools directory: Sync writes and removes them.
type Tool struct {
	// Name is the module's name: the file NAME.wasm in the tools directory.
	Name string `toml:"name"`
	// Reference is where it is pulled from: REGISTRY/REPOSITORY:TAG (a
	// re-pull follows the tag) or REGISTRY/REPOSITORY@DIGEST.
	Reference string `toml:"reference"`
	// Digest pins the manifest served, sha256:<hex>.
	Digest string `toml:"digest"`
	// Signed false serves the tool without a signature. Unset is true.
	Signed *bool `toml:"signed,omitempty"`
	// Key is the expected signer's public key (PEM file; relative paths
	// are the tools directory's).
	Key string `toml:"key,omitempty"`
	// KeyNotBefore and KeyNotAfter (RFC 3339) bound when Key is trusted,
	// checked at the time of verification (a key-based signature carries
	// no trusted time of its own).
	KeyNotBefore string `toml:"key_not_before,omitempty"`
	KeyNotAfter  string `toml:"key_not_after,omitempty"`
	// Identity (or IdentityRegexp, which must match the whole identity)
	// and Issuer are the expected signer of a keyless signature, checked
	// offline against TrustedRoot (a Sigstore trusted-root JSON file).
	Identity       string `toml:"identity,omitempty"`
	IdentityRegexp string `toml:"identity_regexp,omitempty"`
	Issuer         string `toml:"issuer,omitempty"`
	TrustedRoot    string `toml:"trusted_root,omitempty"`
	// Approved are the grants the operator approved (grant lines, see
	// Grants); absent means not approved yet, and the tool is not served.
	Approved *[]string `toml:"approved,omitempty"`
	// Pending are the grants the version PendingDigest asks for beyond
	// Approved, waiting for `wasmcp approve NAME`.
	Pending       []string `toml:"pending,omitempty"`
	PendingDigest string   `toml:"pending_digest,omitempty"`
	// Names are the names the operator approved (NameLines: "tool echo",
	// "resource file:///x", "template …", "prompt …"): a version declaring
	// a name not in them asks for more, like a new grant, and one dropping
	// a name asks for less. Absent (a lock from before names were
	// recorded): the names the pinned version declares are approved when
	// first seen, since that version is the one the operator approved.
	Names *[]string `toml:"names,omitempty"`
	// PendingNames are the names the pending version declares (recorded
	// with Pending, approved with it: they replace Names); absent when
	// that version was not described.
	PendingNames *[]string `toml:"pending_names,omitempty"`
	// Replaced are the digests this entry pinned before and moved away
	// from, oldest first (the last MaxReplaced). "Older" than the pinned
	// version means one of these: a tag moved back to one is a rollback,
	// refused unless AllowDowngrade (wasmcp pull --allow-downgrade).
	Replaced       []string `toml:"replaced,omitempty"`
	AllowDowngrade bool     `toml:"allow_downgrade,omitempty"`
	// Signer is who signed the pinned digest, as last verified (for the
	// operator's eyes; verification never reads it).
	Signer string `toml:"signer,omitempty"`

	// RevokedKeys is the lock's revoked_keys, copied here by ReadLock for
	// the verifier; never written as part of the tool.
	RevokedKeys []string `toml:"-"`
}

var fingerprintRe = regexp.MustCompile(`^(key )?sha256:[0-9a-fA-F]{64}$`)

// checkTimes checks a tool's key_not_before and key_not_after.
func (t *Tool) checkTimes() error {
	var nb, na time.Time
	for _, f := range []struct {
		key, v string
		to     *time.Time
	}{{"key_not_before", t.KeyNotBefore, &nb}, {"key_not_after", t.KeyNotAfter, &na}} {
		if f.v == "" {
			continue
		}
		if t.Key == "" {
			return fmt.Errorf("%s applies to a key; the tool names none", f.key)
		}
		v, err := time.Parse(time.RFC3339, f.v)
		if err != nil {
			return fmt.Errorf("%s %q: want an RFC 3339 time, like 2027-01-31T00:00:00Z", f.key, f.v)
		}
		*f.to = v
	}
	if !nb.IsZero() && !na.IsZero() && !na.After(nb) {
		return fmt.Errorf("key_not_after %s is not after key_not_before %s", t.KeyNotAfter, t.KeyNotBefore)
	}
	return nil
}

// RequireSignature reports whether the tool must be signed.
func (t *Tool) RequireSignature() bool { return t.Signed == nil || *t.Signed }

var toolName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// CheckName checks a tool name: letters, digits, '-' and '_', at most 64.
func CheckName(name string) error {
	if !toolName.MatchString(name) {
		return fmt.Errorf("tool name %q: want letters, digits, - and _ (at most 64), starting with a letter or digit", name)
	}
	return nil
}

// maxLockBytes bounds the lock file, read like every file of the tools
// directory: without blocking on a FIFO, regular files only.
const maxLockBytes = 16 << 20

// ReadLock reads dir's lock file; none is an empty lock.
func ReadLock(dir string) (*Lock, error) {
	p := filepath.Join(dir, LockName)
	data, err := regfile.Read(p, maxLockBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lock file: %w", err)
	}
	l := Lock{read: data}
	md, err := toml.Decode(string(data), &l)
	if err != nil {
		return nil, fmt.Errorf("lock file %s: %w", p, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return nil, fmt.Errorf("lock file %s: unknown key %q", p, und[0].String())
	}
	for i, r := range l.RevokedKeys {
		if !fingerprintRe.MatchString(r) {
			return nil, fmt.Errorf("lock file %s: revoked_keys: %q is not a key fingerprint (sha256:<64 hex digits>, as the signer line shows)", p, r)
		}
		l.RevokedKeys[i] = strings.ToLower(r) // hex in either case names the same key
	}
	seen := map[string]string{} // lower case → as written
	for i := range l.Tools {
		t := &l.Tools[i]
		if err := CheckName(t.Name); err != nil {
			return nil, fmt.Errorf("lock file %s: tool %d: %w", p, i+1, err)
		}
		if prev, ok := seen[strings.ToLower(t.Name)]; ok {
			if prev == t.Name {
				return nil, fmt.Errorf("lock file %s: tool %q is listed twice", p, t.Name)
			}
			return nil, fmt.Errorf("lock file %s: tools %q and %q differ only in case: on a case-insensitive filesystem they are one file", p, prev, t.Name)
		}
		seen[strings.ToLower(t.Name)] = t.Name
		if t.Reference == "" || t.Digest == "" {
			return nil, fmt.Errorf("lock file %s: tool %q: reference and digest are required", p, t.Name)
		}
		if r, err := oci.ParseRef(t.Reference); err == nil && r.ValidateReferenceAsDigest() == nil && r.Reference.Reference != t.Digest {
			return nil, fmt.Errorf("lock file %s: tool %q: reference %s pins %s but digest is %s: which one was meant? (make them agree)", p, t.Name, t.Reference, r.Reference.Reference, t.Digest)
		}
		if t.RequireSignature() && t.Key == "" && t.TrustedRoot == "" {
			return nil, fmt.Errorf("lock file %s: tool %q: name the expected signer (key, or identity, issuer and trusted_root), or set signed = false", p, t.Name)
		}
		if err := t.checkTimes(); err != nil {
			return nil, fmt.Errorf("lock file %s: tool %q: %w", p, t.Name, err)
		}
		t.RevokedKeys = l.RevokedKeys
	}
	return &l, nil
}

// FindFold returns the tool whose name equals name but for case, nil if
// none: two such names are one file on a case-insensitive filesystem.
func (l *Lock) FindFold(name string) *Tool {
	for i := range l.Tools {
		if strings.EqualFold(l.Tools[i].Name, name) {
			return &l.Tools[i]
		}
	}
	return nil
}

// Find returns the tool named name, nil if none.
func (l *Lock) Find(name string) *Tool {
	for i := range l.Tools {
		if l.Tools[i].Name == name {
			return &l.Tools[i]
		}
	}
	return nil
}

// Put adds t, or replaces the tool of the same name.
func (l *Lock) Put(t Tool) {
	if old := l.Find(t.Name); old != nil {
		*old = t
		return
	}
	l.Tools = append(l.Tools, t)
	slices.SortFunc(l.Tools, func(a, b Tool) int { return strings.Compare(a.Name, b.Name) })
}

const lockHeader = `# Tools pulled from OCI registries, pinned by digest (docs/registry-tools.md).
# Written by wasmcp pull and wasmcp approve; wasmcp serve --tools reads it.
`

// ErrLockChanged is WriteLockUnchanged's refusal: the lock file is no
// longer what ReadLock read.
var ErrLockChanged = errors.New("the lock file changed since it was read")

// WriteLockUnchanged writes l, read by ReadLock, only if the file still
// holds what was read: an operator's edit made meanwhile (a key revoked)
// is never overwritten with the older content. (A write racing the
// comparison itself, within microseconds, is not excluded.)
func WriteLockUnchanged(dir string, l *Lock) error {
	now, err := regfile.Read(filepath.Join(dir, LockName), maxLockBytes)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if (err == nil) != (l.read != nil) || !bytes.Equal(now, l.read) {
		return ErrLockChanged
	}
	return WriteLock(dir, l)
}

// WriteLock writes the lock file atomically (a temporary file renamed).
func WriteLock(dir string, l *Lock) error {
	var b bytes.Buffer
	b.WriteString(lockHeader)
	if err := toml.NewEncoder(&b).Encode(l); err != nil {
		return err
	}
	return writeAtomic(filepath.Join(dir, LockName), b.Bytes(), 0o644)
}

// writeAtomic writes data to path through a hidden temporary file in the
// same directory, renamed over path once complete.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, mode)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// MaxReplaced bounds a lock entry's Replaced list.
const MaxReplaced = 32

// moveTo pins d, recording the digest pinned until now as replaced (and
// forgetting d there, if the operator pinned it again).
func (t *Tool) moveTo(d string) {
	if t.Digest != "" && t.Digest != d {
		t.Replaced = append(slices.DeleteFunc(t.Replaced, func(r string) bool { return r == t.Digest }), t.Digest)
		if len(t.Replaced) > MaxReplaced {
			t.Replaced = t.Replaced[len(t.Replaced)-MaxReplaced:]
		}
	}
	t.Replaced = slices.DeleteFunc(t.Replaced, func(r string) bool { return r == d })
	t.Digest = d
}

// ErrRollback is the refusal of a digest t moved away from before.
var ErrRollback = errors.New("a rollback")

// checkRollback refuses d if t moved away from it before, unless t
// allows a downgrade.
func (t *Tool) checkRollback(d string) error {
	if t.AllowDowngrade || !slices.Contains(t.Replaced, d) {
		return nil
	}
	return fmt.Errorf("%s is a version %s pinned before and moved away from: %w (the tag moved back); pin it again with wasmcp pull --allow-downgrade", d, t.Name, ErrRollback)
}
