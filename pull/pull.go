package pull

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/pull/oci"
	"github.com/wasmcp/wasmcp/pull/signing"
)

// Signer is who the operator expects to have signed a tool, as wasmcp
// pull's flags name it: a public key, or a keyless identity and issuer
// checked against a trusted root, or no one (Unsigned).
//
// Its files are named as on a command line: relative paths are the
// working directory's (the lock records them with lockPath).
type Signer struct {
	Key            string // PEM public key file
	Identity       string
	IdentityRegexp string
	Issuer         string
	TrustedRoot    string // Sigstore trusted_root.json file
	Unsigned       bool
}

// named reports whether s names a signer (or none, Unsigned), replacing
// the one a lock entry had.
func (s Signer) named() bool { return s.Key != "" || s.TrustedRoot != "" || s.Unsigned }

// Request is one wasmcp pull: the tool Ref pinned in Dir's lock under
// Name (default: the repository's last element). Dir is created if
// missing.
type Request struct {
	Dir    string
	Ref    oci.Ref
	Name   string
	Signer Signer
	Source Source
	Cache  *Cache
	// AllowDowngrade pins a digest the entry moved away from before (a
	// rollback otherwise refused).
	AllowDowngrade bool
	// Describe, when set, names what the version declares (tools,
	// resources, templates, prompts): listed by Pulled.Fetched.Names, and
	// a name not approved before makes an update pending.
	Describe Describer
	// Taken, when set (with Describe), lists the names the other modules
	// of the tools directory declare, each with the file declaring it
	// (every module but NAME.wasm, the tool's own). A version declaring
	// one of them is refused (CollisionError) unless AllowCollision.
	Taken func(ctx context.Context, name string) (map[string]string, error)
	// AllowCollision records a version whose names collide anyway: the
	// catalog then keeps each name with the module serving it and refuses
	// the other whole (docs/registry-tools.md, "Names").
	AllowCollision bool
}

// Outcome says what a pull recorded for a version that passed every
// check but approval.
type Outcome int

// The outcomes of a pull.
const (
	// Within: the version asks for no more than was approved; serve
	// picks it up.
	Within Outcome = iota
	// NothingToApprove: the version asks for nothing, approved at once.
	NothingToApprove
	// Pending: the version asks for grants not approved; they wait for
	// wasmcp approve.
	Pending
)

// Pulled is what a pull verified and recorded.
type Pulled struct {
	Tool    Tool // the lock entry as written
	Digest  string
	Fetched *Fetched
	Took    time.Duration // resolving, fetching and verifying
	Outcome Outcome
	// Beyond are the grants asked for beyond an earlier approval (Pending
	// with an approval only).
	Beyond []string
	// NewNames are the names declared beyond an earlier approval (Pending
	// with an approval only).
	NewNames []string
	// Collisions are the names other modules of the tools directory
	// declare too (recorded anyway: Request.AllowCollision).
	Collisions []Collision
}

// Pull resolves r.Ref to a digest once, fetches and verifies that version
// (every blob's digest, the signature against the expected signer) and
// records it in r.Dir's lock, pinned by that digest: served at once if it
// asks for no more than was approved, pending approval otherwise.
func Pull(ctx context.Context, r Request) (*Pulled, error) {
	lock, t, err := entry(r)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	dgst, err := r.Source.Resolve(ctx, r.Ref)
	if err != nil {
		return nil, err
	}
	if !r.AllowDowngrade {
		if err := t.checkRollback(dgst); err != nil {
			return nil, fmt.Errorf("pull %s refused: %w", r.Ref, err)
		}
	}
	s := &Syncer{Dir: r.Dir, Cache: r.Cache, Source: r.Source, Verify: Verify, Describe: r.Describe}
	f, err := s.Fetch(ctx, &t, dgst)
	if err == nil {
		err = s.describe(ctx, &t, f)
	}
	if err != nil {
		return nil, fmt.Errorf("pull %s@%s refused: %w", r.Ref.Registry+"/"+r.Ref.Repository, dgst, err)
	}
	p := &Pulled{Digest: dgst, Fetched: f, Took: time.Since(start)}
	if t.Names == nil && t.Approved != nil && f.Names != nil {
		s.adoptNames(ctx, &t, f)
	}
	if r.Taken != nil && f.Names != nil {
		taken, err := r.Taken(ctx, t.Name)
		if err != nil {
			return nil, fmt.Errorf("pull %s: the names the tools directory's modules declare: %w", t.Name, err)
		}
		for _, n := range f.Names {
			if file, ok := taken[n]; ok {
				p.Collisions = append(p.Collisions, Collision{Name: n, File: file})
			}
		}
		if len(p.Collisions) > 0 && !r.AllowCollision {
			return nil, &CollisionError{Tool: t.Name, Collisions: p.Collisions}
		}
	}
	t.Signer = f.Signer
	record(&t, p)
	p.Tool = t
	lock.Put(t)
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return nil, err
	}
	if err := WriteLockUnchanged(r.Dir, lock); errors.Is(err, ErrLockChanged) {
		// A serve re-pulling, or an edit, wrote it while this pull ran:
		// never overwritten with what was read before.
		return nil, fmt.Errorf("%s changed while pulling (a serve or an edit wrote it); nothing recorded: run wasmcp pull again", filepath.Join(r.Dir, LockName))
	} else if err != nil {
		return nil, err
	}
	return p, nil
}

