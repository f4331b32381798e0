package host

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wasmrewrite"
)

// Snapshots (ABI section 1.1). A reactor that exports abi.SnapshotEntry
// is started once at load time and the state it reaches becomes the
// initial state of every call's instance:
//
//  1. the module (as prepared) gets every mutable global exported
//     (wasmrewrite.ExportGlobals) and runs in wazero's interpreter — no
//     compilation for a one-off run — with the module's own
//     configuration (arguments, environment, mounts), under the
//     snapshot deadline (Config.SnapshotTimeout, or its call deadline
//     when shorter) and its memory cap, in a pool of start-up runs of
//     its own (a slow start-up holds no compilation slot): start
//     section, _initialize, then abi.SnapshotEntry; a start-up that
//     reaches its deadline, even one that returns after it, is no
//     snapshot;
//  2. its linear memory and globals are recorded and
//     wasmrewrite.Snapshot writes the original module again with them as
//     its initial state, without the start-up code;
//  3. the snapshot is kept beside the compilation cache (snapshot/<key>,
//     the key a hash of the module, the host's version and what the
//     module saw at start-up), so a restart does not make it again, and
//     is compiled and instrumented like any module.
//
// Every call still gets a fresh instance: only its initial state differs.
// A module that cannot be snapshotted runs as a plain reactor, with a log
// line saying why; the policy's `snapshot = false` turns it off.

// DefaultSnapshotMaxMemory is the default of Policy.SnapshotMaxMemory.
const DefaultSnapshotMaxMemory = 64 << 20

// snapshotMaxMemory is the cap on the memory image of p's snapshot.
func snapshotMaxMemory(p Policy) int64 {
	if p.SnapshotMaxMemory > 0 {
		return p.SnapshotMaxMemory
	}
	return DefaultSnapshotMaxMemory
}

// overImageCap says why a snapshot of wasm may not be used when its memory
// image is over the policy's cap, else "".
func overImageCap(snap, wasm []byte, p Policy) string {
	if extra, limit := int64(len(snap)-len(wasm)), snapshotMaxMemory(p); extra > limit {
		return fmt.Sprintf("its start-up keeps a memory image of %s, more than the %s of snapshot_max_memory", FormatBytes(extra), FormatBytes(limit))
	}
	return ""
}

// snapshotFormat changes whenever what a snapshot holds changes, so older
// cached snapshots are not used.
const snapshotFormat = "wasmcp-snapshot-1"

// snapshotSection is the custom section a snapshot carries: the host's
// monotonic clock when it was taken (8 bytes, little-endian nanoseconds).
const snapshotSection = "wasmcp.snapshot"

// snapshot is what build learned of a module's snapshot.
type snapshot struct {
	used   bool
	reason string // why a module that asked for one runs without it
	clock  int64  // the monotonic clock the snapshot's state has seen
	cached bool   // read from the cache rather than made now
	extra  int64  // bytes the snapshot adds to the module (its memory image)
	took   time.Duration
	sum    [sha256.Size]byte // the snapshot's SHA-256
	// data is what the snapshot module's data segments write at
	// instantiation (wasmrewrite.DataRanges), nil when unknown: the
	// bytes a call's memory may keep dirty in its pool (memory.go).
	data [][2]uint64
	// state, for a module with Policy.SharedCode, is what each instance
	// of its code (the snapshot without its state) is given before it
	// runs (applyState); nil: the state is in the code's module.
	state *wasmrewrite.State
}

// applyState gives an instance of a split snapshot's code its state: the
// memory grown to the image's size, the image's bytes written, the mutable
// globals set. It runs before any guest code.
func applyState(mod api.Module, st *wasmrewrite.State) error {
	mem := mod.Memory()
	if mem == nil {
		return errors.New("it has no memory")
	}
	if cur := mem.Size() / 65536; st.Pages > cur {
		if _, ok := mem.Grow(st.Pages - cur); !ok {
			return fmt.Errorf("its memory could not grow to the snapshot's %d pages", st.Pages)
		}
	}
	for _, s := range st.Segments {
		if !mem.Write(s.Offset, s.Bytes) {
			return errors.New("the snapshot's image is outside its memory")
		}
	}
	for _, g := range st.Globals {
		mg, ok := mod.ExportedGlobal(g.Export).(api.MutableGlobal)
		if !ok {
			return fmt.Errorf("global %d is not settable", g.Index)
		}
		mg.Set(g.Value)
	}
	return nil
}

