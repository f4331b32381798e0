package pull

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/wasmcp/wasmcp/internal/regfile"
	"github.com/wasmcp/wasmcp/pull/oci"
)

// Source is where pulled tools come from; *oci.Client is one.
type Source interface {
	Resolve(ctx context.Context, ref oci.Ref) (string, error)
	FetchManifest(ctx context.Context, ref oci.Ref, dgst string) ([]byte, error)
	FetchBlob(ctx context.Context, ref oci.Ref, what string, d ocispec.Descriptor, limit int64) ([]byte, error)
	Signatures(ctx context.Context, ref oci.Ref, dgst string) ([]oci.Signature, error)
	MaxModule() int64
}

// Verifier checks the signatures found for the manifest digest against
// the tool's expected signer (paths relative to dir) and names the
// signer; Verify in verify.go is the one serve uses.
type Verifier func(ctx context.Context, sigs []oci.Signature, dgst string, t *Tool, dir string) (signer string, err error)

// Check names the check a refused tool failed.
type Check string

// The checks, in the order they are made.
const (
	CheckReference Check = "reference"
	CheckRegistry  Check = "registry"  // the registry could not be reached, or answered an error
	CheckManifest  Check = "manifest"  // not a module's manifest: media types, layers, declared sizes
	CheckDigest    Check = "digest"    // content that does not hash to its digest
	CheckSignature Check = "signature" // unsigned, or no signature verifies for the expected signer
	CheckPolicy    Check = "policy"    // the policy layer does not parse
	CheckDescribe  Check = "describe"  // the module's describe failed: its names are unknown
	CheckApproval  Check = "approval"  // asks for grants or names the operator did not approve
	CheckRollback  Check = "rollback"  // a tag moved back to a version the lock replaced
)

// CheckError is a refusal, naming the check that failed.
type CheckError struct {
	Check Check
	Err   error
}

func (e *CheckError) Error() string { return string(e.Check) + " check failed: " + e.Err.Error() }
func (e *CheckError) Unwrap() error { return e.Err }

func refuse(c Check, err error) error { return &CheckError{Check: c, Err: err} }

// classify names the check of a fetch error.
func classify(err error) error {
	var de *oci.DigestError
	var se *oci.SizeError
	switch {
	case errors.As(err, &de):
		return refuse(CheckDigest, err)
	case errors.As(err, &se):
		return refuse(CheckManifest, err)
	}
	return refuse(CheckRegistry, err)
}

// Fetched is a tool version that passed every check but approval: its
// manifest, blobs and signature verified.
type Fetched struct {
	Digest string
	Module []byte
	Policy []byte // nil: the module ships none
	Grants []string
	Signer string // "" when unsigned and allowed
	// Names are the names the module declares (NameLines), set by
	// Syncer.describe; nil when not described.
	Names []string
}

// Syncer keeps a tools directory in line with its lock file.
type Syncer struct {
	Dir    string
	Cache  *Cache
	Source Source
	Verify Verifier
	Log    *slog.Logger
	// Refused, when set, hears of each pulled tool refused (besides the
	// log line): its name, the check, the reason and whether a version
	// verified before keeps serving. serve tells the clients with it.
	Refused func(tool, check, reason string, serving bool)
	// Describe, when set, names what a version declares: an update
	// declaring a name not approved (Tool.Names) is pending approval, and
	// an entry without recorded names gets the pinned version's.
	Describe Describer

	mu     sync.Mutex
	served map[string]digest.Digest // tool → SHA-256 of the module installed after it verified
}

