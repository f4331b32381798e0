package host

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tetratelabs/wazero"
)

// DefaultCodeMemory is the default budget for compiled code
// (Config.CodeMemory).
const DefaultCodeMemory = 512 << 20

// NoCodeBudget as Config.CodeMemory keeps every compiled module.
const NoCodeBudget = -1

// DefaultDescribeTimeout is the default budget of a describe run at load
// (Config.DescribeTimeout).
const DefaultDescribeTimeout = 5 * time.Second

// DefaultSnapshotTimeout is the default deadline of a snapshot's start-up
// run (Config.SnapshotTimeout).
const DefaultSnapshotTimeout = 5 * time.Second

// defaultSnapshotTimeout is what a zero Config.SnapshotTimeout means: the
// package's tests, whose start-ups run under -race on a busy machine, give
// it more room (tests of the deadline itself set Config.SnapshotTimeout).
var defaultSnapshotTimeout = DefaultSnapshotTimeout

// DefaultSlowCompile is how long a compilation runs before it is logged,
// and then logged again (Config.SlowCompile).
const DefaultSlowCompile = 5 * time.Second

// DefaultCompilations is the default bound on compilations at once
// (Config.Compilations): the machine's cores, at most 4, so a cold start
// leaves cores to serve on a large machine and uses all of a small one.
func DefaultCompilations() int { return min(runtime.NumCPU(), 4) }

// compiled is a module's compiled code and what compiling it learned.
type compiled struct {
	runtime   wazero.Runtime
	code      wazero.CompiledModule
	interrupt bool // instrumented: a call stops it by setting interruptExport
	reactor   bool // exports wasmcp_main
	init      bool // reactor exports _initialize
	snap      snapshot
	base      wazero.ModuleConfig // the module's config for a snapshot's instances; nil: Module.base
	size      int64               // estimated resident bytes of the code (codeCost; a snapshot's memory image is apart, snap.extra)
	cost      int64               // what one instance takes from the engine's memory budget when admitted
	prepaid   int64               // the linear memory cost admits with (its initial size and growthStep)
	validated string              // the bytes wazero validated (validatedID)
	tier      tier                // the engine the code was built for (tier.go)
	refs      int                 // calls running on this code (codeSlot.mu)
	retired   bool                // replaced by the compiled tier: closed by the last call's release
	ios       callIOs             // module configs for its instances, reused (callio.go)
	image     *imagePool          // a snapshot's memories, kept dirty only where its data segments write (memory.go); nil: none
	room      *loadRoom           // the room its build took in the code budget, until the code is counted (codeBudget.added) or closed
}

// closeBuilt closes code that was built but never counted in the code
// budget (its load failed, or another code took its place), giving back
// the room its build took.
func (c *compiled) closeBuilt(ctx context.Context) {
	c.room.release()
	_ = c.code.Close(ctx)
}

// codeCost estimates what a compiled module keeps resident: wazero keeps
// the decoded module, whose function bodies point into the binary, and
// the machine code, about codeFactor times the binary's size (measured
// with wasmcp inspect, "machineCode", on the word_count examples: 4.1x
// for the Go guest, 5x for the C guest, rounded up to pages).
func codeCost(wasm []byte) int64 { return int64(len(wasm)) * (1 + codeFactor) }

// codeFactor is the machine code's size over the binary's (see codeCost).
const codeFactor = 4

// codeSlot holds a module's code: compiled at load, on the first call of
// a module opened from its cached description, or again after the code
// budget closed it.
type codeSlot struct {
	src     func() ([]byte, error) // nil: the code cannot be compiled again
	reactor atomic.Bool
	lastUse atomic.Int64 // UnixNano of the last call's start

	mu      sync.Mutex
	c       *compiled
	flight  *flight // the compilation under way, shared by every caller
	refused error   // the module turned out invalid: every call fails
	closed  bool
	valid   string // the bytes wazero validated at the last compilation (validatedID)
	// upgrading: the compiled tier is being built in the background
	// (tier.go).
	upgrading bool
	upgraded  chan struct{} // closed when that build ends or the module closes; nil when none
	// compiledOnce: the compiler tier compiled this module's code in
	// this process, so the compilation cache holds it.
	compiledOnce atomic.Bool
}

// validatedID returns the identity of the bytes wazero validated when the
// module's code last compiled, "" if it never did.
func (s *codeSlot) validatedID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.valid
}