// hostVersion names the host's build for snapshot keys: its module
// version and VCS revision, and wazero's version.
var hostVersion = sync.OnceValue(func() string {
	v := snapshotFormat
	if info, ok := debug.ReadBuildInfo(); ok {
		v += " " + info.Main.Path + "@" + info.Main.Version
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
				v += " " + s.Key + "=" + s.Value
			}
		}
		for _, d := range info.Deps {
			if d.Path == "github.com/tetratelabs/wazero" {
				v += " wazero@" + d.Version
			}
		}
	}
	return v
})

// monoBase is the origin of the clock snapshot instances see.
var monoBase = time.Now()

// monotonic is the host's monotonic clock in nanoseconds since monoBase.
func monotonic() int64 { return int64(time.Since(monoBase)) }

// snapshotClock is the monotonic clock of an instance started from a
// snapshot taken at clock: never earlier than clock, whatever process took
// it, so the guest's runtime never sees its clock go back.
func snapshotClock(clock int64) func() int64 {
	return func() int64 { return monotonic() + clock }
}

// wantsSnapshot reports whether a module asks for a snapshot (exports
// abi.SnapshotEntry) and, if so and it may not have one, why.
func wantsSnapshot(wasm []byte, p Policy) (want bool, why string) {
	exports, err := wasmrewrite.Exports(wasm)
	if err != nil {
		return false, ""
	}
	if kind, ok := exports[abi.SnapshotEntry]; !ok || kind != wasmrewrite.ImportFunc {
		return false, ""
	}
	if p.NoSnapshot {
		return true, "its policy sets snapshot = false"
	}
	if kind, ok := exports[abi.ReactorEntry]; !ok || kind != wasmrewrite.ImportFunc {
		return true, "only a reactor (exporting " + abi.ReactorEntry + ") can run from a snapshot"
	}
	return true, ""
}

