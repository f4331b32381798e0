package contract

import (
	"context"
	"time"
)

// CallStats is what the runner measured about one guest call. A caller that
// wants the figures puts a CallStats in the call's context (WithCallStats);
// the runner fills it before Call returns. Without one, nothing is measured.
type CallStats struct {
	// QueueWait is the time the call waited for an instance slot.
	QueueWait time.Duration
	// Instantiate is the time the instance took to be created.
	Instantiate time.Duration
	// Run is the time the guest ran, from its entry point to its end.
	Run time.Duration
	// MemoryBytes is the size of the instance's linear memory when it ended:
	// its high-water mark, since linear memory never shrinks.
	MemoryBytes uint64
	// OutputBytes is what the guest wrote to stdout and stderr.
	OutputBytes int64
	// Failure classifies a failed call: "trap", "exit", "protocol",
	// "limit", "canceled" or "load"; "" when the guest answered.
	Failure string
	// Limit names the limit a "limit" failure broke: "timeout", "memory",
	// "output", "line", "queue", "budget" or "other".
	Limit string
	// AfterAnswer counts the lines the guest wrote to stdout after its
	// answer, which the runner ignores (the ABI forbids them; a
	// conformance check reports them). A runner stops an instance once it
	// has answered, unless told to let it run on (wasmcp check does):
	// only lines that reached it before then are counted.
	AfterAnswer int
	// Tier names the code that ran the call: "interpreter" (wazero's
	// interpreter, while a new module's compiled code is being built) or
	// "compiled".
	Tier string
}

type callStatsCtx struct{}

// WithCallStats returns ctx asking the runner to fill st.
func WithCallStats(ctx context.Context, st *CallStats) context.Context {
	return context.WithValue(ctx, callStatsCtx{}, st)
}

// CallStatsFrom returns the CallStats the caller put in ctx, nil if none.
func CallStatsFrom(ctx context.Context) *CallStats {
	st, _ := ctx.Value(callStatsCtx{}).(*CallStats)
	return st
}