// flight is one compilation that callers wait for.
type flight struct {
	done chan struct{}
	err  error
}

func (s *codeSlot) install(c *compiled) {
	s.mu.Lock()
	s.c = c
	s.valid = c.validated
	s.mu.Unlock()
	s.reactor.Store(c.reactor)
	s.lastUse.Store(time.Now().UnixNano())
}

// acquire returns the module's code for one call, compiling it if needed;
// release it with release. held reports that the call holds one of the
// engine's interpreter slots (Engine.islots): the code is interpreted and
// its compiled tier is being built, so at most cap(islots) such calls run
// at once and the background compilation keeps a core (tier.go). A call
// beyond them waits, as long as ctx lasts, for a slot or for the compiled
// code, whichever comes first. Module.Compile, which runs nothing, passes
// run false and takes no slot.
func (s *codeSlot) acquire(ctx context.Context, m *Module, run bool) (c *compiled, held bool, err error) {
	e := m.engine
	defer func() {
		if err != nil && held {
			<-e.islots
			held = false
		}
	}()
	for {
		s.mu.Lock()
		switch {
		case s.closed || (s.c == nil && s.src == nil):
			s.mu.Unlock()
			return nil, held, &GuestError{Module: m.name, Kind: KindLoad, Msg: "the module was closed"}
		case s.refused != nil:
			err := s.refused
			s.mu.Unlock()
			return nil, held, err
		case s.c != nil:
			c := s.c
			bounded := run && c.tier == tierInterp && s.upgrading
			if bounded && !held {
				done := s.upgraded
				s.mu.Unlock()
				e.interpWaiting.Add(1)
				select {
				case e.islots <- struct{}{}:
					held = true
				case <-done:
					// The compiled code is ready (or its build failed or the
					// module closed): look again.
				case <-ctx.Done():
					e.interpWaiting.Add(-1)
					return nil, held, &GuestError{Module: m.name, Kind: KindCanceled, Msg: "canceled while waiting for the module's interpreted code or its compiled code", Err: context.Cause(ctx)}
				}
				e.interpWaiting.Add(-1)
				continue
			}
			if held && !bounded {
				<-e.islots // the slot is not needed any more
				held = false
			}
			c.refs++
			s.mu.Unlock()
			s.lastUse.Store(time.Now().UnixNano())
			return c, held, nil
		}
		if held {
			<-e.islots // no code at all: not held while it compiles
			held = false
		}
		f := s.flight
		if f == nil {
			f = &flight{done: make(chan struct{})}
			s.flight = f
			// Not bound to ctx: the compilation is shared by every call
			// waiting for it and serves the calls after them.
			go m.compileCode(f, nil)
		}
		s.mu.Unlock()
		select {
		case <-f.done:
			if f.err != nil {
				return nil, held, f.err
			}
		case <-ctx.Done():
			return nil, held, &GuestError{Module: m.name, Kind: KindCanceled, Msg: "canceled while the module compiled", Err: context.Cause(ctx)}
		}
	}
}

// release ends a call started with acquire on c (held: acquire's).
func (s *codeSlot) release(m *Module, c *compiled, held bool) {
	if held {
		<-m.engine.islots
	}
	s.mu.Lock()
	c.refs--
	retire := c.retired && c.refs == 0
	s.mu.Unlock()
	if retire {
		// The last call on interpreted code the compiled tier replaced.
		m.engine.retire(m, c)
	}
	m.engine.code.trim(nil)
}

// evict takes the code away if no call runs on it and it can be compiled
// again; it returns the code to close, or nil.
func (s *codeSlot) evict() *compiled {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Interpreted code may be closed too (it is the larger): a call then
	// builds it again, unless the compiled tier, still being built in
	// the background, is ready by then.
	if s.c == nil || s.c.refs > 0 || s.closed || s.src == nil {
		return nil
	}
	c := s.c
	s.c = nil
	return c
}