// snapshotKey names a module's snapshot: the module, the host, and what
// the module can see at start-up (its arguments, environment and mounts)
// and the memory cap it ran under.
func snapshotKey(wasm []byte, name string, p Policy) string {
	h := sha256.New()
	put := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	put(hostVersion())
	sum := sha256.Sum256(wasm)
	put(string(sum[:]))
	put(name)
	put(strconv.FormatUint(uint64(p.Limits.memoryPages()), 10))
	for _, e := range p.Env {
		put(e.Name)
		put(e.Value)
	}
	put("start env")
	for _, e := range p.StartEnv {
		put(e.Name)
		put(e.Value)
	}
	put("mounts")
	for _, m := range p.Mounts {
		put(m.HostPath)
		put(m.GuestPath)
		put(strconv.FormatBool(m.ReadOnly))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// snapCache keeps snapshots on disk: each file is the SHA-256 of the
// snapshot followed by the snapshot, so a damaged file is a cache miss:
// it is removed (logged once, cacheseal.go) and the snapshot taken again.
type snapCache struct {
	dir  string
	warn *cacheWarner
}

// get returns the snapshot under key and its SHA-256.
func (c *snapCache) get(key string) ([]byte, [sha256.Size]byte, bool) {
	var sum [sha256.Size]byte
	if c == nil {
		return nil, sum, false
	}
	p := filepath.Join(c.dir, key+".wasm")
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, sum, false
	}
	if len(b) < sha256.Size {
		_ = os.Remove(p)
		c.warn.damaged("snapshots", p, "shorter than its SHA-256")
		return nil, sum, false
	}
	sum = sha256.Sum256(b[sha256.Size:])
	if !bytes.Equal(sum[:], b[:sha256.Size]) {
		_ = os.Remove(p)
		c.warn.damaged("snapshots", p, "its SHA-256 does not match the one written when it was stored")
		return nil, sum, false
	}
	return b[sha256.Size:], sum, true
}

// put keeps snap, whose SHA-256 is sum, under key.
func (c *snapCache) put(key string, snap []byte, sum [sha256.Size]byte) {
	if c == nil || os.MkdirAll(c.dir, 0o700) != nil {
		return
	}
	tmp := filepath.Join(c.dir, key+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return
	}
	_, err1 := f.Write(sum[:])
	_, err2 := f.Write(snap)
	if errors.Join(err1, err2, f.Close()) == nil {
		_ = os.Rename(tmp, filepath.Join(c.dir, key+".wasm"))
	} else {
		_ = os.Remove(tmp)
	}
}

// snapshotOf returns the snapshot of wasm (a prepared module that asks
// for one), from the cache or made now.
func (e *Engine) snapshotOf(wait, ctx context.Context, m *Module, wasm []byte) ([]byte, snapshot, error) {
	start := time.Now()
	key := snapshotKey(wasm, m.name, m.policy)
	if snap, sum, ok := e.snaps.get(key); ok {
		if why := overImageCap(snap, wasm, m.policy); why != "" {
			return nil, snapshot{}, errors.New(why)
		}
		if clock, err := snapshotClockOf(snap); err == nil {
			return snap, snapshot{used: true, clock: clock, cached: true, took: time.Since(start), sum: sum}, nil
		}
	}
	release, err := e.starts.acquire(wait)
	if err != nil {
		return nil, snapshot{}, err
	}
	// The start-up's interpreted code takes its room in the code budget
	// (code.go) once it has its lane, until it ends.
	room, err := e.code.reserve(wait, m.name, codeCostFor(wasm, tierInterp))
	if err != nil {
		release()
		return nil, snapshot{}, err
	}
	snap, clock, err := e.takeSnapshot(ctx, m, wasm, release)
	room.release()
	if err != nil {
		return nil, snapshot{}, err
	}
	if why := overImageCap(snap, wasm, m.policy); why != "" {
		return nil, snapshot{}, errors.New(why)
	}
	sum := sha256.Sum256(snap)
	e.snaps.put(key, snap, sum)
	return snap, snapshot{used: true, clock: clock, took: time.Since(start), sum: sum}, nil
}

// snapshotClockOf reads the clock a snapshot recorded.
func snapshotClockOf(snap []byte) (int64, error) {
	secs, err := wasmrewrite.Sections(snap)
	if err != nil {
		return 0, err
	}
	for _, s := range secs {
		if s.ID != wasmrewrite.SecCustom {
			continue
		}
		r := &wasmrewrite.Reader{B: s.Body}
		if r.Name() == snapshotSection && r.Err == nil && len(s.Body)-r.I == 8 {
			return int64(binary.LittleEndian.Uint64(s.Body[r.I:])), nil
		}
	}
	return 0, errors.New("no " + snapshotSection + " section")
}

// takeSnapshot runs the module's start-up in the interpreter and writes
// the snapshot. release gives back its slot of the start-up lanes' first
// lane, which it may trade for one of the long lane (startLanes.watch).
func (e *Engine) takeSnapshot(ctx context.Context, m *Module, wasm []byte, release func()) ([]byte, int64, error) {
	held := release
	defer func() { held() }()
	probe, globals, err := wasmrewrite.ExportGlobals(wasm)
	if err != nil {
		return nil, 0, err
	}
	limits := m.policy.Limits
	// The deadline counts the guest's own time (guesttime.go), not the
	// module's call timeout: a start-up runs once, at load.
	deadline, flag := e.cfg.SnapshotTimeout, "--snapshot-timeout"
	ceiling := e.loadCeiling(deadline)
	gt, unlock := startGuestTime()
	defer unlock()
	ctx, end := context.WithCancelCause(ctx)
	defer end(nil)
	ctx, cancel := context.WithTimeoutCause(ctx, ceiling, cutByCeiling(flag, deadline, -1, ceiling))
	defer cancel()
	stopWatch := gt.watch(ctx, end, deadline, ceiling,
		func(used time.Duration) error {
			_, ok := gt.used()
			return overDeadline(fmt.Sprintf("start-up took longer than the deadline of %s (%s)", deadline, flag), used, ok)
		},
		func(used, wall time.Duration) error { return cutByCeiling(flag, deadline, used, wall) })
	defer stopWatch()
	held = e.starts.watch(ctx, gt, end, release)
	rc := wazero.NewRuntimeConfigInterpreter().
		WithMemoryLimitPages(limits.memoryPages()).
		WithCloseOnContextDone(true)
	r := wazero.NewRuntimeWithConfig(ctx, rc)
	defer r.Close(context.Background())
	if _, err := wasi_snapshot_preview1.Instantiate(experimental.WithFunctionListenerFactory(ctx, wasiListeners), r); err != nil {
		return nil, 0, fmt.Errorf("instantiating WASI: %w", err)
	}
	code, err := guardCompile(ctx, r, probe)
	if err != nil {
		return nil, 0, fmt.Errorf("does not compile: %w", err)
	}
	fns := code.ExportedFunctions()
	for _, name := range []string{"_initialize", abi.SnapshotEntry} {
		if f, ok := fns[name]; ok && (len(f.ParamTypes()) > 0 || len(f.ResultTypes()) > 0) {
			return nil, 0, fmt.Errorf("its export %s takes parameters or returns results", name)
		}
	}
	cfg, writes := e.startupConfig(ctx, m, gt)
	defer endRuns(writes) // after mod.Close, deferred below
	ctx = context.WithValue(ctx, writesKey{}, writes)
	mod, err := r.InstantiateModule(ctx, code, cfg)
	if err != nil {
		return nil, 0, startupError("instantiating it", ctx, err)
	}
	defer mod.Close(context.Background())
	if err := runStartup(ctx, mod, fns, writes); err != nil {
		return nil, 0, err
	}
	clock := monotonic()
	snap, err := snapshotImage(wasm, mod, globals, clock)
	if err != nil {
		return nil, 0, err
	}
	return snap, clock, nil
}

// startupConfig is the start-up run's module configuration: its output
// to the log, a sleep that ends at ctx's end (wazero's own would not;
// the interpreter then stops the guest at its next loop) and counts as
// waiting in gt, and the module's mounts with their write budgets.
func (e *Engine) startupConfig(ctx context.Context, m *Module, gt *guestTime) (wazero.ModuleConfig, []*writeBudget) {
	out := &startupLog{log: e.log, module: m.name}
	sleep := func(ns int64) {
		t := time.NewTimer(time.Duration(ns))
		defer t.Stop()
		defer gt.waitUpTo(time.Duration(ns))()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
	}
	cfg := m.base.WithNanotime(monotonic, 1).WithNanosleep(sleep).
		WithStdin(bytes.NewReader(nil)).WithStdout(out).WithStderr(out).
		WithRandSource(rand.Reader)
	var writes []*writeBudget
	if m.mounts != nil {
		var fsc wazero.FSConfig
		fsc, writes = fsConfig(m.mounts)
		cfg = cfg.WithFSConfig(fsc)
	}
	return cfg, writes
}

// runStartup calls the start-up exports mod has (_initialize, then the
// snapshot entry) and refuses a start-up that failed, ended past its
// deadline or went on after a write failed.
func runStartup(ctx context.Context, mod api.Module, fns map[string]api.FunctionDefinition, writes []*writeBudget) error {
	for _, name := range []string{"_initialize", abi.SnapshotEntry} {
		if _, ok := fns[name]; !ok {
			continue
		}
		if _, err := mod.ExportedFunction(name).Call(ctx); err != nil {
			err = startupError(name, ctx, err)
			if msg := spent(writes); msg != "" {
				err = fmt.Errorf("%w; %s", err, msg)
			}
			return err
		}
	}
	if ctx.Err() != nil {
		// The start-up returned after its deadline (a sleep cut short
		// returns to the guest): what it reached is not what it meant
		// to, and must not become every call's state.
		return startupError("the start-up", ctx, ctx.Err())
	}
	if msg := spent(writes); msg != "" {
		// The start-up went on after a write failed: what it keeps is
		// not what it meant to keep.
		return fmt.Errorf("start-up: %s", msg)
	}
	return nil
}

// snapshotImage writes the snapshot of mod after its start-up: wasm
// with the exported globals' values, the memory and the clock.
func snapshotImage(wasm []byte, mod api.Module, globals []wasmrewrite.Global, clock int64) ([]byte, error) {
	img := wasmrewrite.Image{
		Globals: make(map[uint32]uint64, len(globals)),
		Drop:    []string{"_initialize", abi.SnapshotEntry},
	}
	for _, g := range globals {
		gl := mod.ExportedGlobal(g.Export)
		if gl == nil {
			return nil, fmt.Errorf("global %d is not readable", g.Index)
		}
		img.Globals[g.Index] = gl.Get()
	}
	mem := mod.Memory()
	if mem == nil {
		return nil, errors.New("it has no memory")
	}
	b, ok := mem.Read(0, mem.Size())
	if !ok {
		return nil, errors.New("its memory is not readable")
	}
	img.Memory = b
	img.Custom = []wasmrewrite.Section{wasmrewrite.CustomSection(snapshotSection, binary.LittleEndian.AppendUint64(nil, uint64(clock)))}
	return wasmrewrite.Snapshot(wasm, img)
}

// startupError says how the start-up run failed.
func startupError(what string, ctx context.Context, err error) error {
	var le *limitError
	cause := context.Cause(ctx)
	if errors.As(cause, &le) {
		return errors.New(le.msg)
	}
	var be *busyError
	if errors.As(cause, &be) {
		return fmt.Errorf("start-up %w", be) // Transient: taken again later
	}
	return fmt.Errorf("%s failed: %s", what, trimTrap(err.Error()))
}

// startupLog logs what a module writes during its snapshot run, a line at
// a time (bounded: the run has no caller to hand it to).
type startupLog struct {
	log    *slog.Logger
	module string
	mu     sync.Mutex
	buf    []byte
	lines  int
}

var _ io.Writer = (*startupLog)(nil)

func (w *startupLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		if w.lines < 100 {
			w.log.Info("guest output during its snapshot run", "module", w.module, "line", shorten(string(w.buf[:i])))
		}
		w.lines++
		w.buf = w.buf[i+1:]
	}
	if len(w.buf) > 4096 {
		w.buf = w.buf[:0]
	}
	return len(p), nil
}

