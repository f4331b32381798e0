package tasks

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
)

// Status is the state of a task.
type Status string

// The task states. A task starts working; it may wait for input and work
// again any number of times; it ends completed, failed or cancelled.
const (
	Working       Status = "working"
	InputRequired Status = "input_required"
	Completed     Status = "completed"
	Failed        Status = "failed"
	Canceled      Status = "cancelled"
)

// Terminal reports whether s is an end state.
func (s Status) Terminal() bool { return s == Completed || s == Failed || s == Canceled }

// Valid reports whether s is one of the five states.
func (s Status) Valid() bool {
	switch s {
	case Working, InputRequired, Completed, Failed, Canceled:
		return true
	}
	return false
}

// CanMove reports whether a task in state s may move to state to: working
// and input_required alternate and may end in any terminal state; a terminal
// state never changes.
func (s Status) CanMove(to Status) bool {
	if !to.Valid() || s == to {
		return false
	}
	switch s {
	case Working:
		return to == InputRequired || to.Terminal()
	case InputRequired:
		return to == Working || to.Terminal()
	}
	return false
}

// InputRequest is a request to the client a modern task waits for: its key
// (the guest's request id), its method and its raw params.
type InputRequest struct {
	Key    string          `json:"key"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// Task is one task record. Records are values: the Store hands out copies
// and the Manager changes them only through Store.Update.
type Task struct {
	// ID is the task id: "task-" and 32 hex digits of crypto randomness.
	ID string `json:"id"`
	// Owner is the principal that created the task ("" when the server
	// authenticates nobody).
	Owner string `json:"owner"`
	// Session is the legacy session that created the task, "" for modern
	// tasks; tasks/list of an anonymous legacy client lists its session's.
	Session string `json:"session,omitempty"`
	// Era is the era the task was created in.
	Era contract.Era `json:"era"`
	// Version is the protocol revision of the creating request.
	Version string `json:"version,omitempty"`
	// Tool is the name of the tool the task runs.
	Tool string `json:"tool"`
	// Status and StatusMessage are the task's state and its explanation.
	Status        Status `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	// CreatedAt and UpdatedAt are the creation time and the time of the
	// last change of status.
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// TTL is how long the task and its result are kept after CreatedAt.
	TTL time.Duration `json:"ttl"`
	// PollInterval is the polling interval suggested to the client.
	PollInterval time.Duration `json:"pollInterval"`
	// Result is the underlying CallToolResult of a completed task.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the JSON-RPC error of a failed task.
	Error *abi.Error `json:"error,omitempty"`
	// Inputs are the requests a modern input_required task waits for.
	Inputs []InputRequest `json:"inputs,omitempty"`
	// Answers are the input responses a modern task received so far, by
	// key; a re-run of the guest is answered from them.
	Answers map[string]json.RawMessage `json:"answers,omitempty"`
	// GuestState is the guest's own state for its next run (abi.MethodState).
	GuestState json.RawMessage `json:"guestState,omitempty"`
	// Params are the params of the tools/call that created the task, and
	// Caps the client capabilities it declared: what a re-run needs.
	Params json.RawMessage `json:"params,omitempty"`
	Caps   json.RawMessage `json:"caps,omitempty"`
}

// ExpiresAt is when the task and its result are deleted.
func (t *Task) ExpiresAt() time.Time { return t.CreatedAt.Add(t.TTL) }

// Expired reports whether the task has outlived its TTL at now.
func (t *Task) Expired(now time.Time) bool { return t.TTL > 0 && !now.Before(t.ExpiresAt()) }

// Clone returns a deep copy of t.
func (t *Task) Clone() *Task {
	c := *t
	c.Result = slices.Clone(t.Result)
	if t.Error != nil {
		e := *t.Error
		e.Data = slices.Clone(t.Error.Data)
		c.Error = &e
	}
	c.Inputs = slices.Clone(t.Inputs)
	c.Answers = maps.Clone(t.Answers)
	c.GuestState = slices.Clone(t.GuestState)
	c.Params = slices.Clone(t.Params)
	c.Caps = slices.Clone(t.Caps)
	return &c
}

// move changes the task's status at now, refusing an illegal transition.
func (t *Task) move(to Status, message string, now time.Time) error {
	if !t.Status.CanMove(to) {
		if t.Status.Terminal() {
			return fmt.Errorf("%w: task %s is %s", ErrTerminal, t.ID, t.Status)
		}
		return fmt.Errorf("tasks: task %s cannot go from %s to %s", t.ID, t.Status, to)
	}
	t.Status, t.StatusMessage, t.UpdatedAt = to, message, now
	if to != InputRequired {
		t.Inputs = nil
	}
	return nil
}

// OrderKey orders an owner's tasks by creation: the creation time in
// nanoseconds as 16 hex digits, then the id. Store.List pages by it.
func (t *Task) OrderKey() string {
	return fmt.Sprintf("%016x%s", uint64(t.CreatedAt.UnixNano()), t.ID)
}
