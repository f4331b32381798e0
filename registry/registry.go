// Package registry keeps the modules of a tools directory loaded: it
// compiles every .wasm file in the directory through a host.Engine, builds
// the protocol catalog from them and installs it on the protocol.Server.
//
// While serving, Watch follows the directory (hot reload): a new or changed
// module is compiled and validated off the request path and only then
// swapped in with one atomic catalog swap; a module that fails to load is
// refused and its previous version keeps serving; a deleted module's tools,
// resources and prompts go away. Calls already running finish on the
// version they started with: the registry counts the calls running on each
// module and closes a replaced module only after its last call ends.
package registry

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/protocol"
)

// Registry maps the files of one tools directory to loaded modules. It is
// safe for concurrent use. Files load concurrently (at most maxLoads at
// once; compilations are bounded by the engine); one file is never loaded
// by two syncs at once, and no lock is held while a module loads, so a slow
// module never holds up another's load or a reload.
type Registry struct {
	dir    string
	engine *host.Engine
	srv    *protocol.Server
	log    *slog.Logger

	// syncMu guards the sync bookkeeping below; it is never held while a
	// module loads, and the request path never takes it.
	syncMu  sync.Mutex
	refused map[string]refusal // files refused as they are now
	busy    map[string]bool    // files being loaded now
	// retrying counts, by file, the loads a busy machine cut in a row
	// (host.Transient): the file is loaded again after a backoff.
	retrying map[string]int

	mu       sync.Mutex
	modules  map[string]*entry // by file name; guarded by mu
	retiring []*module         // replaced or removed, to retire once a catalog without them is out; guarded by mu
	dirty    bool              // modules changed since the last publish; guarded by mu
	closed   bool              // Close was called; guarded by mu
	pubTimer *time.Timer       // a publishSoon pending; guarded by mu

	pubMu        sync.Mutex                   // serializes publish
	published    atomic.Bool                  // a catalog was published
	conflicts    map[protocol.Conflict]bool   // reported to clients; guarded by pubMu
	conflictFile map[protocol.Conflict]string // the refused file of each; guarded by pubMu
	started      atomic.Bool                  // the initial load ended: later loads warm their modules up
	ready        chan struct{}
	readyOnce    sync.Once
	loads        chan struct{} // bounds the files loading at once

	// pulledCheck, when set (SetPulledCheck, before Load), judges every
	// pulled module once opened.
	pulledCheck func(module string, d *abi.Description) error

	index    *statIndex   // file stats to hashes, across restarts (index.go)
	skills   skillsState  // the skills directory (skills.go)
	open     atomic.Int64 // modules loaded and not yet closed
	observer Observer     // guarded by syncMu
}

// maxLoads bounds the files read, hashed and loaded at once.
const maxLoads = 8

// entry is the loaded version of one file.
type entry struct {
	mod    *module
	wasm   string // hex SHA-256 of the module bytes
	policy string // hex SHA-256 of its policy file, "-" when it has none
	stat   fileStat
	statAt time.Time // when stat was taken (the index's racy rule)
}

// New creates a registry for dir. Nothing is loaded until Load.
func New(dir string, engine *host.Engine, srv *protocol.Server, log *slog.Logger) *Registry {
	if log == nil {
		log = slog.Default()
	}
	return &Registry{dir: dir, engine: engine, srv: srv, log: log, modules: map[string]*entry{}, refused: map[string]refusal{},
		retrying: map[string]int{}, busy: map[string]bool{}, ready: make(chan struct{}), loads: make(chan struct{}, maxLoads),
		index: newStatIndex(dir, engine.CacheDir(), log)}
}

// SetPulledCheck sets the check every pulled module (a pull marker beside
// its file) passes once opened, before it can be published: an error
// refuses the module as it is (logged, in wasmcp status, and sent to the
// clients that asked for logs), as a refusal at load. Serve uses it to
// hold a pulled module to the names the operator approved. Call it before
// Load.
func (r *Registry) SetPulledCheck(check func(module string, d *abi.Description) error) {
	r.pulledCheck = check
}

// getObserver returns the observer, if any.
func (r *Registry) getObserver() Observer {
	r.syncMu.Lock()
	defer r.syncMu.Unlock()
	return r.observer
}