// compileSnapshot compiles a prepared module: from its snapshot when it
// asks for one and can have one, else as it is (logging why it runs
// without the snapshot it asked for). The results are compile's, and
// the identity of the bytes compiled (validatedID); validated is that of
// the bytes wazero validated at the module's last compilation, if any.
//
// Waiting for a slot (of the compilation pool, or of the pool of
// start-up runs) ends with wait; the work itself runs under ctx.
//
// The code takes its room in the code budget (code.go), codeCostFor the
// prepared module, once it has its slot; the room comes back in
// buildResult.room, held until the code is counted or closed.
func (e *Engine) compileSnapshot(wait, ctx context.Context, m *Module, wasm []byte, validated string, interp bool) (x buildResult) {
	pages := m.policy.Limits.memoryPages()
	t := tierCompiled
	if interp {
		t = tierInterp
	}
	compile := func(w []byte, validated bool) (wazero.Runtime, wazero.CompiledModule, bool, error) {
		pool := e.pool
		switch {
		case interp:
			// The interpreter's compilations do not wait behind the
			// compiler's (the background compilations of the modules
			// they serve).
			pool = e.ipool
		case ctx.Value(backgroundBuild{}) != nil:
			pool = nil // its slot of bgPool is held already (Module.upgrade)
		}
		if pool != nil {
			release, err := pool.acquire(wait)
			if err != nil {
				return nil, nil, false, err
			}
			defer release()
		}
		room, err := e.code.reserve(wait, m.name, codeCostFor(wasm, t))
		if err != nil {
			return nil, nil, false, err
		}
		r, code, interrupt, err := e.compile(ctx, m.name, pages, m.mounts != nil, w, validated, interp)
		if code == nil {
			room.release()
		} else {
			x.room = room
		}
		return r, code, interrupt, err
	}
	want, why := wantsSnapshot(wasm, m.policy)
	var snap snapshot
	var snapErr error
	if want && why == "" {
		s, info, err := e.snapshotOf(wait, ctx, m, wasm)
		snapErr = err
		var split []byte
		if err == nil && m.policy.SharedCode {
			// The state apart: modules whose snapshots split into the
			// same code share its compilation (wazero keeps one copy of
			// a module's machine code per runtime).
			split, info.state, err = wasmrewrite.Split(s)
		}
		if err == nil {
			id := validatedID(m, &info)
			w := s
			if split != nil {
				w, id = split, "split "+hexSum(split)
			}
			r, code, interrupt, cerr := compile(w, validated == id)
			if cerr == nil {
				info.extra = int64(len(s) - len(wasm))
				if ranges, ok, _ := wasmrewrite.DataRanges(s); ok {
					info.data = ranges
				}
				e.log.Info("module runs from a snapshot", "module", m.name, "cached", info.cached,
					"snapshot", FormatBytes(int64(len(s))), "took", info.took.Round(time.Millisecond), "shared_code", split != nil)
				x.r, x.code, x.interrupt, x.snap, x.id = r, code, interrupt, info, id
				return x
			}
			if r == nil {
				x.err = cerr
				return x
			}
			err = fmt.Errorf("the snapshot does not compile: %w", cerr)
		}
		why = err.Error()
	}
	if want {
		if snapErr != nil && Transient(snapErr) && m.snapRetry.CompareAndSwap(false, true) {
			go e.retrySnapshot(m, wasm)
		}
		snap.reason = why
		level := slog.LevelWarn
		if m.policy.NoSnapshot {
			level = slog.LevelInfo
		}
		e.log.Log(ctx, level, "module runs without a snapshot", "module", m.name, "reason", why)
	}
	x.id = validatedID(m, nil)
	x.r, x.code, x.interrupt, x.err = compile(wasm, validated == x.id)
	x.snap = snap
	return x
}

