package host

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/internal/wasmrewrite"
)

// NoMemoryBudget as Config.MemoryBudget admits every call, whatever the
// running instances may use together.
const NoMemoryBudget = -1

// DefaultBudgetWait is how long a call waits for room in the memory budget
// when Config.BudgetWait is zero.
const DefaultBudgetWait = 5 * time.Second

// memBudget bounds the memory the running instances hold together. A call
// is admitted with what its instance takes at once (instanceCost: its
// tables, globals and call stack, and its initial linear memory); its
// linear memory then takes from the budget as it grows (callMemory), and a
// memory.grow the budget cannot cover fails in the guest (memory.grow
// returns -1), which the call's error then names. What a call holds goes
// back when it ends.
//
// The budget is shared: one module, and one principal, may hold at most
// share of it (half), so neither can take it all from the others. A call
// that does not fit waits, first come first served among the calls the
// whole budget holds back (a large call is not passed by small ones); a
// call held back only by its own module's or principal's share does not
// hold back the others.
//
// No tenant can corner it: every module of the catalog that has no call
// running has the room of one call (its admission cost) kept for it, up to
// half the budget in all (reserveFor). The calls of the other modules, and
// their memory's growth, never take that room, so a module's first call is
// admitted at once, ahead of the calls waiting, however many calls other
// modules run under however many names and callers, as long as the idle
// modules' calls fit in half the budget (with calls of 177 MiB, 34 modules
// under the default budget of 12 GiB, 2 under 1 GiB; past that, the half
// is shared and a first call may wait for a call to end).
type memBudget struct {
	total int64
	share int64 // the most one module or one principal holds
	wait  time.Duration

	mu   sync.Mutex
	used int64
	mods map[string]int64
	// slots are the catalog's modules by name, each with its admission
	// cost (register); nameCost is the largest of each name's, idleSum
	// the sum of nameCost over the names with no call running.
	slots    map[string]map[*Module]int64
	nameCost map[string]int64
	idleSum  int64
	users    map[string]int64
	queue    []*memWaiter
	freed    chan struct{} // closed at the next release; nil until someone waits for one
}

// memWaiter is a call waiting for room.
type memWaiter struct {
	ch    *memCharge
	n     int64
	ready chan struct{}
	in    bool // admitted
}

// memCharge is what one call holds of the budget.
type memCharge struct {
	module, principal string
	held              int64
	queued            bool // its admission waited (or timed out waiting)
}

// errMemoryBudget marks the errors of a call the memory budget could not
// admit, or whose memory it could not let grow, for want of room the
// running calls hold (it may run once they end).
var errMemoryBudget = errors.New("the memory budget is spent")

// newMemBudget returns the budget for a Config's MemoryBudget (0: the
// default, DefaultMemoryBudget), or nil for NoMemoryBudget.
func newMemBudget(bytes int64, wait time.Duration) *memBudget {
	switch {
	case bytes == NoMemoryBudget:
		return nil
	case bytes <= 0:
		bytes = DefaultMemoryBudget()
	}
	if wait <= 0 {
		wait = DefaultBudgetWait
	}
	return &memBudget{total: bytes, share: bytes / 2, wait: wait, mods: map[string]int64{}, users: map[string]int64{},
		slots: map[string]map[*Module]int64{}, nameCost: map[string]int64{}}
}

// instanceCost is what one instance of a module under l takes from the
// budget when its call is admitted, before its linear memory: its tables
// at their cap, its globals (wazero allocates about 90 bytes a global for
// every instance) and its call stack at wazero's ceiling (stackBytes:
// wazero grows the stack with no hook a host could refuse, so its reach
// is charged at once). The linear memory is charged as it grows.
func instanceCost(l Limits, info *wasmrewrite.Info) int64 {
	cost := int64(l.TableElements)*wasmrewrite.TableElementBytes + stackBytes
	if info != nil {
		cost += int64(info.Globals) * globalBytes
	}
	return cost
}

// wazeroStackCeiling is the stack length (bytes) past which wazero's
// compiler engine refuses to grow a call's stack and traps with "stack
// overflow" (callStackCeiling in wazero 1.12's internal/engine/wazevo; its
// comment says 400 MB, but it counts the bytes of a []byte). wazero gives a
// host no way to lower it.
const wazeroStackCeiling = 50_000_000

// stackBytes is the most one call's stack holds at once: the last growth
// below the ceiling allocates twice the old length (up to 100 MB) while the
// old stack (up to 50 MB) is still live, to copy it, plus the frames of the
// host functions around it. TestStackWithinItsCharge measures it: 148 MB.
const stackBytes = 3*wazeroStackCeiling + 10<<20