// Ready is closed once the first catalog is published.
func (r *Registry) Ready() <-chan struct{} { return r.ready }

// ModuleName is the module name of a file: its base name without .wasm
// (or, for a script, without .js or .ts).
func ModuleName(file string) string {
	base := filepath.Base(file)
	if IsScript(base) {
		return strings.TrimSuffix(base, filepath.Ext(base))
	}
	return strings.TrimSuffix(base, ".wasm")
}

// LoadFile compiles, describes and validates one module file with the
// policy found beside it.
func LoadFile(ctx context.Context, engine *host.Engine, path string) (*host.Module, error) {
	pol, err := LoadPolicy(path)
	if err != nil {
		return nil, err
	}
	wasm, pol, err := readModule(ctx, engine, path, pol)
	if err != nil {
		return nil, err
	}
	return engine.Load(ctx, ModuleName(path), wasm, pol)
}

// DescribeFile returns the description of one module file (with the
// policy found beside it), as the registry opens it: from the
// description cache when there, otherwise compiled and described. The
// module is closed before it returns.
func DescribeFile(ctx context.Context, engine *host.Engine, path string) (*abi.Description, error) {
	pol, err := LoadPolicy(path)
	if err != nil {
		return nil, err
	}
	wasm, pol, err := readModule(ctx, engine, path, pol)
	if err != nil {
		return nil, err
	}
	m, err := engine.Open(ctx, ModuleName(path), wasm, "", pol, func() ([]byte, error) { return wasm, nil })
	if err != nil {
		return nil, err
	}
	defer m.Close(context.Background())
	return m.Description(), nil
}

// LoadFileWithPolicy loads one module file as LoadFile does, under the
// policy file policyFile instead of the one beside it; that file must
// exist. Relative paths in it (mounts, ca_bundle) are taken from its
// directory.
func LoadFileWithPolicy(ctx context.Context, engine *host.Engine, path, policyFile string) (*host.Module, error) {
	data, err := readPolicyFile(policyFile)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	pol, err := ParsePolicy(data, filepath.Dir(policyFile), os.LookupEnv)
	if err != nil {
		return nil, fmt.Errorf("policy %s: %w", policyFile, err)
	}
	wasm, pol, err := readModule(ctx, engine, path, pol)
	if err != nil {
		return nil, err
	}
	return engine.Load(ctx, ModuleName(path), wasm, pol)
}

// Load loads every module in the directory and publishes the catalog. A
// module that fails to load is logged and skipped; Load fails only if the
// directory cannot be read.
func (r *Registry) Load(ctx context.Context) error {
	return r.Reload(ctx)
}

// Reload brings the registry in line with the directory once: new and
// changed files are loaded, deleted ones removed, and the catalog is
// published if anything changed (the SIGHUP action). Files refused before
// are tried again even if unchanged. A file that is still being written is
// retried a few times, one settle window apart.
func (r *Registry) Reload(ctx context.Context) error {
	files, err := r.scan()
	if err != nil {
		return err
	}
	files = r.withLoaded(files)
	r.syncSkills(ctx)
	r.syncMu.Lock()
	clear(r.refused) // an explicit reload tries refused files again
	r.syncMu.Unlock()
	defer r.started.Store(true)
	for try := 1; ; {
		var busy []string
		files, busy = r.sync(ctx, files)
		if len(files) > 0 {
			try++ // a file loading in another sync is waited for, not counted
		}
		files = append(files, busy...)
		if len(files) == 0 {
			return nil
		}
		if try == maxUnstableTries {
			for _, f := range files {
				r.log.Warn("module file keeps changing; not loaded", "file", filepath.Join(r.dir, f))
			}
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(DefaultSettle):
		}
	}
}

// maxUnstableTries bounds Reload's retries of a file still being written.
const maxUnstableTries = 20

// Close closes every loaded module once its running calls end. The
// registry must not be used afterwards.
// A load still under way is not waited for: its module is closed when it
// ends.
func (r *Registry) Close() {
	r.mu.Lock()
	mods := r.modules
	r.modules = map[string]*entry{}
	r.closed = true
	r.mu.Unlock()
	for _, e := range mods {
		e.mod.retire()
	}
}