// Fetch obtains the version dgst of t, from the cache or else from the
// registry, and verifies it: the manifest's digest and layout, every
// blob's digest, and the signature (unless t allows unsigned). Nothing is
// written to the cache unless all of that passed.
func (s *Syncer) Fetch(ctx context.Context, t *Tool, dgst string) (*Fetched, error) {
	ref, err := oci.ParseRef(t.Reference)
	if err != nil {
		return nil, refuse(CheckReference, err)
	}
	d, err := oci.ParseDigest(dgst)
	if err != nil {
		return nil, refuse(CheckReference, err)
	}
	var toStore [][]byte
	blob := func(what string, desc ocispec.Descriptor, limit int64) ([]byte, error) {
		if b, ok := s.Cache.Blob(desc.Digest); ok && int64(len(b)) == desc.Size {
			return b, nil
		}
		b, err := s.Source.FetchBlob(ctx, ref, what, desc, limit)
		if err != nil {
			return nil, classify(err)
		}
		toStore = append(toStore, b)
		return b, nil
	}
	man, ok := s.Cache.Blob(d)
	if !ok {
		if man, err = s.Source.FetchManifest(ctx, ref, dgst); err != nil {
			return nil, classify(err)
		}
		toStore = append(toStore, man)
	}
	l, err := oci.ParseManifest(man, s.Source.MaxModule())
	if err != nil {
		var se *oci.SizeError
		if errors.As(err, &se) {
			return nil, refuse(CheckManifest, err)
		}
		return nil, refuse(CheckManifest, err)
	}
	if l.Config.MediaType == oci.MediaTypeWasmConfig {
		if _, err := blob("config", l.Config, oci.MaxConfig); err != nil {
			return nil, err
		}
	}
	f := &Fetched{Digest: dgst}
	if f.Module, err = blob("module layer", l.Module, s.Source.MaxModule()); err != nil {
		return nil, err
	}
	if l.Policy != nil {
		if f.Policy, err = blob("policy layer", *l.Policy, oci.MaxPolicy); err != nil {
			return nil, err
		}
	}
	if f.Grants, err = Grants(f.Policy); err != nil {
		return nil, refuse(CheckPolicy, err)
	}
	var sigs []oci.Signature
	if t.RequireSignature() {
		cached, fromCache := s.Cache.Signatures(d)
		sigs = cached
		if fromCache {
			f.Signer, err = s.Verify(ctx, sigs, dgst, t, s.Dir)
		}
		if !fromCache || err != nil {
			fresh, ferr := s.Source.Signatures(ctx, ref, dgst)
			switch {
			case ferr != nil && fromCache:
				return nil, refuse(CheckSignature, err) // the cached ones failed; the registry says nothing new
			case ferr != nil:
				return nil, classify(fmt.Errorf("signatures: %w", ferr))
			}
			sigs = nil
			for _, sg := range fresh {
				if sg.Skipped != "" {
					s.logger().Warn("pulled tool: a referrer of the manifest is not a readable signature; skipped", "tool", t.Name, "digest", dgst, "source", sg.Source, "reason", sg.Skipped)
				} else {
					sigs = append(sigs, sg) // only readable signatures are cached
				}
			}
			if f.Signer, err = s.Verify(ctx, fresh, dgst, t, s.Dir); err != nil {
				return nil, refuse(CheckSignature, err)
			}
			fromCache = false
		}
		if !fromCache {
			if err := s.Cache.PutSignatures(d, sigs); err != nil {
				return nil, fmt.Errorf("cache: %w", err)
			}
		}
	}
	for _, b := range toStore {
		if err := s.Cache.PutBlob(b); err != nil {
			return nil, fmt.Errorf("cache: %w", err)
		}
	}
	return f, nil
}

// describe sets f.Names with s.Describe; nothing when s.Describe is nil
// or f was described already.
func (s *Syncer) describe(ctx context.Context, t *Tool, f *Fetched) error {
	if s.Describe == nil || f.Names != nil {
		return nil
	}
	names, err := s.Describe(ctx, t.Name, f.Module, f.Policy)
	if err != nil {
		return refuse(CheckDescribe, err)
	}
	if err := checkNamesBound(names); err != nil {
		return refuse(CheckDescribe, err)
	}
	if names == nil {
		names = []string{}
	}
	f.Names = names
	return nil
}

// adoptNames records the names of t's pinned version as approved, for an
// approved entry without names (a lock from before names were recorded):
// the pinned version is the one the operator approved. pf is a version
// already fetched, used when it is the pinned one. t.Names
// stays nil if the pinned version cannot be fetched or described (then
// every name of an update is new).
func (s *Syncer) adoptNames(ctx context.Context, t *Tool, pf *Fetched) {
	var err error
	if pf == nil || pf.Digest != t.Digest {
		pf, err = s.Fetch(ctx, t, t.Digest)
	}
	if err == nil {
		err = s.describe(ctx, t, pf)
	}
	if err != nil {
		s.logger().Warn("pulled tool: the lock records no names and the pinned version could not be described; none approved", "tool", t.Name, "digest", t.Digest, "err", err.Error())
		return
	}
	if pf.Names == nil {
		return
	}
	n := slices.Clone(pf.Names)
	t.Names = &n
	s.logger().Info("pulled tool: the lock records no names; the pinned version's are approved", "tool", t.Name, "digest", t.Digest, "names", printableList(n))
}