// entry reads the lock and makes the entry r asks for: the name checked,
// an existing entry kept with its approval, the expected signer replaced
// if r names one.
func entry(r Request) (*Lock, Tool, error) {
	n := r.Name
	if n == "" {
		n = r.Ref.Repository[strings.LastIndex(r.Ref.Repository, "/")+1:]
	}
	if err := CheckName(n); err != nil {
		return nil, Tool{}, fmt.Errorf("%w (give --name)", err)
	}
	lock, err := ReadLock(r.Dir)
	if err != nil {
		return nil, Tool{}, err
	}
	if other := lock.FindFold(n); other != nil && other.Name != n {
		return nil, Tool{}, fmt.Errorf("tool %q: %s has %q, differing only in case (one file on a case-insensitive filesystem); give --name", n, LockName, other.Name)
	}
	t := Tool{Name: n, RevokedKeys: lock.RevokedKeys}
	if old := lock.Find(n); old != nil {
		t = *old
	} else if err := CheckUnowned(r.Dir, n); err != nil {
		return nil, Tool{}, fmt.Errorf("%w; give --name", err)
	}
	t.Reference = r.Ref.String()
	if sg := r.Signer; sg.named() {
		if sg.Key, err = lockPath(r.Dir, sg.Key); err != nil {
			return nil, Tool{}, fmt.Errorf("--key: %w", err)
		}
		if sg.TrustedRoot, err = lockPath(r.Dir, sg.TrustedRoot); err != nil {
			return nil, Tool{}, fmt.Errorf("--trusted-root: %w", err)
		}
		oldKey := t.Key
		t.Key, t.Identity, t.IdentityRegexp, t.Issuer, t.TrustedRoot, t.Signed = sg.Key, sg.Identity, sg.IdentityRegexp, sg.Issuer, sg.TrustedRoot, nil
		if !sameKey(r.Dir, oldKey, sg.Key) {
			t.KeyNotBefore, t.KeyNotAfter = "", "" // a window belongs to the key it was set for
		}
		if sg.Unsigned {
			f := false
			t.Signed = &f
		}
	}
	if t.RequireSignature() && t.Key == "" && t.TrustedRoot == "" {
		return nil, Tool{}, errors.New("name the expected signer: --key PUB.pem, or --identity/--identity-regexp, --issuer and --trusted-root; or --unsigned to accept it without a signature")
	}
	if t.TrustedRoot != "" && t.Key == "" && (t.Issuer == "" || (t.Identity == "" && t.IdentityRegexp == "")) {
		return nil, Tool{}, errors.New("a keyless signer needs --issuer and --identity (or --identity-regexp) besides --trusted-root")
	}
	return lock, t, nil
}

// record sets t's digest, approval and pending grants and names for the
// verified version p.Fetched, and p.Outcome. A version declaring a name
// the approval does not hold asks for more, like a new grant (names not
// described, Fetched.Names nil, are not compared).
func record(t *Tool, p *Pulled) {
	f := p.Fetched
	var fresh []string
	if f.Names != nil {
		fresh = NewNames(f.Names, t.Names)
	}
	switch {
	case t.Approved != nil && len(Beyond(f.Grants, *t.Approved)) == 0 && len(fresh) == 0:
		t.moveTo(p.Digest)
		t.Pending, t.PendingDigest, t.PendingNames = nil, "", nil
		p.Outcome = Within
	case t.Approved == nil && len(f.Grants) == 0:
		// A first pull asking for nothing: its names were listed, and
		// checked against the tools directory's (Request.Taken).
		t.moveTo(p.Digest)
		t.Pending, t.PendingDigest, t.PendingNames = nil, "", nil
		empty := []string{}
		t.Approved = &empty
		if f.Names != nil {
			n := slices.Clone(f.Names)
			t.Names = &n
		}
		p.Outcome = NothingToApprove
	default:
		if t.Digest == "" || t.Approved == nil {
			t.moveTo(p.Digest) // nothing served yet: this is the version to approve
		}
		t.Pending, t.PendingDigest, t.PendingNames = f.Grants, p.Digest, namesOf(f)
		if t.Approved != nil {
			p.Beyond = Beyond(f.Grants, *t.Approved)
			p.NewNames = fresh
		}
		p.Outcome = Pending
	}
}

// lockPath is the path the lock records for p, a file named on the
// command line (relative paths: the working directory's). The lock's
// relative paths are the tools directory's, so a file inside dir is
// recorded relative to it (the directory stays movable) and any other
// file by its absolute path. "" stays "".
func lockPath(dir, p string) (string, error) {
	if p == "" {
		return "", nil
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(absDir, abs); err == nil && filepath.IsLocal(rel) {
		return rel, nil
	}
	return abs, nil
}

// sameKey reports whether the lock paths a and b (relative paths: dir's)
// name one public key: the same path, or files holding the same key. A
// re-pull naming the key an entry already has keeps the window the
// operator set for it.
func sameKey(dir, a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if a == b {
		return true
	}
	fp := func(p string) string {
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		pem, err := os.ReadFile(p)
		if err != nil {
			return ""
		}
		f, err := signing.PublicKeyFingerprint(pem)
		if err != nil {
			return ""
		}
		return f
	}
	fa := fp(a)
	return fa != "" && fa == fp(b)
}