// Modules returns the loaded modules by file name.
func (r *Registry) Modules() map[string]*host.Module {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]*host.Module, len(r.modules))
	for f, e := range r.modules {
		out[f] = e.mod.Module
	}
	return out
}

// moduleFile reports whether a directory entry name is a module file.
// Hidden files (a leading '.') are never loaded, so a deploy may write
// ".name.wasm" and rename it to "name.wasm".
func moduleFile(name string) bool {
	if strings.HasPrefix(name, ".") {
		return false
	}
	if IsScript(name) {
		return len(name) > len(".js")
	}
	return strings.HasSuffix(name, ".wasm") && len(name) > len(".wasm")
}

// policySuffix ends the name of a module's policy file.
const policySuffix = ".policy.toml"

// fileFor maps a directory entry name to the module file it concerns: the
// module itself, or the module a policy file belongs to; "" for anything
// else.
//
// A policy belongs to NAME.wasm, or to NAME.js or NAME.ts when one of
// those is in dir and NAME.wasm is not.
func fileFor(dir, name string) string {
	switch {
	case strings.HasPrefix(name, "."):
		return ""
	case strings.HasSuffix(name, policySuffix):
		stem := strings.TrimSuffix(name, policySuffix)
		if _, err := os.Stat(filepath.Join(dir, stem+".wasm")); err != nil {
			for _, ext := range scriptExts {
				if _, err := os.Stat(filepath.Join(dir, stem+ext)); err == nil {
					return stem + ext
				}
			}
		}
		if f := stem + ".wasm"; moduleFile(f) {
			return f
		}
	case moduleFile(name):
		return name
	}
	return ""
}

// scan lists the module files of the directory (top level only; regular
// files and symbolic links to them).
func (r *Registry) scan() ([]string, error) {
	ents, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, fmt.Errorf("tools directory: %w", err)
	}
	var files []string
	for _, e := range ents {
		if !moduleFile(e.Name()) {
			continue
		}
		if e.Type().IsRegular() {
			files = append(files, e.Name())
		} else if e.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(filepath.Join(r.dir, e.Name())); err == nil && st.Mode().IsRegular() {
				files = append(files, e.Name())
			}
		}
	}
	sort.Strings(files)
	return files, nil
}

// withLoaded adds the loaded files to files (so that deleted ones are
// synced too), sorted and without duplicates.
func (r *Registry) withLoaded(files []string) []string {
	seen := make(map[string]bool, len(files))
	for _, f := range files {
		seen[f] = true
	}
	r.mu.Lock()
	for f := range r.modules {
		if !seen[f] {
			files = append(files, f)
		}
	}
	r.mu.Unlock()
	sort.Strings(files)
	return files
}

// current is the loaded module of a file, nil if none.
func (r *Registry) current(file string) *module {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.modules[file]; ok {
		return e.mod
	}
	return nil
}

// outcome is what syncing one file did.
type outcome int

const (
	unchanged outcome = iota // nothing to do, or refused (the old version stays)
	loaded                   // a new version is ready to swap in
	removed                  // the file is gone
	unstable                 // the file changed while it was read or compiled: retry later
)

// sync loads, replaces or removes the given files, concurrently, and
// publishes the catalog: as loads finish (so a slow module does not hold
// back the others), and once more when they all have. A replaced or
// removed module is retired once a catalog without it is out. sync returns
// the files that were still changing, to be synced again later, and those
// another sync is loading now. It returns early when ctx is done; the
// loads under way then finish on their own.
func (r *Registry) sync(ctx context.Context, files []string) (retry, busy []string) {
	var (
		wg  sync.WaitGroup
		rmu sync.Mutex
	)
	for _, f := range files {
		r.syncMu.Lock()
		if r.busy[f] {
			r.syncMu.Unlock()
			busy = append(busy, f)
			continue
		}
		r.busy[f] = true
		r.syncMu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				r.syncMu.Lock()
				delete(r.busy, f)
				r.syncMu.Unlock()
			}()
			select {
			case r.loads <- struct{}{}:
			case <-ctx.Done():
				return
			}
			out, e := r.syncFile(ctx, f)
			<-r.loads
			if out == unstable {
				rmu.Lock()
				retry = append(retry, f)
				rmu.Unlock()
				return
			}
			if r.apply(f, out, e) {
				r.publishSoon()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		return nil, nil
	}
	r.mu.Lock()
	dirty := r.dirty
	r.mu.Unlock()
	if dirty || !r.published.Load() {
		r.publish()
		if obs := r.getObserver(); obs != nil {
			obs.CatalogPublished()
		}
	}
	r.mu.Lock()
	mods := maps.Clone(r.modules)
	r.mu.Unlock()
	r.index.save(mods)
	slices.Sort(retry)
	return retry, busy
}