// A version's names are recorded in the lock (names, pending_names),
// which every pulled tool of the directory shares and which is read at
// most maxLockBytes: a version may declare at most maxNames names of
// maxNamesBytes in all (TOML may write a byte as six), so that one
// publisher cannot make the lock unreadable.
const (
	maxNames      = 2048
	maxNamesBytes = 64 << 10
)

// checkNamesBound refuses names past maxNames or maxNamesBytes.
func checkNamesBound(names []string) error {
	size := 0
	for _, n := range names {
		size += len(n) + 1
	}
	if len(names) > maxNames || size > maxNamesBytes {
		return fmt.Errorf("it declares %d names of %d bytes in all: more than the %d names of %d bytes a pulled version may declare", len(names), size, maxNames, maxNamesBytes)
	}
	return nil
}

// namesOf is f's names for the lock: nil when f was not described.
func namesOf(f *Fetched) *[]string {
	if f.Names == nil {
		return nil
	}
	n := slices.Clone(f.Names)
	return &n
}

// sameNames reports whether recorded names are f's (both absent when f
// was not described).
func sameNames(recorded *[]string, f *Fetched) bool {
	if recorded == nil || f.Names == nil {
		return (recorded == nil) == (f.Names == nil)
	}
	return equal(*recorded, f.Names)
}

// printableList is lines as one string for a log, each escaped.
func printableList(lines []string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = Printable(l)
	}
	return strings.Join(out, ", ")
}

// logger is s.Log, or a logger that drops everything (wasmcp pull has
// no log: what it skips is in its error when nothing verifies).
func (s *Syncer) logger() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}

// Sync brings the tools directory in line with the lock once: every tool
// is fetched (from the cache when there) and verified at its pinned
// digest and installed when it asks for no more than was approved. With
// follow, a tool pinned through a tag is also resolved again: a new
// version that verifies and asks for no more than was approved replaces
// the old one and the lock is updated; one that asks for more is recorded
// as pending and the old version keeps serving. Every refusal is logged
// with the check that failed. It reports whether files of the tools
// directory changed.
//
// It fails closed. A lock that cannot be read (a typo in revoked_keys, a
// key_not_after that is not RFC 3339) removes every tool installed from
// a lock, by this run or one before (the .NAME.wasmcp-pulled markers):
// nothing can be checked, and a tool just revoked must not keep serving.
// A tool installed from the lock that the lock no longer lists (removed
// while serve was not running, or the lock deleted) is removed too,
// before the listed tools are installed.
func (s *Syncer) Sync(ctx context.Context, follow bool) (changed bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.served == nil {
		s.served = map[string]digest.Digest{}
	}
	lock, err := ReadLock(s.Dir)
	if err != nil {
		for _, name := range s.installed() {
			changed = s.uninstall(name) || changed
		}
		return changed, fmt.Errorf("%w: no pulled tool is served until the lock can be read", err)
	}
	lockChanged := false
	listed := map[string]bool{}
	for i := range lock.Tools {
		listed[lock.Tools[i].Name] = true
	}
	for _, name := range s.installed() {
		if !listed[name] {
			s.logger().Info("pulled tool not in the lock; removed", "tool", name)
			changed = s.uninstall(name) || changed
		}
	}
	for i := range lock.Tools {
		c, lc := s.syncTool(ctx, &lock.Tools[i], follow)
		changed = changed || c
		lockChanged = lockChanged || lc
	}
	if lockChanged {
		err := WriteLockUnchanged(s.Dir, lock)
		switch {
		case errors.Is(err, ErrLockChanged):
			// The check may have taken minutes (a slow registry): what was
			// edited meanwhile wins, and the next check reads it.
			s.logger().Warn("pulled tools: the lock changed during the check; not written over (the next check, SIGHUP or --pull-interval, reads the edit)", "lock", filepath.Join(s.Dir, LockName))
		case err != nil:
			return changed, fmt.Errorf("lock file: %w", err)
		}
	}
	return changed, nil
}

