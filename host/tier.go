package host

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// The interpreter tier (docs/design/interpreter-tier.md). wazero's
// optimizing compiler takes seconds on a Go guest (a 3.6 MiB module: 5-7 s
// on a quiet 2-core machine); its interpreter compiles the same module in
// a fraction of that and runs it slower. With Config.InterpreterFirst a
// module whose compiled code is not known to be in the compilation cache
// is built for the interpreter first: it is described and serves its
// first calls from there while the optimizing compiler builds the
// compiled tier in the background (in the compilation pool). Once that is
// ready each new call runs on it; calls that started on the interpreter
// finish there, and the interpreted code is closed after the last of
// them. A module whose compiled code is in the cache (a warm start) is
// compiled directly, as without the tier.

// tier is the wazero engine a module's code was built for.
type tier uint8

const (
	tierCompiled tier = iota // the optimizing compiler
	tierInterp               // the interpreter
)

// String names the tier as CallStats.Tier and Footprint.Tier report it.
func (t tier) String() string {
	if t == tierInterp {
		return TierInterpreter
	}
	return TierCompiled
}

// TierInterpreter and TierCompiled name the tier that served a call
// (contract.CallStats.Tier) or that a module's code is built for
// (Footprint.Tier).
const (
	TierInterpreter = "interpreter"
	TierCompiled    = "compiled"
)

// interpFactor is the interpreter's code over the binary's size, less
// one: wazero's interpreter keeps the decoded module and its own
// instruction stream for every function, 22 times the binary's size on the
// Go word_count reactor (3.6 MiB of wasm, 79 MiB of Go heap after its
// interpreter compilation), against about 6 for compiled code (heap and
// machine code).
const interpFactor = 21

// codeCostFor estimates what a module's code keeps resident in a tier.
func codeCostFor(wasm []byte, t tier) int64 {
	if t == tierInterp {
		return int64(len(wasm)) * (1 + interpFactor)
	}
	return codeCost(wasm)
}

// firstTier is the tier m's code is built for now: the interpreter when
// the engine serves first calls from it and m's compiled code is not
// known to be in the compilation cache.
func (e *Engine) firstTier(m *Module) tier {
	if !e.cfg.InterpreterFirst || e.warm(m) {
		return tierCompiled
	}
	return tierInterp
}

// warm reports whether m's compiled code is known to be in the
// compilation cache: it was compiled in this process (the cache, on disk
// or in memory, keeps it), or a process with the same host build and
// settings compiled it into this cache directory (its tier marker, written
// after that compilation). A marker whose code wazero's cache no longer
// holds (pruned by --cache-max-bytes) costs one compilation at the
// compiler's speed, as without the tier.
func (e *Engine) warm(m *Module) bool {
	if m.slot.compiledOnce.Load() {
		return true
	}
	p := e.tierMarker(m)
	if p == "" {
		return false
	}
	_, err := os.Stat(p)
	return err == nil
}