// apply swaps in or removes a file's module; it reports whether the
// modules changed.
func (r *Registry) apply(f string, out outcome, e *entry) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		if e != nil {
			go e.mod.retire()
		}
		return false
	}
	old := r.modules[f]
	switch out {
	case loaded:
		r.modules[f] = e
		if old != nil {
			r.retiring = append(r.retiring, old.mod)
			r.log.Info("module replaced", "file", filepath.Join(r.dir, f), "sha256", e.mod.Hash()[:12], "was", old.mod.Hash()[:12])
		} else {
			r.log.Info("module added", "file", filepath.Join(r.dir, f), "sha256", e.mod.Hash()[:12])
		}
	case removed:
		if old == nil {
			return false
		}
		delete(r.modules, f)
		r.retiring = append(r.retiring, old.mod)
		r.log.Info("module removed", "file", filepath.Join(r.dir, f))
	default:
		return false
	}
	r.dirty = true
	return true
}

// publishDelay coalesces the catalogs published while loads finish.
const publishDelay = 50 * time.Millisecond

// publishSoon publishes a catalog within publishDelay, once for all the
// changes made meanwhile.
func (r *Registry) publishSoon() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pubTimer == nil {
		r.pubTimer = time.AfterFunc(publishDelay, func() {
			r.mu.Lock()
			r.pubTimer = nil
			dirty := r.dirty
			r.mu.Unlock()
			if dirty {
				r.publish()
			}
		})
	}
}

// syncFile reads and, if it changed, loads one file. A file whose stat is
// the one the index recorded with its hash is not read: the module is
// listed from the engine's cache when it holds the module (OpenKnown).
func (r *Registry) syncFile(ctx context.Context, file string) (outcome, *entry) {
	s := &fileSync{r: r, file: file, path: filepath.Join(r.dir, file), script: IsScript(file)}
	r.mu.Lock()
	old := r.modules[file]
	r.mu.Unlock()
	if out, changed := s.check(old); !changed {
		return out, nil
	}
	var known bool
	s.sum, known = r.index.lookup(file, s.st)
	if s.script {
		// A script's module hash depends on the runner too: it is
		// always read (scripts are small).
		known = false
	}
	if !known {
		if out, ok := s.read(ctx); !ok {
			return out, nil
		}
	}
	if old != nil && old.wasm == s.sum && old.policy == s.pol {
		s.keep(old)
		return unchanged, nil
	}
	m, out, ok := s.open(ctx, known)
	if !ok {
		return out, nil
	}
	return s.entry(ctx, m)
}

// fileSync is one syncFile run: the file, its stat and policy hash when
// the run began, and once read its bytes (a script's: its module), its
// module hash and a script's environment.
type fileSync struct {
	r         *Registry
	file      string // relative to the registry's directory
	path      string
	script    bool
	st        fileStat
	statAt    time.Time
	pol       string // hashHex of the policy file
	sum       string // the module hash
	wasm      []byte // nil until read
	scriptEnv []host.EnvVar
}

// check stats the file and hashes its policy file. changed false ends
// the run with out: removed, or unchanged (a stat error; refused as it
// is; loaded as it is).
func (s *fileSync) check(old *entry) (out outcome, changed bool) {
	r := s.r
	s.statAt = time.Now()
	st, err := statFile(s.path)
	if errors.Is(err, fs.ErrNotExist) || (err == nil && !st.regular) {
		r.forgetRefusal(s.file)
		return removed, false
	}
	if err != nil {
		r.log.Error("module refused", "file", s.path, "reason", err.Error())
		return unchanged, false
	}
	s.st = st
	polBytes, err := readPolicyFile(PolicyFile(s.path))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		out, _ = r.refuse(s.file, st, "", fmt.Errorf("policy file: %w", err))
		return out, false
	}
	s.pol = hashHex(polBytes)
	r.syncMu.Lock()
	rf, isRefused := r.refused[s.file]
	r.syncMu.Unlock()
	if isRefused && rf == (refusal{st, s.pol}) {
		return unchanged, false // refused as it is; it must change to be tried again
	}
	r.mu.Lock()
	same := old != nil && old.stat == st && old.policy == s.pol
	r.mu.Unlock()
	if same && s.script && scriptStale(s.path) {
		same = false // node_modules beside it changed
	}
	return unchanged, !same
}