// growthStep is the linear memory past its initial size a call is
// admitted with (within its cap), so that a call that grows a little does
// not find the budget spent on its first pages.
const growthStep = 16 << 20

// globalBytes is what wazero allocates per global per instance (measured:
// 88 bytes with 100,000 globals), rounded up.
const globalBytes = 96

// fits reports whether one instance of cost can ever be admitted: it
// must fit in one module's share of the budget.
func (b *memBudget) fits(cost int64) error {
	if b != nil && cost > b.share {
		return fmt.Errorf("one instance takes %s at its start (limits table_elements, its globals, its initial memory and its call stack), more than the half of the server's memory budget of %s one module may hold (--memory-budget)",
			FormatBytes(cost), FormatBytes(b.total))
	}
	return nil
}

// register keeps the room of one call of m, cost, while its module has no
// call running; cost 0 forgets m (closed). Called again when m's cost is
// known exactly (compiled).
func (b *memBudget) register(m *Module, cost int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	name := m.name
	if cost > 0 {
		if b.slots[name] == nil {
			b.slots[name] = map[*Module]int64{}
		}
		b.slots[name][m] = cost
	} else {
		delete(b.slots[name], m)
		if len(b.slots[name]) == 0 {
			delete(b.slots, name)
		}
	}
	var c int64
	for _, v := range b.slots[name] {
		c = max(c, v)
	}
	if b.mods[name] == 0 {
		b.idleSum += c - b.nameCost[name]
	}
	if c > 0 {
		b.nameCost[name] = c
	} else {
		delete(b.nameCost, name)
	}
	if len(b.queue) > 0 {
		b.admitLocked()
	}
}

// reserveFor is the room kept for the modules with no call running other
// than module: at most half the budget (b.mu held).
func (b *memBudget) reserveFor(module string) int64 {
	r := b.idleSum
	if b.mods[module] == 0 {
		r -= b.nameCost[module] // its own room is for this call
	}
	return min(r, b.total/2)
}

// room says whether n more bytes fit for ch ("" when they do), and
// whether it is the whole budget (not a share) that is short.
func (b *memBudget) room(ch *memCharge, n int64) (why string, whole bool) {
	switch {
	case b.used+n > b.total-b.reserveFor(ch.module):
		return fmt.Sprintf("the server's memory budget of %s is held by running calls and the room kept for modules with none", FormatBytes(b.total)), true
	case b.mods[ch.module]+n > b.share:
		return fmt.Sprintf("module %s's running calls hold its share (half) of the server's memory budget of %s", ch.module, FormatBytes(b.total)), false
	case ch.principal != "" && b.users[ch.principal]+n > b.share:
		return fmt.Sprintf("the calls of %s hold their share (half) of the server's memory budget of %s", ch.principal, FormatBytes(b.total)), false
	}
	return "", false
}

// take adds n to what ch holds (b.mu held).
func (b *memBudget) take(ch *memCharge, n int64) {
	if b.mods[ch.module] == 0 && n > 0 {
		b.idleSum -= b.nameCost[ch.module] // no longer idle
	}
	b.used += n
	b.mods[ch.module] += n
	if ch.principal != "" {
		b.users[ch.principal] += n
	}
	ch.held += n
}

// acquire admits a call that takes n at once, recording it in ch (whose
// module and principal are set). It waits at most wait (none: until ctx
// ends) for running calls to give room back.
func (b *memBudget) acquire(ctx context.Context, ch *memCharge, n int64, wait time.Duration) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	why, _ := b.room(ch, n)
	if why == "" && (b.mods[ch.module] == 0 || !b.blockedLocked()) {
		// A module's first call uses the room kept for it, ahead of the
		// calls waiting.
		b.take(ch, n)
		b.mu.Unlock()
		return nil
	}
	ch.queued = true
	w := &memWaiter{ch: ch, n: n, ready: make(chan struct{})}
	b.queue = append(b.queue, w)
	b.mu.Unlock()
	var timeout <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-w.ready:
		return nil
	case <-timeout:
	case <-ctx.Done():
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if w.in {
		return nil
	}
	b.queue = slices.DeleteFunc(b.queue, func(x *memWaiter) bool { return x == w })
	why, _ = b.room(ch, n)
	b.admitLocked()
	if ctx.Err() != nil {
		return &GuestError{Module: ch.module, Kind: KindCanceled, Msg: "canceled while waiting for memory", Err: ctx.Err()}
	}
	if why == "" {
		why = "calls waiting before it hold back the server's memory budget of " + FormatBytes(b.total)
	}
	return &GuestError{Module: ch.module, Kind: KindLimit, Err: errMemoryBudget,
		Msg: fmt.Sprintf("busy: %s; waited %s for the %s this call takes at its start (--memory-budget)", why, wait, FormatBytes(n))}
}