// compileCode compiles the module's code from its source for the calls
// waiting on f. A module found invalid is refused for good; a source that
// cannot be read, or no longer has the module's hash, fails the waiting
// calls only.
func (m *Module) compileCode(f *flight, wasm []byte) {
	e := m.engine
	s := &m.slot
	start := time.Now()
	var err error
	var c *compiled
	refused := false
	ok := wasm != nil
	if !ok {
		wasm, ok = e.descs.module(m.hash)
		ok = ok && hexSum(wasm) == m.hash
	}
	if !ok {
		if wasm, err = s.src(); err != nil {
			err = &GuestError{Module: m.name, Kind: KindLoad, Msg: "reading the module to compile it: " + err.Error(), Err: err}
		} else if hexSum(wasm) != m.hash {
			err = &GuestError{Module: m.name, Kind: KindLoad, Msg: "the module's file changed since it was listed; it is being reloaded"}
		}
	}
	t := e.firstTier(m)
	if err == nil {
		if t == tierInterp {
			e.interpBuilds.enter()
		}
		c, err = e.build(context.Background(), m, wasm, t)
		if t == tierInterp {
			e.interpBuilds.leave()
		}
		refused = err != nil && isRefusal(err)
	}
	s.mu.Lock()
	s.flight = nil
	closed := s.closed
	if c != nil && s.c != nil {
		// The compiled tier took over while this (interpreted) code was
		// built again after the budget closed it: keep the compiled.
		closed = true
	}
	switch {
	case c != nil && !closed:
		s.c = c
		s.valid = c.validated
		e.mem.register(m, c.cost) // exact now (lock order: slot, then budget)
	case refused:
		s.refused = err
	}
	f.err = err
	close(f.done)
	s.mu.Unlock()
	switch {
	case c != nil && closed:
		c.closeBuilt(context.Background())
	case c != nil && t == tierInterp:
		s.reactor.Store(c.reactor)
		e.code.added(m, c)
		e.log.Info("module built for the interpreter; compiling it in the background", "module", m.name,
			"sha256", m.hash[:12], "took", time.Since(start).Round(time.Millisecond), "code", FormatBytes(c.size))
		m.upgrade(wasm)
	case c != nil:
		s.reactor.Store(c.reactor)
		e.code.added(m, c)
		e.markWarm(m)
		took := time.Since(start)
		e.log.Info("module compiled", "module", m.name, "sha256", m.hash[:12], "took", took.Round(time.Millisecond),
			"code", FormatBytes(c.size))
		e.compiled(m, c, took)
	case refused:
		e.log.Error("module refused at its first compilation", "module", m.name, "sha256", m.hash[:12], "reason", err.Error())
	default:
		e.log.Warn("compiling a module failed", "module", m.name, "err", err)
	}
}

// compiled tells Config.OnCompiled of a compilation of m's code.
func (e *Engine) compiled(m *Module, c *compiled, took time.Duration) {
	if e.cfg.OnCompiled != nil {
		e.cfg.OnCompiled(m.name, took, c.size)
	}
}

// isRefusal reports whether a build error is the module's own fault (it
// does not compile, or breaks the ABI), not the engine's.
func isRefusal(err error) bool {
	var ge *GuestError
	return errors.As(err, &ge) && ge.Kind == KindLoad && ge.Err == nil
}

// Refused is the error that made the module unusable when it was compiled
// on its first call (a module listed from its cached description that
// turned out invalid), or nil.
func (m *Module) Refused() error {
	m.slot.mu.Lock()
	defer m.slot.mu.Unlock()
	return m.slot.refused
}

// Compiled reports whether the module's code is compiled now.
func (m *Module) Compiled() bool {
	m.slot.mu.Lock()
	defer m.slot.mu.Unlock()
	return m.slot.c != nil
}

// Footprint is what a module keeps in memory.
type Footprint struct {
	// Code is the estimated resident size of the compiled code (wazero's
	// decoded module and machine code); 0 while not compiled.
	Code int64
	// Description is the size of the description's JSON; its compiled
	// schemas take a few times that.
	Description int64
	// Compiled reports whether the code is compiled now.
	Compiled bool
	// Snapshot is the memory image the module's snapshot adds to its code
	// (bounded by Policy.SnapshotMaxMemory, not counted in Code nor in
	// the code budget); 0 without a snapshot.
	Snapshot int64
	// Tier is the tier of that code (TierInterpreter or TierCompiled),
	// "" while it has none.
	Tier string
}

// Footprint returns what the module keeps in memory now.
func (m *Module) Footprint() Footprint {
	m.slot.mu.Lock()
	defer m.slot.mu.Unlock()
	f := Footprint{Description: int64(m.descLen)}
	if m.slot.c != nil {
		f.Code, f.Compiled, f.Snapshot, f.Tier = m.slot.c.size, true, m.slot.c.snap.extra, m.slot.c.tier.String()
	}
	return f
}