// read reads and hashes the file (a script: its module). ok false ends
// the run with out: the refusal of a read that failed, or unstable when
// the file changed while read.
func (s *fileSync) read(ctx context.Context) (out outcome, ok bool) {
	var err error
	if s.wasm, err = readModuleFile(s.path); err != nil {
		return s.refuse(err), false
	}
	if s.script {
		if s.wasm, s.scriptEnv, err = scriptModule(ctx, s.r.engine, s.path, s.wasm); err != nil {
			if host.Transient(err) && s.r.stable(s.path, s.st) {
				out, _ := s.r.retryLater(ctx, s.file, err)
				return out, false
			}
			return s.refuse(err), false
		}
	}
	if !s.r.stable(s.path, s.st) {
		return unstable, false
	}
	s.sum = host.ModuleHash(s.wasm)
	return loaded, true
}

// keep records the new stat of a file touched, or written again with the
// same bytes: the loaded version keeps serving.
func (s *fileSync) keep(old *entry) {
	s.r.mu.Lock()
	old.stat, old.statAt = s.st, s.statAt
	s.r.mu.Unlock()
	s.r.forgetRefusal(s.file)
}

// open loads the policy and opens the module: from the engine's cache
// when the index knows it (OpenKnown), else from its bytes, read now if
// they were not. ok false ends the run with out.
func (s *fileSync) open(ctx context.Context, known bool) (m *host.Module, out outcome, ok bool) {
	r := s.r
	p, err := LoadPolicy(s.path)
	if err != nil {
		return nil, s.refuse(fmt.Errorf("policy: %w", err)), false
	}
	t0 := time.Now()
	if s.script {
		p = withScriptEnv(p, s.scriptEnv)
	}
	opened := false
	if known {
		m, opened, err = r.engine.OpenKnown(ctx, ModuleName(s.file), s.sum, p, s.source())
		if opened && err == nil {
			r.log.Debug("module listed from the tools index, not read", "file", s.path)
		}
	}
	if !opened {
		if s.wasm == nil {
			if out, ok := s.read(ctx); !ok {
				return nil, out, false
			}
		}
		m, err = r.engine.Open(ctx, ModuleName(s.file), s.wasm, s.sum, p, s.source())
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, unstable, false // shutting down: not the module's fault
		}
		if host.Transient(err) && r.stable(s.path, s.st) {
			out, _ := r.retryLater(ctx, s.file, err)
			return nil, out, false
		}
		return nil, s.refuse(err), false
	}
	if r.pulledCheck != nil && !s.script && isPulled(r.dir, s.file) {
		if err := r.pulledCheck(m.Name(), m.Description()); err != nil {
			_ = m.Close(ctx)
			return nil, s.refuse(err), false
		}
	}
	if obs := r.getObserver(); obs != nil {
		obs.ModuleLoaded(m.Name(), time.Since(t0), int(s.st.size))
	}
	return m, loaded, true
}

// source is how the engine reads the module's bytes again when it needs
// them (a script: compiled to its module again). It holds the path, not
// the run, so no bytes stay reachable through it.
func (s *fileSync) source() func() ([]byte, error) {
	path, engine := s.path, s.r.engine
	if !s.script {
		return func() ([]byte, error) { return readModuleFile(path) }
	}
	return func() ([]byte, error) {
		b, err := readModuleFile(path)
		if err != nil {
			return nil, err
		}
		wasm, _, err := scriptModule(context.Background(), engine, path, b)
		return wasm, err
	}
}

