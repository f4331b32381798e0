package host

import (
	"context"
	"testing"
	"time"
)

// An answer that arrives once the deadline has passed does not count,
// even before the deadline's timer has ended the call's context.
func TestAnswerAfterDeadlineIsNotSuccess(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	// A deadline in the past whose timer cannot have fired: the context
	// is built by hand around it.
	dctx := deadlineOnly{ctx, time.Now().Add(-time.Millisecond)}
	c := &call{m: &Module{name: "late"}, id: 1, idText: []byte("1"), limits: Limits{Timeout: time.Second, OutputBytes: 1 << 20}, log: quietLogger, ctx: dctx, cancel: cancel}
	c.stdin = newInbox(ctx, nil)
	if err := c.handleLine([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)); err != nil {
		t.Fatal(err)
	}
	reply, err := c.outcome(nil, nil)
	if reply != nil || !IsKind(err, KindLimit) {
		t.Fatalf("got %v, %v; want the deadline error", reply, err)
	}
}

// deadlineOnly is a context whose Deadline is d but which ends only when
// its parent does.
type deadlineOnly struct {
	context.Context
	d time.Time
}

func (c deadlineOnly) Deadline() (time.Time, bool) { return c.d, true }

// A guest whose sleep outlasts its deadline is ended in the sleep: it
// never gets to answer. Before, the sleep returned at the deadline, the
// guest answered and the call reported success.
func TestSleepPastDeadlineNeverSucceeds(t *testing.T) {
	for _, e := range []*Engine{newEngine(t, Limits{Timeout: 200 * time.Millisecond}), instrumentingEngine(t, Limits{Timeout: 200 * time.Millisecond})} {
		m := loadProbe(t, e, Policy{})
		for i := 0; i < 5; i++ {
			got, err := callTool(t, m, nil, "sleep", `{"n":250}`)
			if !IsKind(err, KindLimit) {
				t.Fatalf("call %d: got %q, %v; want the deadline error", i, got, err)
			}
		}
	}
}