// Compile compiles the module's code now if it is not compiled (as its
// first call would), e.g. to warm a module up in the background.
func (m *Module) Compile(ctx context.Context) error {
	c, held, err := m.slot.acquire(ctx, m, false)
	if err != nil {
		return err
	}
	m.slot.release(m, c, held)
	return nil
}

// WarmUp starts compiling the module's code in the background from wasm,
// the bytes it was opened with, unless it is compiled or compiling: its
// first call then waits for this compilation instead of starting one (and
// reading the module again).
func (m *Module) WarmUp(wasm []byte) {
	s := &m.slot
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c != nil || s.flight != nil || s.closed || s.refused != nil {
		return
	}
	s.flight = &flight{done: make(chan struct{})}
	go m.compileCode(s.flight, wasm)
}

// Close releases the compiled code; later calls fail. Calls still running
// finish first only if the caller waits for them (the registry does).
func (m *Module) Close(ctx context.Context) error {
	if m.egress != nil {
		m.egress.Close()
	}
	s := &m.slot
	s.mu.Lock()
	s.closed = true
	c := s.c
	s.c = nil
	s.endUpgrade()
	s.mu.Unlock()
	m.engine.mem.register(m, 0)
	if c == nil {
		return nil
	}
	m.engine.code.removed(m)
	return c.code.Close(ctx)
}

// codeBudget bounds the compiled code the engine keeps: when over its
// limit, the code of the least recently called modules that no call is
// running on is closed, to be compiled again (from the compilation cache)
// on their next call.
//
// Closing code does not give its memory back at once: wazero unmaps a
// compiled module's machine code in a finalizer, which runs only after a
// garbage collection finds the code unreachable, and a collection comes
// when the Go heap has grown enough, not when code was closed. Under a
// round-robin over more modules than fit, closed code then piled up beside
// the budget (200 Go modules under 512 MiB: 551 MiB of machine code mapped,
// peak RSS 1,089 MiB). So once the code closed since the last collection
// reaches an eighth of the budget, a collection is started (one at a time,
// in the background), and the closed code is unmapped soon after.
type codeBudget struct {
	limit   int64 // NoCodeBudget: unbounded
	log     func(msg string, args ...any)
	waitLog func(msg string, args ...any) // a load that waits for room
	collect func()                        // runtime.GC; tests count its calls

	closedSince atomic.Int64 // bytes of code closed since the last collection started
	collecting  atomic.Bool
	waiting     atomic.Int32 // loads waiting for room (reserve)

	mu   sync.Mutex
	used int64
	// loading is the room the loads' work under way has taken (reserve):
	// builds until their code is counted in used, snapshot start-ups
	// until they end. used+loading stays within limit but for one load
	// at a time (reserve).
	loading int64
	peak    int64         // the most used+loading has been once a load took its room, or its code was counted and trimmed
	waited  int64         // loads that waited for room
	freed   chan struct{} // closed when room may have come free; nil while no load waits
	mods    map[*Module]codeRef
	// refs counts, by code identity, the modules holding that code: code
	// several modules share (scripts on one runner, split snapshots) is
	// one copy of machine code, counted once.
	refs map[string]int
}

// codeRef is the code a module holds in the budget: its identity and size.
type codeRef struct {
	key  string
	size int64
}

// codeKey is the identity of c's machine code: wazero keeps one copy per
// runtime of a module's code, so code split from a snapshot (the same
// bytes for every script on one runner, validatedID "split …") is shared
// by every module on the same runtime and tier; any other code is m's own.
func codeKey(m *Module, c *compiled) string {
	if strings.HasPrefix(c.validated, "split ") {
		return fmt.Sprintf("%p %d %s", c.runtime, c.tier, c.validated)
	}
	return fmt.Sprintf("module %p", m)
}

func newCodeBudget(limit int64, log func(string, ...any)) *codeBudget {
	if limit == 0 {
		limit = DefaultCodeMemory
	}
	return &codeBudget{limit: limit, log: log, waitLog: log, collect: runtime.GC, mods: map[*Module]codeRef{}, refs: map[string]int{}}
}