// entry hands back the opened module as the file's new entry, unless the
// file changed while it compiled.
func (s *fileSync) entry(ctx context.Context, m *host.Module) (outcome, *entry) {
	r := s.r
	if !r.stable(s.path, s.st) {
		_ = m.Close(ctx)
		return unstable, nil
	}
	r.forgetRefusal(s.file)
	if r.started.Load() && !m.Compiled() {
		// A module deployed while serving is about to be called: compile
		// it now, while the catalog goes out (its first call waits for
		// this compilation rather than starting one). At start-up modules
		// compile on their first call instead. Without the bytes (known
		// from the index) it compiles from the engine's copy.
		m.WarmUp(s.wasm)
	}
	r.open.Add(1)
	return loaded, &entry{mod: &module{Module: m, file: s.file, reg: r}, wasm: s.sum, policy: s.pol, stat: s.st, statAt: s.statAt}
}

// refuse refuses the file as this run saw it (Registry.refuse) and
// returns the run's outcome.
func (s *fileSync) refuse(err error) outcome {
	out, _ := s.r.refuse(s.file, s.st, s.pol, err)
	return out
}

// forgetRefusal clears a file's refusal: it is gone, or it loaded.
func (r *Registry) forgetRefusal(file string) {
	r.syncMu.Lock()
	delete(r.refused, file)
	r.syncMu.Unlock()
	r.doneRetrying(file)
	r.refusedNow(file, "", false)
}

// refusal is the state of a file that was refused: it is not tried again
// until the file or its policy changes, or Reload is called.
type refusal struct {
	stat   fileStat
	policy string
}

// refuse logs why a file was not loaded, unless the file changed meanwhile
// (a write still in progress), in which case it is retried.
func (r *Registry) refuse(file string, st fileStat, pol string, err error) (outcome, *entry) {
	path := filepath.Join(r.dir, file)
	if !r.stable(path, st) {
		return unstable, nil
	}
	r.syncMu.Lock()
	r.refused[file] = refusal{st, pol}
	obs := r.observer
	r.syncMu.Unlock()
	r.doneRetrying(file)
	if obs != nil {
		obs.ModuleRefused()
	}
	reason := err.Error()
	var ge *host.GuestError
	if errors.As(err, &ge) {
		reason = ge.Msg
	}
	if old := r.current(file); old != nil {
		r.log.Error("module refused; the previous version keeps serving", "file", path, "reason", reason, "serving", old.Hash()[:12])
	} else {
		r.log.Error("module refused", "file", path, "reason", reason)
	}
	r.srv.Warn(map[string]string{"event": "module_refused", "file": file, "reason": reason})
	r.refusedNow(file, reason, true)
	return unchanged, nil
}

// retryFirst and retryMax bound the backoff between loads of a file that a
// busy machine cut (host.Transient).
var (
	retryFirst = time.Second
	retryMax   = time.Minute
)

// retryLater schedules another load of a file whose load a busy machine cut
// (a run at load reached the wall-clock ceiling with its guest under its
// own deadline): it is not refused, and is loaded again after a backoff
// (1 s, doubling, at most a minute) until it loads or is refused for a
// reason of its own. `wasmcp status` shows it as retrying meanwhile.
func (r *Registry) retryLater(ctx context.Context, file string, err error) (outcome, *entry) {
	r.syncMu.Lock()
	n := r.retrying[file] + 1
	r.retrying[file] = n
	obs := r.observer
	r.syncMu.Unlock()
	if ro, ok := obs.(RetryObserver); ok {
		ro.ModuleRetrying(ModuleName(file), true)
	}
	delay := retryMax
	if n <= 10 {
		delay = min(retryFirst<<(n-1), retryMax)
	}
	reason := err.Error()
	var ge *host.GuestError
	if errors.As(err, &ge) {
		reason = ge.Msg
	}
	r.log.Warn("module load cut by a busy machine; retrying", "file", filepath.Join(r.dir, file), "reason", reason,
		"attempt", n, "in", delay)
	time.AfterFunc(delay, func() {
		r.mu.Lock()
		closed := r.closed
		r.mu.Unlock()
		if ctx.Err() != nil || closed {
			return
		}
		r.sync(ctx, []string{file})
	})
	return unchanged, nil
}