// tierMarker is the path of m's marker that its compiled code is in the
// on-disk cache, "" without one.
func (e *Engine) tierMarker(m *Module) string {
	if e.dir == "" {
		return ""
	}
	h := sha256.New()
	put := func(s string) {
		var n [8]byte
		binary.LittleEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	put(hostVersion())
	put(m.hash)
	put(strconv.FormatUint(uint64(m.policy.Limits.memoryPages()), 10))
	put(strconv.FormatBool(e.cfg.InstrumentLoops))
	put(strconv.FormatBool(m.policy.NoSnapshot))
	return filepath.Join(e.dir, "tier", hex.EncodeToString(h.Sum(nil)))
}

// markWarm records that m's compiled code is in the compilation cache.
func (e *Engine) markWarm(m *Module) {
	m.slot.compiledOnce.Store(true)
	p := e.tierMarker(m)
	if p == "" {
		return
	}
	if _, err := os.Stat(p); err == nil {
		return
	}
	if os.MkdirAll(filepath.Dir(p), 0o700) != nil {
		return
	}
	_ = os.WriteFile(p, nil, 0o600)
}

// upgrade builds m's compiled tier in the background from wasm (the bytes
// its interpreted code was built from) and, once it is ready, makes it the
// code of every new call.
func (m *Module) upgrade(wasm []byte) {
	e := m.engine
	s := &m.slot
	s.mu.Lock()
	if s.upgrading || s.closed {
		s.mu.Unlock()
		return
	}
	s.upgrading = true
	s.upgraded = make(chan struct{})
	s.mu.Unlock()
	if e.descs != nil && e.descs.hasModule(m.hash) {
		// Read again once its turn comes: the modules waiting for one
		// (thirty Go reactors loaded at once) hold none of their bytes.
		wasm = nil
	}
	go func() {
		// The interpreter's builds go first: a module being listed or
		// called for the first time waits for no background compilation
		// of the CPU it needs.
		e.interpBuilds.wait()
		release, _ := e.bgPool.acquire(context.Background())
		defer release()
		start := time.Now()
		var c *compiled
		w, err := m.upgradeSource(wasm)
		if err == nil {
			c, err = e.build(context.WithValue(context.Background(), backgroundBuild{}, true), m, w, tierCompiled)
		}
		s.mu.Lock()
		s.upgrading = false
		s.endUpgrade()
		if err != nil {
			s.mu.Unlock()
			e.log.Warn("compiling a module for the compiler tier failed; its calls stay on the interpreter",
				"module", m.name, "err", err)
			return
		}
		if s.closed {
			s.mu.Unlock()
			c.closeBuilt(context.Background())
			return
		}
		old := s.c
		s.c = c
		s.valid = c.validated
		closeOld := old != nil && old.refs == 0
		if old != nil && !closeOld {
			old.retired = true // closed by the last call's release
		}
		s.mu.Unlock()
		if closeOld {
			e.retire(m, old)
		}
		s.reactor.Store(c.reactor)
		e.markWarm(m)
		e.upgrades.Add(1)
		took := time.Since(start)
		e.log.Info("module compiled; new calls run on the compiled code", "module", m.name, "sha256", m.hash[:12],
			"took", took.Round(time.Millisecond), "code", FormatBytes(c.size))
		e.code.added(m, c)
		e.compiled(m, c, took)
	}()
}

// upgradeSource is the module's bytes for its compiled tier: wasm, or
// when nil the copy the engine keeps (else the module's source).
func (m *Module) upgradeSource(wasm []byte) ([]byte, error) {
	if wasm != nil {
		return wasm, nil
	}
	if w, ok := m.engine.descs.module(m.hash); ok && hexSum(w) == m.hash {
		return w, nil
	}
	if m.slot.src == nil {
		return nil, errors.New("the module's bytes are no longer at hand")
	}
	w, err := m.slot.src()
	if err == nil && hexSum(w) != m.hash {
		err = errors.New("the module's file changed since it was loaded")
	}
	return w, err
}

// endUpgrade wakes the calls waiting for an interpreter slot of s's module
// (codeSlot.acquire): its compiled tier's build ended, or the module
// closed. Called with s.mu held.
func (s *codeSlot) endUpgrade() {
	if s.upgraded != nil {
		close(s.upgraded)
		s.upgraded = nil
	}
}

// retire closes interpreted code the compiled tier replaced, once no call
// runs on it, and counts it as closed code for the code budget, whose
// collection then unmaps it soon after: the interpreter's code is the
// larger tier (79 MiB of heap for the 3.6 MiB Go reactor), and without a
// collection it would stay resident beside the compiled code until the
// heap grew enough for one.
func (e *Engine) retire(m *Module, c *compiled) {
	_ = c.code.Close(context.Background())
	e.retired.Add(1)
	e.code.closed(c.size)
}

// interpSlots is how many interpreted calls of modules whose compiled tier
// is being built run at once: the cores left once each background
// compilation (Engine.bgPool, one core each: the host does not ask wazero
// for compilation workers) has one, at least one.
func interpSlots(bgBuilds int) int { return max(1, runtime.GOMAXPROCS(0)-bgBuilds) }

// Tier names the tier of the code the module's next call runs on
// (TierInterpreter or TierCompiled), "" while it has none.
func (m *Module) Tier() string {
	m.slot.mu.Lock()
	defer m.slot.mu.Unlock()
	if m.slot.c == nil {
		return ""
	}
	return m.slot.c.tier.String()
}

// backgroundBuild marks the context of a background build of the compiled
// tier: it holds a slot of Engine.bgPool (taken before the module's bytes
// are read and prepared), which leaves half the compilation pool (at
// least one core of two) to the interpreter's builds and calls.
type backgroundBuild struct{}

// busyCount counts work under way and lets others wait until there is
// none (the zero value: none).
type busyCount struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n drops to 0
}

func (b *busyCount) enter() {
	b.mu.Lock()
	if b.n == 0 {
		b.idle = make(chan struct{})
	}
	b.n++
	b.mu.Unlock()
}

func (b *busyCount) leave() {
	b.mu.Lock()
	if b.n--; b.n == 0 {
		close(b.idle)
	}
	b.mu.Unlock()
}

// wait returns once nothing is under way.
func (b *busyCount) wait() {
	b.mu.Lock()
	n, idle := b.n, b.idle
	b.mu.Unlock()
	if n > 0 {
		<-idle
	}
}