// A load's work takes room in the code budget before it starts, once it
// has its slot (of the compilation pools, or of the start-up lanes): a
// compilation holds what its code will keep (codeCostFor) until the code
// is counted, a snapshot's start-up its interpreted code until it ends.
// Neither was counted before, and thirty Go reactors loading at once held
// 630 MiB of it beside the 512 MiB budget. A load waits, as long as its
// context lasts, until its room fits beside
// the code counted and the other loads' room, the least recently called
// idle code being closed to make room; it never fails for want of room,
// and one load at a time is admitted whatever it needs (a module larger
// than the budget, or code that running calls hold), so every load ends.

// loadRoom is the room one load's work holds in the code budget.
type loadRoom struct {
	b    *codeBudget
	n    int64 // guarded by b.mu
	done bool  // guarded by b.mu
}

// reserve waits for n bytes of room for module's load and takes them.
func (b *codeBudget) reserve(ctx context.Context, module string, n int64) (*loadRoom, error) {
	if b.limit < 0 {
		return nil, nil
	}
	logged := false
	for {
		b.trimTo(nil, n)
		b.mu.Lock()
		if b.loading == 0 || b.used+b.loading+n <= b.limit {
			b.loading += n
			b.peak = max(b.peak, b.used+b.loading)
			if logged {
				b.waited++
			}
			b.mu.Unlock()
			return &loadRoom{b: b, n: n}, nil
		}
		if b.freed == nil {
			b.freed = make(chan struct{})
		}
		freed := b.freed
		used, loading := b.used, b.loading
		b.waiting.Add(1) // before the lock goes: a call ending from now on wakes it
		b.mu.Unlock()
		if !logged {
			logged = true
			b.waitLog("module waits for room in the code budget to load (--code-memory)", "module", module,
				"needs", FormatBytes(n), "code", FormatBytes(used), "loading", FormatBytes(loading), "budget", FormatBytes(b.limit))
		}
		select {
		case <-freed:
			b.waiting.Add(-1)
		case <-ctx.Done():
			b.waiting.Add(-1)
			return nil, fmt.Errorf("waiting for room in the code budget to load: %w", context.Cause(ctx))
		}
	}
}

// wakeLocked wakes the loads waiting for room. b.mu is held.
func (b *codeBudget) wakeLocked() {
	if b.freed != nil {
		close(b.freed)
		b.freed = nil
	}
}

// release gives the room back; later calls do nothing.
func (r *loadRoom) release() {
	if r == nil {
		return
	}
	r.b.mu.Lock()
	r.releaseLocked()
	r.b.mu.Unlock()
}

func (r *loadRoom) releaseLocked() {
	if r.done {
		return
	}
	r.done = true
	r.b.loading -= r.n
	r.b.wakeLocked()
}

// loadStats returns the most code and load room the budget has held
// together, and the loads that waited for room.
func (b *codeBudget) loadStats() (peak, waited int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.peak, b.waited
}

// closed records code of size bytes closed by the budget and starts a
// collection when enough has been closed since the last one.
func (b *codeBudget) closed(size int64) {
	if b.closedSince.Add(size) < b.limit/8 || !b.collecting.CompareAndSwap(false, true) {
		return
	}
	b.closedSince.Store(0)
	go func() {
		defer b.collecting.Store(false)
		b.collect()
	}()
}

// added counts m's new code (once for code several modules share) and
// trims the others if over the limit.
func (b *codeBudget) added(m *Module, c *compiled) {
	r := codeRef{key: codeKey(m, c), size: c.size}
	b.mu.Lock()
	b.dropLocked(m)
	b.mods[m] = r
	if b.refs[r.key] == 0 {
		b.used += r.size
	}
	b.refs[r.key]++
	if c.room != nil && c.room.b == b {
		c.room.releaseLocked() // the code is counted now: its build's room goes back
	}
	b.mu.Unlock()
	// The module may have closed since its code was installed (a build
	// ending as it closes): Close stopped counting it before this counted
	// it again, and trim never closes a closed module's code. Read after
	// counting (Close marks the module closed, then stops counting it).
	m.slot.mu.Lock()
	closed := m.slot.closed
	m.slot.mu.Unlock()
	if closed {
		b.removed(m)
	}
	b.trim(m)
	b.mu.Lock()
	b.peak = max(b.peak, b.used+b.loading) // once idle code is closed
	b.mu.Unlock()
}

// removed stops counting m's code.
func (b *codeBudget) removed(m *Module) {
	b.mu.Lock()
	b.dropLocked(m)
	b.mu.Unlock()
}

