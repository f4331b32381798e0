package host

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
)

// compilerGate holds back the compiler tier's builds of a test engine
// until open is called (fail: they fail instead of building), so a test
// sees the interpreter tier serve while the compiled code is "compiling",
// without racing a real compilation.
type compilerGate struct {
	open     chan struct{}
	fail     atomic.Bool
	waiting  chan struct{} // one value per compiler build that started waiting
	interps  atomic.Int64  // interpreter builds
	compiles atomic.Int64  // compiler builds let through
}

func (g *compilerGate) hook(_ string, t tier) error {
	if t == tierInterp {
		g.interps.Add(1)
		return nil
	}
	select {
	case g.waiting <- struct{}{}:
	default:
	}
	<-g.open
	if g.fail.Load() {
		return errors.New("test: the compiler tier is held back")
	}
	g.compiles.Add(1)
	return nil
}

// tierEngine is an engine that serves first calls from the interpreter,
// its compiler tier held back by the returned gate (opened, failing, at
// the test's end).
func tierEngine(t *testing.T, cfg Config) (*Engine, *compilerGate) {
	t.Helper()
	if cfg.CacheDir == "" {
		cfg.CacheDir = testCache
	}
	cfg.Logger = quietLogger
	cfg.InterpreterFirst = true
	e, err := NewEngine(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g := &compilerGate{open: make(chan struct{}), waiting: make(chan struct{}, 16)}
	e.beforeBuild = g.hook
	t.Cleanup(func() {
		g.fail.Store(true)
		select {
		case <-g.open:
		default:
			close(g.open)
		}
		e.Close(context.Background())
	})
	return e, g
}

// forgetCompiled removes the marker that says the probe's compiled code is
// in e's cache (an earlier test run wrote it into the shared test cache),
// so that loading it starts on the interpreter.
func forgetCompiled(t *testing.T, e *Engine, p Policy) {
	t.Helper()
	p.Limits = p.Limits.WithDefaults(e.cfg.Limits)
	m, err := e.newModule("probe", ModuleHash(probeWasm), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(e.tierMarker(m)); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
}

// statsCall calls a probe tool and returns its result and the tier that
// served it.
func statsCall(t *testing.T, m *Module, peer contract.Peer, tool string) (string, string, error) {
	t.Helper()
	st := &contract.CallStats{}
	ctx := contract.WithCallStats(context.Background(), st)
	params := `{"name":"` + tool + `","arguments":{}}`
	reply, err := m.Call(ctx, abi.MethodToolsCall, []byte(params), peer)
	if err != nil {
		return "", st.Tier, err
	}
	if reply.Error != nil {
		return "", st.Tier, reply.Error
	}
	return string(reply.Result), st.Tier, nil
}

// heldPeer answers the probe's elicitation once released.
type heldPeer struct {
	asked   chan struct{}
	release chan struct{}
}

func (p *heldPeer) Notify(context.Context, string, []byte) {}

func (p *heldPeer) Request(ctx context.Context, method string, _ []byte) ([]byte, error) {
	close(p.asked)
	select {
	case <-p.release:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return []byte(`{"action":"accept","content":{"name":"Ada"}}`), nil
}

func TestInterpreterTierServesWhileCompiling(t *testing.T) {
	limits := Limits{Timeout: 2 * time.Minute}
	ref := loadProbe(t, newEngine(t, limits), Policy{})
	e, gate := tierEngine(t, Config{Limits: limits, InstrumentLoops: true})
	forgetCompiled(t, e, Policy{})
	// Load must not wait for the compiler tier, which the gate holds back.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	m, err := e.Load(ctx, "probe", probeWasm, Policy{})
	if err != nil {
		t.Fatalf("loading with the compiler tier held back: %v", err)
	}
	if got := m.Tier(); got != TierInterpreter {
		t.Fatalf("tier after load = %q, want %q", got, TierInterpreter)
	}
	<-gate.waiting // the compiler tier is being built in the background
	interpFP := m.Footprint()
	if used, _ := e.CodeMemory(); interpFP.Tier != TierInterpreter || used != interpFP.Code || used == 0 {
		t.Fatalf("interpreted code: footprint %+v, code budget counts %d", interpFP, used)
	}
	want, _ := json.Marshal(ref.Description())
	got, _ := json.Marshal(m.Description())
	if string(got) != string(want) {
		t.Fatalf("description from the interpreter:\n%s\nwant\n%s", got, want)
	}
	for _, tool := range []string{"count", "count", "random"} {
		wantRes, _, err := statsCall(t, ref, nil, tool)
		if err != nil {
			t.Fatal(err)
		}
		res, tier, err := statsCall(t, m, nil, tool)
		if err != nil || tier != TierInterpreter {
			t.Fatalf("%s before the compiler finished: tier %q, %v", tool, tier, err)
		}
		if tool == "random" {
			// Random values differ per instance; the answer's shape does not.
			wantRes, res = shapeOf(t, wantRes), shapeOf(t, res)
		}
		if res != wantRes {
			t.Fatalf("%s on the interpreter = %s, compiled = %s", tool, res, wantRes)
		}
	}

	// A call started on the interpreter, still running when the compiled
	// code takes over, finishes on the interpreter.
	peer := &heldPeer{asked: make(chan struct{}), release: make(chan struct{})}
	type result struct {
		res, tier string
		err       error
	}
	inflight := make(chan result, 1)
	go func() {
		res, tier, err := statsCall(t, m, peer, "ask")
		inflight <- result{res, tier, err}
	}()
	<-peer.asked
	close(gate.open)
	for deadline := time.Now().Add(5 * time.Minute); m.Tier() != TierCompiled; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the compiled tier never took over")
		}
	}
	res, tier, err := statsCall(t, m, nil, "count")
	if err != nil || tier != TierCompiled || !strings.Contains(res, `"1"`) {
		t.Fatalf("a call after the compiled tier took over: %s, tier %q, %v", res, tier, err)
	}
	close(peer.release)
	r := <-inflight
	if r.err != nil || r.tier != TierInterpreter || !strings.Contains(r.res, "Ada") {
		t.Fatalf("the call in flight: %s, tier %q, %v; want it answered on the interpreter", r.res, r.tier, r.err)
	}
	if n := e.upgrades.Load(); n != 1 {
		t.Fatalf("upgrades = %d, want 1", n)
	}
	// The code budget counts the compiled code now, not the interpreter's.
	if fp := m.Footprint(); fp.Tier != TierCompiled || fp.Code != interpFP.Code/(1+interpFactor)*(1+codeFactor) {
		t.Fatalf("footprint after the upgrade: %+v; on the interpreter %+v", fp, interpFP)
	}
	if used, _ := e.CodeMemory(); used != m.Footprint().Code {
		t.Fatalf("code budget counts %d, the module's code is %d", used, m.Footprint().Code)
	}
}

// shapeOf is a JSON result with its text content blanked.
func shapeOf(t *testing.T, res string) string {
	t.Helper()
	var v struct {
		Content []struct {
			Type string `json:"type"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(res), &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestInterpreterTierWarmStartSkipsIt(t *testing.T) {
	limits := Limits{Timeout: 2 * time.Minute}
	e, gate := tierEngine(t, Config{Limits: limits})
	forgetCompiled(t, e, Policy{})
	close(gate.open)
	m := loadProbe(t, e, Policy{})
	if got := m.Tier(); got != TierInterpreter {
		t.Fatalf("cold load tier = %q", got)
	}
	for deadline := time.Now().Add(5 * time.Minute); m.Tier() != TierCompiled; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the compiled tier never took over")
		}
	}
	// A restart finds the compiled code in the cache: no interpreter.
	e2, gate2 := tierEngine(t, Config{Limits: limits})
	close(gate2.open)
	m2 := loadProbe(t, e2, Policy{})
	if got := m2.Tier(); got != TierCompiled || gate2.interps.Load() != 0 {
		t.Fatalf("warm load: tier %q, %d interpreter builds; want compiled, none", got, gate2.interps.Load())
	}
	if _, tier, err := statsCall(t, m2, nil, "count"); err != nil || tier != TierCompiled {
		t.Fatalf("warm call: tier %q, %v", tier, err)
	}
}

func TestInterpreterTierWalls(t *testing.T) {
	limits := Limits{Timeout: time.Minute, OutputBytes: 1 << 20, MemoryBytes: 64 << 20}
	short := limits
	short.Timeout = 500 * time.Millisecond
	for _, instrument := range []bool{true, false} {
		name := "instrumented"
		if !instrument {
			name = "close-on-done"
		}
		t.Run(name, func(t *testing.T) {
			e, _ := tierEngine(t, Config{Limits: limits, InstrumentLoops: instrument})
			forgetCompiled(t, e, Policy{})
			forgetCompiled(t, e, Policy{Limits: short})
			m := loadProbe(t, e, Policy{})
			mShort := loadProbe(t, e, Policy{Limits: short})
			for _, mod := range []*Module{m, mShort} {
				if mod.Tier() != TierInterpreter {
					t.Fatalf("tier %q, want the interpreter (the compiler is held back)", mod.Tier())
				}
			}
			mShort.slot.mu.Lock()
			interrupt := mShort.slot.c.interrupt
			mShort.slot.mu.Unlock()
			if interrupt {
				// The flag would be set from the deadline's goroutine
				// while interpreted (Go) code reads it: a data race.
				t.Fatal("interpreted code is instrumented; want wazero's context check")
			}
			cases := []struct {
				mod        *Module
				tool, args string
				want       string
			}{
				{mShort, "loop", "{}", "deadline of 500ms exceeded"},
				{m, "alloc", `{"n":200}`, "memory reached the limit of 64MiB"},
				{m, "flood", `{"n":4}`, "wrote more than 1MiB to stdout and stderr (limit output)"},
			}
			for _, c := range cases {
				done := make(chan error, 1)
				go func() {
					_, err := callTool(t, c.mod, nil, c.tool, c.args)
					done <- err
				}()
				var err error
				select {
				case err = <-done:
				case <-time.After(2 * time.Minute):
					t.Fatalf("%s on the interpreter did not stop", c.tool)
				}
				if !IsKind(err, KindLimit) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("%s on the interpreter: %v; want a limit error containing %q", c.tool, err, c.want)
				}
			}
			if res, tier, err := statsCall(t, m, nil, "count"); err != nil || tier != TierInterpreter || !strings.Contains(res, `"1"`) {
				t.Fatalf("after the walls: %s, tier %q, %v", res, tier, err)
			}
		})
	}
}

func TestInterpreterTierCodeBudgetClosesIt(t *testing.T) {
	e, gate := tierEngine(t, Config{Limits: Limits{Timeout: 2 * time.Minute}})
	forgetCompiled(t, e, Policy{})
	a, err := e.Open(context.Background(), "a", probeWasm, "", Policy{}, func() ([]byte, error) { return probeWasm, nil })
	if err != nil {
		t.Fatal(err)
	}
	// Listed from its cached description; its first build is for the
	// interpreter.
	if err := a.Compile(context.Background()); err != nil {
		t.Fatal(err)
	}
	size := a.Footprint().Code
	if a.Tier() != TierInterpreter || size != int64(len(mustPrepare(t)))*(1+interpFactor) {
		t.Fatalf("a: tier %q, code %d", a.Tier(), size)
	}
	// a's code is counted just after its build hands it out: wait for it.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if used, _ := e.CodeMemory(); used >= size {
			break
		}
	}
	// Room for one module's interpreted code: loading b closes a's.
	e.code.mu.Lock()
	e.code.limit = size + size/2
	e.code.mu.Unlock()
	b, err := e.Open(context.Background(), "b", probeWasm, "", Policy{}, func() ([]byte, error) { return probeWasm, nil })
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Compile(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The budget counts b's code, and trims a's, just after b's build
	// hands it out (code.go: after the flight is done), so Compile may
	// return first: wait for the trim, bounded.
	for deadline := time.Now().Add(10 * time.Second); a.Compiled() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if a.Compiled() || !b.Compiled() {
		t.Fatalf("over the code budget: a has code %v, b %v; want a's interpreted code closed", a.Compiled(), b.Compiled())
	}
	// a's next call builds its interpreted code again (the compiler is
	// still held back) and answers.
	if res, tier, err := statsCall(t, a, nil, "count"); err != nil || tier != TierInterpreter || !strings.Contains(res, `"1"`) {
		t.Fatalf("a after its code was closed: %s, tier %q, %v", res, tier, err)
	}
	if used, limit := e.CodeMemory(); used > limit {
		t.Fatalf("code budget %d of %d", used, limit)
	}
	_ = gate
}

// mustPrepare is the probe as the engine compiles it.
func mustPrepare(t *testing.T) []byte {
	t.Helper()
	w, _, err := prepare(probeWasm, DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// TestInterpreterTierLeavesTheCompilerItsCore runs more concurrent calls
// on interpreted code than the engine's interpreter slots while the
// compiled tier is being built: only as many as the slots run on the
// interpreter, the others wait, so the interpreted calls cannot starve the
// compilation (issue 27: 16 clients kept a Go reactor's 2 cores busy on
// the interpreter and its compilation never finished); once the compiled
// code is ready the waiting calls run on it, and the interpreted code is
// closed after the last call on it.
func TestInterpreterTierLeavesTheCompilerItsCore(t *testing.T) {
	const slots, n = 2, 7
	e, gate := tierEngine(t, Config{Limits: Limits{Timeout: 2 * time.Minute}})
	e.islots = make(chan struct{}, slots)
	forgetCompiled(t, e, Policy{})
	m := loadProbe(t, e, Policy{})
	<-gate.waiting // the compiled tier's build started and is held back
	m.slot.mu.Lock()
	interp := m.slot.c
	m.slot.mu.Unlock()
	if interp.tier != tierInterp {
		t.Fatalf("tier after load %v, want the interpreter", interp.tier)
	}
	type result struct {
		tier string
		err  error
	}
	results := make(chan result, n)
	peers := make([]*heldPeer, n)
	for i := range peers {
		peers[i] = &heldPeer{asked: make(chan struct{}), release: make(chan struct{})}
		go func() {
			res, tier, err := statsCall(t, m, peers[i], "ask")
			if err == nil && !strings.Contains(res, "Ada") {
				err = errors.New("answer without the elicited name: " + res)
			}
			results <- result{tier, err}
		}()
	}
	asked := func() int {
		k := 0
		for _, p := range peers {
			select {
			case <-p.asked:
				k++
			default:
			}
		}
		return k
	}
	// State, not timing: wait until every call is either running (it
	// asked its peer) or waiting for a slot.
	for deadline := time.Now().Add(2 * time.Minute); asked()+int(e.interpWaiting.Load()) < n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d calls asked, %d wait for a slot; want %d in all", asked(), e.interpWaiting.Load(), n)
		}
	}
	m.slot.mu.Lock()
	refs := interp.refs
	m.slot.mu.Unlock()
	if k, w := asked(), e.interpWaiting.Load(); k != slots || w != n-slots || refs != slots {
		t.Fatalf("while compiling: %d calls run on the interpreter (%d refs), %d wait; want %d running, %d waiting", k, refs, w, slots, n-slots)
	}
	close(gate.open)
	for deadline := time.Now().Add(5 * time.Minute); m.Tier() != TierCompiled; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the compiled tier never took over")
		}
	}
	for _, p := range peers {
		close(p.release)
	}
	tiers := map[string]int{}
	for range n {
		r := <-results
		if r.err != nil {
			t.Fatal(r.err)
		}
		tiers[r.tier]++
	}
	if tiers[TierInterpreter] != slots || tiers[TierCompiled] != n-slots {
		t.Fatalf("tiers of the calls: %v; want %d on the interpreter (those running when it compiled), %d compiled", tiers, slots, n-slots)
	}
	if m.Tier() != TierCompiled || e.retired.Load() != 1 || len(e.islots) != 0 || e.interpWaiting.Load() != 0 {
		t.Fatalf("after the calls: tier %q, %d interpreted codes closed (want 1), %d slots held, %d waiting",
			m.Tier(), e.retired.Load(), len(e.islots), e.interpWaiting.Load())
	}
	// Later calls run compiled and take no slot.
	if _, tier, err := statsCall(t, m, nil, "count"); err != nil || tier != TierCompiled {
		t.Fatalf("a later call: tier %q, %v", tier, err)
	}
}