// snapshotRetryFirst and snapshotRetryMax bound the backoff between tries
// of a start-up cut by a busy machine.
const (
	snapshotRetryFirst = 5 * time.Second
	snapshotRetryMax   = 5 * time.Minute
)

// retrySnapshot takes again, with backoff, the snapshot of m (prepared
// module wasm) whose start-up the wall-clock ceiling cut while its guest
// had time left: the machine was busy, and the module must not run without
// its snapshot for good. Once taken (and cached), m's code is closed when
// no call runs on it, so the next call compiles from the snapshot. It ends
// when the module closes or the start-up fails for a reason of its own.
func (e *Engine) retrySnapshot(m *Module, wasm []byte) {
	defer m.snapRetry.Store(false)
	ctx := context.Background()
	for delay := e.snapRetry; ; delay = min(2*delay, snapshotRetryMax) {
		e.log.Info("a start-up was cut by a busy machine; its snapshot is taken again later", "module", m.name, "in", delay)
		if !m.sleepOpen(delay) {
			return
		}
		_, _, err := e.snapshotOf(ctx, ctx, m, wasm)
		if err == nil {
			break
		}
		if !Transient(err) {
			e.log.Warn("module runs without a snapshot", "module", m.name, "reason", err.Error())
			return
		}
	}
	e.log.Info("snapshot taken again; the module's next call compiles from it", "module", m.name)
	for {
		if c := m.slot.evict(); c != nil {
			e.code.removed(m)
			_ = c.code.Close(ctx)
			return
		}
		m.slot.mu.Lock()
		gone := m.slot.closed || m.slot.c == nil || m.slot.src == nil
		m.slot.mu.Unlock()
		if gone || !m.sleepOpen(time.Second) {
			return
		}
	}
}

// sleepOpen waits d and reports whether the module is still open.
func (m *Module) sleepOpen(d time.Duration) bool {
	time.Sleep(d)
	m.slot.mu.Lock()
	defer m.slot.mu.Unlock()
	return !m.slot.closed
}

// validatedID names the bytes compileSnapshot compiles for m without
// hashing them again: a module as prepared is determined by its hash (its
// code compiles only from bytes checked against it) and its policy, which
// a Module never changes; a snapshot by its own SHA-256, which the
// snapshot cache checks or computes anyway.
func validatedID(m *Module, snap *snapshot) string {
	if snap == nil {
		return "module " + m.hash
	}
	return "snapshot " + hex.EncodeToString(snap.sum[:])
}

// Snapshot reports whether the module's calls start from a snapshot (as
// its last compilation found) and, for a module that asked for one but
// runs without it, why. A module not compiled yet reports false and "".
func (m *Module) Snapshot() (used bool, reason string) {
	m.slot.mu.Lock()
	defer m.slot.mu.Unlock()
	if m.slot.c == nil {
		return false, ""
	}
	return m.slot.c.snap.used, m.slot.c.snap.reason
}