// dropLocked forgets m's code; the code is no longer counted once no
// module holds it. b.mu is held.
func (b *codeBudget) dropLocked(m *Module) {
	r, ok := b.mods[m]
	if !ok {
		return
	}
	delete(b.mods, m)
	if b.refs[r.key]--; b.refs[r.key] <= 0 {
		delete(b.refs, r.key)
		b.used -= r.size
		b.wakeLocked()
	}
}

// usage returns the bytes of code counted and the limit.
func (b *codeBudget) usage() (used, limit int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used, b.limit
}

// trim closes least recently called code until the budget holds the
// code and the loads' room, never keep's and never code a call runs on.
// A load waiting for room is woken: the call that ended (trim runs at the
// end of every call) may have left code it can close.
func (b *codeBudget) trim(keep *Module) {
	if b.waiting.Load() > 0 {
		b.mu.Lock()
		b.wakeLocked()
		b.mu.Unlock()
	}
	b.trimTo(keep, 0)
}

// trimTo is trim leaving extra bytes of room besides, without waking.
func (b *codeBudget) trimTo(keep *Module, extra int64) {
	b.mu.Lock()
	if b.limit < 0 || b.used+b.loading+extra <= b.limit {
		b.mu.Unlock()
		return
	}
	cands := make([]*Module, 0, len(b.mods))
	for m := range b.mods {
		if m != keep && m.slot.src != nil {
			cands = append(cands, m)
		}
	}
	b.mu.Unlock()
	slices.SortFunc(cands, func(x, y *Module) int {
		return int(min(max(x.slot.lastUse.Load()-y.slot.lastUse.Load(), -1), 1))
	})
	for _, m := range cands {
		b.mu.Lock()
		over := b.used+b.loading+extra > b.limit
		b.mu.Unlock()
		if !over {
			return
		}
		if c := m.slot.evict(); c != nil {
			b.removed(m)
			_ = c.code.Close(context.Background())
			b.log("module code closed to stay within the code budget", "module", m.name, "code", FormatBytes(c.size))
			b.closed(c.size)
		}
	}
}

// CodeMemory returns the bytes of compiled code the engine counts now and
// its budget (NoCodeBudget when unbounded).
func (e *Engine) CodeMemory() (used, budget int64) { return e.code.usage() }

// LoadsWaiting returns how many loads (compilations and snapshot
// start-ups) wait now for room in the code budget.
func (e *Engine) LoadsWaiting() int { return int(e.code.waiting.Load()) }

// compilePool bounds the compilations running at once.
type compilePool chan struct{}

func (p compilePool) acquire(ctx context.Context) (func(), error) {
	select {
	case p <- struct{}{}:
		return func() { <-p }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("waiting to compile: %w", context.Cause(ctx))
	}
}

// slowLog logs a compilation that takes longer than Config.SlowCompile,
// every SlowCompile until the returned function is called.
func (e *Engine) slowLog(name string) (done func()) {
	start := time.Now()
	every := e.cfg.SlowCompile
	var mu sync.Mutex
	stopped := false
	var t *time.Timer
	tick := func() {
		mu.Lock()
		defer mu.Unlock()
		if stopped {
			return
		}
		e.log.Warn("still compiling a module", "module", name, "for", time.Since(start).Round(time.Second))
		t.Reset(every)
	}
	mu.Lock()
	t = time.AfterFunc(every, tick)
	mu.Unlock()
	return func() {
		mu.Lock()
		stopped = true
		t.Stop()
		mu.Unlock()
	}
}

// MemoryMargin is what the process is given above its budgets in
// Engine.MemoryCeiling: the Go heap's slack between collections, the
// host's own buffers, and the process's base.
const MemoryMargin = 256 << 20

// MemoryCeiling is the memory the process is meant to hold now: the code
// budget (its code and the loads' room), what the memory budget holds
// (the running instances, describe runs included) and MemoryMargin; 0
// when either budget is unbounded. wasmcp serve keeps the Go memory
// limit at it (internal/heapfloor's Ceiling), so that the heap's growth
// between collections does not double what the budgets bound.
func (e *Engine) MemoryCeiling() int64 {
	if e.mem == nil || e.code.limit < 0 {
		return 0
	}
	e.mem.mu.Lock()
	used := e.mem.used
	e.mem.mu.Unlock()
	return e.code.limit + used + MemoryMargin
}