// blockedLocked reports whether a waiting call is held back by the whole
// budget: a newcomer then queues behind it.
func (b *memBudget) blockedLocked() bool {
	for _, w := range b.queue {
		if _, whole := b.room(w.ch, w.n); whole {
			return true
		}
	}
	return false
}

// admitLocked admits the waiting calls that fit, in order; past the first
// the whole budget holds back, only the first calls of modules with none
// running (the room kept for them).
func (b *memBudget) admitLocked() {
	blocked := false
	for i := 0; i < len(b.queue); {
		w := b.queue[i]
		why, whole := b.room(w.ch, w.n)
		if why == "" && (!blocked || b.mods[w.ch.module] == 0) {
			b.take(w.ch, w.n)
			w.in = true
			close(w.ready)
			b.queue = slices.Delete(b.queue, i, i+1)
			continue
		}
		blocked = blocked || whole
		i++
	}
}

// grow takes n more for a running call whose memory grows, without
// waiting. It returns why it cannot ("" when it did), and whether the call
// could have it were the others' calls to end (false: n does not fit in
// the call's share even alone).
func (b *memBudget) grow(ch *memCharge, n int64) (why string, later bool) {
	if b == nil {
		return "", false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if why, _ = b.room(ch, n); why != "" {
		if ch.held+n > b.share {
			return fmt.Sprintf("the call would hold more than the half of the server's memory budget of %s one module or principal may hold", FormatBytes(b.total)), false
		}
		return why, true
	}
	b.take(ch, n)
	return "", false
}

// force takes n for ch whether it fits or not (an instance's initial
// memory, which wazero cannot be refused).
func (b *memBudget) force(ch *memCharge, n int64) {
	if b != nil {
		b.mu.Lock()
		b.take(ch, n)
		b.mu.Unlock()
	}
}

// release gives back what ch holds and admits the calls that now fit.
func (b *memBudget) release(ch *memCharge) {
	if b == nil || ch.held == 0 {
		return
	}
	b.mu.Lock()
	b.used -= ch.held
	if v := b.mods[ch.module] - ch.held; v > 0 {
		b.mods[ch.module] = v
	} else {
		delete(b.mods, ch.module)
		b.idleSum += b.nameCost[ch.module] // idle again: its room is kept
	}
	if ch.principal != "" {
		if v := b.users[ch.principal] - ch.held; v > 0 {
			b.users[ch.principal] = v
		} else {
			delete(b.users, ch.principal)
		}
	}
	ch.held = 0
	if len(b.queue) > 0 {
		b.admitLocked()
	}
	if b.freed != nil {
		close(b.freed)
		b.freed = nil
	}
	b.mu.Unlock()
}

// released returns a channel closed at the next release.
func (b *memBudget) released() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.freed == nil {
		b.freed = make(chan struct{})
	}
	return b.freed
}

// waitFor is how long a call waits for room (0 without a budget).
func (b *memBudget) waitFor() time.Duration {
	if b == nil {
		return 0
	}
	return b.wait
}

// principalOf names the caller of a call for the budget's shares
// (Config.Principal), "" when none (the call then counts against its
// module's share only).
func (e *Engine) principalOf(ctx context.Context) string {
	if e.cfg.Principal == nil {
		return ""
	}
	return e.cfg.Principal(ctx)
}

// usage returns the bytes held now.
func (b *memBudget) usage() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// DefaultMemoryBudget is half the memory this process may use: its cgroup
// v2 limit (/sys/fs/cgroup/memory.max) when it has one, else the machine's
// memory (/proc/meminfo), else 4 GiB. Half, because an instance costs the
// host more than its caps (the pooled buffer it outgrew, its stack, the
// Go heap around it): eight instances at the 256 MiB memory cap were
// measured at about twice that each.
func DefaultMemoryBudget() int64 {
	if n, err := cgroupLimit("/sys/fs/cgroup/memory.max"); err == nil {
		return n / 2
	}
	if n, err := memTotal("/proc/meminfo"); err == nil {
		return n / 2
	}
	return 2 << 30
}

// cgroupLimit reads a cgroup v2 memory.max ("max" is no limit: an error).
func cgroupLimit(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	s := string(bytes.TrimSpace(b))
	if s == "max" {
		return 0, errors.New("no cgroup memory limit")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%s: %q is not a byte count", path, s)
	}
	return n, nil
}

// memTotal reads MemTotal from /proc/meminfo.
func memTotal(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var kb int64
		if _, err := fmt.Sscanf(sc.Text(), "MemTotal: %d kB", &kb); err == nil && kb > 0 {
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("%s: no MemTotal", path)
}
