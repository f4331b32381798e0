package host

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/wasmcp/wasmcp/internal/wasmrewrite"
)

// NoMemoryBudget as Config.MemoryBudget admits every call, whatever the
// running instances may use together.
const NoMemoryBudget = -1

// DefaultBudgetWait is how long a call waits for room in the memory budget
// when Config.BudgetWait is zero.
const DefaultBudgetWait = 5 * time.Second

// memBudget admits calls while the sum of what their instances may use
// fits. It is FIFO: a large call waiting is not passed by small ones.
type memBudget struct {
	total int64
	wait  time.Duration
	sem   *semaphore.Weighted
}

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
	return &memBudget{total: bytes, wait: wait, sem: semaphore.NewWeighted(bytes)}
}

// instanceCost is what one instance of a module under l may take from the
// budget: its linear memory cap, its tables at their cap, its globals
// (wazero allocates about 90 bytes a global for every instance) and its
// call stack at wazero's ceiling (stackBytes).
func instanceCost(l Limits, info *wasmrewrite.Info) int64 {
	cost := int64(l.memoryPages())*65536 + int64(l.TableElements)*wasmrewrite.TableElementBytes + stackBytes
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

// globalBytes is what wazero allocates per global per instance (measured:
// 88 bytes with 100,000 globals), rounded up.
const globalBytes = 96

// fits reports whether one instance of cost can ever be admitted.
func (b *memBudget) fits(cost int64) error {
	if b != nil && cost > b.total {
		return fmt.Errorf("one instance may use %s (limits memory and table_elements, its globals and its call stack), more than the server's whole memory budget of %s (--memory-budget)",
			FormatBytes(cost), FormatBytes(b.total))
	}
	return nil
}

// acquire takes cost from the budget, waiting at most b.wait (and no
// longer than ctx) for running calls to give it back.
func (b *memBudget) acquire(ctx context.Context, module string, cost int64) error {
	if b == nil {
		return nil
	}
	if b.sem.TryAcquire(cost) {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, b.wait)
	defer cancel()
	if err := b.sem.Acquire(wctx, cost); err != nil {
		if ctx.Err() != nil {
			return &GuestError{Module: module, Kind: KindCanceled, Msg: "canceled while waiting for memory", Err: ctx.Err()}
		}
		return &GuestError{Module: module, Kind: KindLimit,
			Msg: fmt.Sprintf("busy: the server's memory budget of %s is taken by running calls; waited %s for the %s this call may use (--memory-budget)",
				FormatBytes(b.total), b.wait, FormatBytes(cost))}
	}
	return nil
}

func (b *memBudget) release(cost int64) {
	if b != nil {
		b.sem.Release(cost)
	}
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