func (s *Syncer) syncTool(ctx context.Context, t *Tool, follow bool) (changed, lockChanged bool) {
	log := s.logger().With("tool", t.Name, "reference", t.Reference)
	if sc := scriptBeside(s.Dir, t.Name); sc != "" {
		// Whether this version verifies or not, and even with a version
		// verified before: its policy would be the script's.
		err := &HandPlacedError{File: sc}
		log.Error("pulled tool refused; not installed over a module placed by hand", "file", sc, "digest", t.Digest, "check", "install", "reason", err.Error())
		s.tell(t.Name, "install", err.Error(), false)
		return s.uninstall(t.Name), false
	}
	f, err := s.Fetch(ctx, t, t.Digest)
	if err == nil && t.Approved == nil {
		err = refuse(CheckApproval, fmt.Errorf("not approved yet: it asks for %v; run wasmcp approve %s", orNothing(f.Grants), t.Name))
	} else if err == nil {
		if beyond := Beyond(f.Grants, *t.Approved); len(beyond) > 0 {
			err = refuse(CheckApproval, fmt.Errorf("asks for %v beyond what was approved; run wasmcp approve %s", beyond, t.Name))
			if !equal(t.Pending, f.Grants) || t.PendingDigest != t.Digest || !sameNames(t.PendingNames, f) {
				t.Pending, t.PendingDigest, t.PendingNames, lockChanged = f.Grants, t.Digest, namesOf(f), true
			}
		}
	}
	if err != nil {
		// A signature refused for the pinned version (a key revoked or
		// expired, another signer named) stops it being served at once;
		// other refusals (a registry down) leave a version verified before.
		var ce *CheckError
		sigRefused := errors.As(err, &ce) && ce.Check == CheckSignature
		if _, ok := s.served[t.Name]; ok && !sigRefused && s.installedIs(t.Name, s.served[t.Name]) {
			log.Error("pulled tool refused; the version verified before keeps serving", "digest", t.Digest, checkAttr(err), "reason", err.Error())
			s.tell(t.Name, checkAttr(err).Value.String(), err.Error(), true)
		} else {
			log.Error("pulled tool refused; not served", "digest", t.Digest, checkAttr(err), "reason", err.Error())
			s.tell(t.Name, checkAttr(err).Value.String(), err.Error(), false)
			changed = s.uninstall(t.Name)
		}
	} else {
		c, ierr := s.install(t.Name, f)
		var hp *HandPlacedError
		switch {
		case errors.As(ierr, &hp):
			log.Error("pulled tool refused; not installed over a module placed by hand", "file", hp.File, "digest", t.Digest, "check", "install", "reason", ierr.Error())
			s.tell(t.Name, "install", ierr.Error(), false)
		case ierr != nil:
			log.Error("pulled tool: installing into the tools directory", "err", ierr)
		}
		changed = c
		if f.Signer != t.Signer {
			t.Signer, lockChanged = f.Signer, true
		}
		if t.Names == nil && s.Describe != nil {
			s.adoptNames(ctx, t, f)
			lockChanged = lockChanged || t.Names != nil
		}
	}
	if !follow {
		return changed, lockChanged
	}
	ref, perr := oci.ParseRef(t.Reference)
	if perr != nil || ref.ValidateReferenceAsDigest() == nil {
		return changed, lockChanged // pinned by digest: nothing to follow
	}
	now, rerr := s.Source.Resolve(ctx, ref)
	if rerr != nil {
		log.Warn("re-pull: the registry did not resolve the tag; the pinned version keeps serving", "err", rerr.Error())
		return changed, lockChanged
	}
	if now == t.Digest {
		return changed, lockChanged
	}
	if err := t.checkRollback(now); err != nil {
		log.Error("update refused: the tag moved back to a version replaced before; the pinned version keeps serving", "digest", now, "pinned", t.Digest,
			"check", string(CheckRollback), "reason", err.Error())
		return changed, lockChanged
	}
	nf, err := s.Fetch(ctx, t, now)
	if err == nil && t.Approved == nil {
		err = refuse(CheckApproval, fmt.Errorf("not approved yet; run wasmcp approve %s", t.Name))
	}
	if err == nil {
		err = s.describe(ctx, t, nf)
	}
	if err == nil {
		beyond := Beyond(nf.Grants, *t.Approved)
		var fresh []string
		if nf.Names != nil {
			fresh = NewNames(nf.Names, t.Names)
		}
		if len(beyond) > 0 || len(fresh) > 0 {
			log.Error("update refused: it asks for more than was approved; the pinned version keeps serving", "digest", now, "pinned", t.Digest,
				"check", string(CheckApproval), "asks", printableList(beyond), "new_names", printableList(fresh), "approve", "wasmcp approve "+t.Name)
			if !equal(t.Pending, nf.Grants) || t.PendingDigest != now || !sameNames(t.PendingNames, nf) {
				t.Pending, t.PendingDigest, t.PendingNames, lockChanged = nf.Grants, now, namesOf(nf), true
			}
			return changed, lockChanged
		}
	}
	if err != nil {
		log.Error("update refused; the pinned version keeps serving", "digest", now, "pinned", t.Digest, checkAttr(err), "reason", err.Error())
		s.tell(t.Name, checkAttr(err).Value.String(), "update refused: "+err.Error(), true)
		return changed, lockChanged
	}
	c, ierr := s.install(t.Name, nf)
	if ierr != nil {
		log.Error("pulled tool: installing into the tools directory", "err", ierr)
		return changed || c, lockChanged
	}
	log.Info("pulled tool updated", "digest", now, "was", t.Digest, "signer", nf.Signer)
	t.moveTo(now)
	t.Signer, t.Pending, t.PendingDigest, t.PendingNames = nf.Signer, nil, "", nil
	return changed || c, true
}