// doneRetrying ends a file's retries: it loaded, was refused or is gone.
func (r *Registry) doneRetrying(file string) {
	r.syncMu.Lock()
	_, was := r.retrying[file]
	delete(r.retrying, file)
	obs := r.observer
	r.syncMu.Unlock()
	if ro, ok := obs.(RetryObserver); ok && was {
		ro.ModuleRetrying(ModuleName(file), false)
	}
}

// Retrying returns the files whose load a busy machine cut and that are
// to be loaded again, with the loads cut in a row.
func (r *Registry) Retrying() map[string]int {
	r.syncMu.Lock()
	defer r.syncMu.Unlock()
	return maps.Clone(r.retrying)
}

// stable reports whether the file still has the stat it had when reading
// began.
func (r *Registry) stable(path string, st fileStat) bool {
	now, err := statFile(path)
	return err == nil && now == st
}

func hashHex(b []byte) string {
	if b == nil {
		return "-"
	}
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// fileStat is what tells two versions of a file apart without reading it.
type fileStat struct {
	regular bool
	mode    fs.FileMode // a permission change may make a refused file readable
	size    int64
	mtime   int64 // Unix nanoseconds
	ctime   int64 // inode change time, Unix nanoseconds; 0 where unknown
	dev     uint64
	ino     uint64
}

func statFile(path string) (fileStat, error) {
	st, err := os.Stat(path)
	if err != nil {
		return fileStat{}, err
	}
	dev, ino, ctime := sysStat(st)
	return fileStat{regular: st.Mode().IsRegular(), mode: st.Mode(), size: st.Size(), mtime: st.ModTime().UnixNano(),
		ctime: ctime, dev: dev, ino: ino}, nil
}

// publish builds a catalog from the loaded modules and installs it over
// the one served (protocol.NewCatalogOver): a name served stays with its
// module; a module declaring it is refused. Among newcomers hand-placed
// modules come before pulled ones, then file names decide, so the owners
// after a restart do not depend on the order files arrived in.
//
// After the swap no new call finds the retired modules in the catalog;
// each closes when its last running call ends.
func (r *Registry) publish() {
	r.pubMu.Lock()
	r.mu.Lock()
	mods := make([]protocol.Module, 0, len(r.modules))
	for _, e := range r.modules {
		mods = append(mods, e.mod)
	}
	dirSkills := r.skills.loaded
	retired := r.retiring
	r.retiring = nil
	r.dirty = false
	r.mu.Unlock()
	for _, m := range mods {
		m := m.(*module)
		m.pulled.Store(isPulled(r.dir, m.file))
	}
	cat, conflicts := protocol.NewCatalogOver(r.srv.Catalog(), mods, dirSkills, r.log)
	r.srv.SetCatalog(cat)
	r.warnConflicts(mods, conflicts)
	r.published.Store(true)
	r.pubMu.Unlock()
	r.readyOnce.Do(func() { close(r.ready) })
	t, res, p := cat.Counts()
	r.log.Info("catalog published", "modules", len(mods), "tools", t, "resources", res, "prompts", p, "skills", len(cat.Skills()))
	for _, m := range retired {
		m.retire()
	}
}

// warnConflicts tells the clients that asked for logs of each module the
// catalog refused for a name another module serves, once per conflict
// (the catalog reports it again at every publish while it lasts).
func (r *Registry) warnConflicts(mods []protocol.Module, conflicts []protocol.Conflict) {
	fileOf := make(map[string]string, len(mods))
	for _, m := range mods {
		fileOf[m.Name()] = m.(*module).file
	}
	seen := make(map[protocol.Conflict]bool, len(conflicts))
	for _, c := range conflicts {
		if c.Kind == "skill" || c.Kept == c.Dropped {
			continue
		}
		seen[c] = true
		reason := fmt.Sprintf("declares %s %q, which %s serves: a served name stays with its module", c.Kind, c.Name, fileOf[c.Kept])
		r.refusedNow(fileOf[c.Dropped], reason, true)
		if !r.conflicts[c] {
			r.srv.Warn(map[string]string{"event": "module_refused", "file": fileOf[c.Dropped], "served_by": fileOf[c.Kept], "reason": reason})
		}
	}
	for c := range r.conflicts {
		if !seen[c] {
			r.syncMu.Lock()
			_, loadRefused := r.refused[r.conflictFile[c]]
			r.syncMu.Unlock()
			if !loadRefused {
				r.refusedNow(r.conflictFile[c], "", false)
			}
		}
	}
	r.conflicts = seen
	r.conflictFile = make(map[protocol.Conflict]string, len(seen))
	for c := range seen {
		r.conflictFile[c] = fileOf[c.Dropped]
	}
}

// module is a loaded module as the catalog holds it: it counts the calls
// running on it so that a replaced or removed module is closed only after
// its last call ends.
type module struct {
	*host.Module
	file string
	reg  *Registry

	mu      sync.Mutex
	calls   int
	retired bool
	closed  bool

	refuseOnce sync.Once
	pulled     atomic.Bool // a pull marker is beside the file (publish)
}

// Pulled reports whether the module was installed from a registry: the
// marker pull writes before the module (.NAME.wasmcp-pulled) is beside it.
// Hand-placed modules keep names before pulled ones (protocol.Pulled).
func (m *module) Pulled() bool { return m.pulled.Load() }

// pullMarkerSuffix ends the hidden file pull writes beside NAME.wasm.
const pullMarkerSuffix = ".wasmcp-pulled"

// isPulled reports whether file in dir has a pull marker. Scripts are
// never pulled.
func isPulled(dir, file string) bool {
	stem, ok := strings.CutSuffix(file, ".wasm")
	if !ok {
		return false
	}
	_, err := os.Stat(filepath.Join(dir, "."+stem+pullMarkerSuffix))
	return err == nil
}

// refuseLoaded takes out of the catalog a module listed from its cached
// description that its first compilation found invalid, and refuses its
// file as it is until it changes (or Reload).
func (r *Registry) refuseLoaded(m *module) {
	r.mu.Lock()
	e := r.modules[m.file]
	if e == nil || e.mod != m {
		r.mu.Unlock()
		return
	}
	delete(r.modules, m.file)
	r.retiring = append(r.retiring, m)
	r.dirty = true
	rf := refusal{e.stat, e.policy}
	r.mu.Unlock()
	r.syncMu.Lock()
	r.refused[m.file] = rf
	r.syncMu.Unlock()
	reason := m.Refused().Error()
	var ge *host.GuestError
	if errors.As(m.Refused(), &ge) {
		reason = ge.Msg
	}
	r.log.Error("module refused", "file", filepath.Join(r.dir, m.file), "reason", reason)
	r.publish()
}

// Call runs a call on the module. A call that found this module in a
// catalog published before the module was replaced, and starts only after
// the module's last call ended and it was closed, runs on the module that
// replaced it, as every call after the swap does; if the module was
// removed, the call fails.
func (m *module) Call(ctx context.Context, method string, params []byte, peer contract.Peer) (*contract.Reply, error) {
	cur := m
	for range 8 {
		if cur.acquire() {
			defer cur.release()
			reply, err := cur.Module.Call(ctx, method, params, peer)
			if err != nil && cur.Module.Refused() != nil {
				cur.refuseOnce.Do(func() { go cur.reg.refuseLoaded(cur) })
			}
			return reply, err
		}
		next := cur.reg.current(cur.file)
		if next == nil || next == cur {
			break
		}
		cur = next
	}
	return nil, &host.GuestError{Module: m.Name(), Kind: host.KindLoad, Msg: "the module was removed from the tools directory"}
}

func (m *module) acquire() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return false
	}
	m.calls++
	return true
}

func (m *module) release() {
	m.mu.Lock()
	m.calls--
	last := m.retired && m.calls == 0 && !m.closed
	if last {
		m.closed = true
	}
	m.mu.Unlock()
	if last {
		m.close()
	}
}

// retire marks the module as no longer in the catalog; it closes now if no
// call runs on it, else when the last one ends.
func (m *module) retire() {
	m.mu.Lock()
	now := !m.retired && m.calls == 0 && !m.closed
	m.retired = true
	if now {
		m.closed = true
	}
	m.mu.Unlock()
	if now {
		m.close()
	}
}

func (m *module) close() {
	if err := m.Module.Close(context.Background()); err != nil {
		m.reg.log.Warn("closing a retired module", "module", m.Name(), "err", err)
	}
	m.reg.open.Add(-1)
}