func orNothing(g []string) any {
	if len(g) == 0 {
		return "nothing beyond the defaults"
	}
	return g
}

func checkAttr(err error) slog.Attr {
	var ce *CheckError
	if errors.As(err, &ce) {
		return slog.String("check", string(ce.Check))
	}
	return slog.String("check", "install")
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Files of a tool in the tools directory.
func (s *Syncer) wasmPath(name string) string   { return filepath.Join(s.Dir, name+".wasm") }
func (s *Syncer) markerPath(name string) string { return markerPath(s.Dir, name) }

// markerPath is the hidden file saying NAME.wasm in dir was installed
// from the lock (the registry ignores dot files).
func markerPath(dir, name string) string { return filepath.Join(dir, "."+name+markerSuffix) }

const markerSuffix = ".wasmcp-pulled"

// Installed lists the tools of dir installed from a lock, by this run or
// one before: the names of its .NAME.wasmcp-pulled markers.
func Installed(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, ".") || !strings.HasSuffix(n, markerSuffix) {
			continue
		}
		if name := strings.TrimSuffix(n[1:], markerSuffix); CheckName(name) == nil {
			out = append(out, name)
		}
	}
	return out
}

// installed is Installed and the tools this run installed, sorted.
func (s *Syncer) installed() []string {
	names := Installed(s.Dir)
	for name := range s.served {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// tell hands a refusal to Refused, when set.
func (s *Syncer) tell(tool, check, reason string, serving bool) {
	if s.Refused != nil {
		s.Refused(tool, check, reason, serving)
	}
}

// HandPlacedError is a pulled tool refused because a module of its name,
// not installed from the lock, is in the tools directory.
type HandPlacedError struct{ File string }

func (e *HandPlacedError) Error() string {
	return fmt.Sprintf("%s is in the tools directory and was not installed by wasmcp from %s (placed by hand?): the pulled tool is not installed over it; rename one of them", e.File, LockName)
}

// scriptExts are the extensions of the scripts the tools directory loads
// (registry.IsScript): NAME.js or NAME.ts shares NAME.policy.toml with
// NAME.wasm, so a pulled NAME beside one would hand it the pulled grants.
var scriptExts = []string{".js", ".ts"}

// scriptBeside returns the script NAME.js or NAME.ts in dir, "" if none.
// wasmcp never installs one: it is always placed by hand.
func scriptBeside(dir, name string) string {
	for _, ext := range scriptExts {
		p := filepath.Join(dir, name+ext)
		if _, err := os.Lstat(p); err == nil {
			return p
		}
	}
	return ""
}

// CheckUnowned refuses a name whose module file in dir exists and was
// not installed from the lock, or that a script in dir has (NAME.js or
// NAME.ts, which shares NAME.policy.toml).
func CheckUnowned(dir, name string) error {
	if sc := scriptBeside(dir, name); sc != "" {
		return &HandPlacedError{File: sc}
	}
	p := filepath.Join(dir, name+".wasm")
	if _, err := os.Stat(p); err != nil {
		return nil
	}
	if _, err := os.Stat(markerPath(dir, name)); err == nil {
		return nil
	}
	return &HandPlacedError{File: p}
}

// owns reports whether NAME.wasm, if there, may be written by the lock's
// tool: this process installed it, the marker says a run before did, or
// it already holds the verified module (adopted: a tools directory from
// before the markers).
func (s *Syncer) owns(name string, module []byte) bool {
	if _, ok := s.served[name]; ok {
		return true
	}
	if _, err := os.Stat(s.markerPath(name)); err == nil {
		return true
	}
	b, err := regfile.Read(s.wasmPath(name), maxModuleBytes)
	return err != nil || bytes.Equal(b, module)
}
func (s *Syncer) policyPath(name string) string { return filepath.Join(s.Dir, name+".policy.toml") }

// The caps of the installed files the syncer reads back, the registry's
// (registry.MaxModuleBytes, registry.MaxPolicyBytes): each is read by
// regfile, without blocking on a FIFO put in its place, and must be a
// regular file.
const (
	maxModuleBytes = 256 << 20
	maxPolicyBytes = 1 << 20
)

// installedIs reports whether NAME.wasm holds the module of hash h.
func (s *Syncer) installedIs(name string, h digest.Digest) bool {
	b, err := regfile.Read(s.wasmPath(name), maxModuleBytes)
	return err == nil && digest.FromBytes(b) == h
}

// install writes a verified version's files (the policy first, then the
// module, each renamed into place) when they differ from what is there.
func (s *Syncer) install(name string, f *Fetched) (changed bool, err error) {
	if sc := scriptBeside(s.Dir, name); sc != "" {
		// Installed beside a script, the pulled policy would be the
		// script's too: refused, and a version installed before removed.
		return s.uninstall(name), &HandPlacedError{File: sc}
	}
	if !s.owns(name, f.Module) {
		return false, &HandPlacedError{File: s.wasmPath(name)}
	}
	if err := writeAtomic(s.markerPath(name), nil, 0o644); err != nil {
		return false, err
	}
	pp := s.policyPath(name)
	old, rerr := regfile.Read(pp, maxPolicyBytes)
	_, lerr := os.Lstat(pp)
	switch {
	case f.Policy == nil && lerr == nil:
		if err := os.Remove(pp); err != nil {
			return false, err
		}
		changed = true
	case f.Policy != nil && (rerr != nil || !bytes.Equal(old, f.Policy)):
		if err := writeAtomic(pp, f.Policy, 0o644); err != nil {
			return false, err
		}
		changed = true
	}
	h := digest.FromBytes(f.Module)
	if !s.installedIs(name, h) {
		if err := writeAtomic(s.wasmPath(name), f.Module, 0o644); err != nil {
			return changed, err
		}
		changed = true
	}
	s.served[name] = h
	return changed, nil
}

// uninstall removes a tool's files from the tools directory, when they
// were installed from the lock: never a module of that name placed by hand.
func (s *Syncer) uninstall(name string) bool {
	_, served := s.served[name]
	delete(s.served, name)
	if _, err := os.Stat(s.markerPath(name)); err != nil && !served {
		return false
	}
	defer os.Remove(s.markerPath(name))
	changed := false
	for _, p := range []string{s.wasmPath(name), s.policyPath(name)} {
		if err := os.Remove(p); err == nil {
			changed = true
		} else if !errors.Is(err, fs.ErrNotExist) {
			s.logger().Error("pulled tool: removing a file of a refused tool", "file", p, "err", err)
		}
	}
	return changed
}
