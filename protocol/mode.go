package protocol

import (
	"time"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/abi"
)

// How a tools/call runs, tasks and the relay.
//
// A tools/call runs in one of three modes, decided by toolMode — the one
// rule for every transport:
//
//	task support         client declared tasks   era      mode
//	forbidden            any                     any      inline
//	optional             no                      any      inline
//	required             no                      any      refused (-32021 modern, -32601 legacy)
//	optional, required   yes                     legacy   task: created first, answered at once
//	optional, required   yes                     modern   escalate: inline for TaskInline, then task
//
// "Declared" is params.task on a 2025-11-25 session, and the tasks
// extension in the request's clientCapabilities in the modern era.
//
// Inline calls run on the request's goroutine as before. The other two run
// the guest on its own goroutine with a relay as its contract.Peer: the relay
// hands every notification and the outcome of the guest to its owner — the
// request while it waits inline, the task's collector afterwards. At the end
// of the inline window the request takes the relay's lock: an outcome that
// arrived is answered in place; otherwise the relay holds what the guest
// sends, the task is created (before the answer is written, so tasks/get
// resolves at once), and the relay replays what it held to the collector and
// forwards to it from then on. Deliveries happen under the relay's lock, so
// no message reaches the request after it stopped owning the guest, none is
// lost and none is delivered twice. The guest's context is detached from
// the request's: after the hand-off only tasks/cancel, the task's expiry or
// the server's shutdown (through the tasks.Manager) stop it.

// callMode is how a tools/call runs.
type callMode uint8

const (
	modeInline   callMode = iota // run to completion, answer in place
	modeTask                     // legacy: create the task first, answer with it
	modeEscalate                 // modern: inline for the window, then a task
)

// DefaultTaskInline is how long a modern call that may become a task runs
// inline before it does.
const DefaultTaskInline = 100 * time.Millisecond

// toolMode is the rule deciding how a tools/call of e runs (see the table
// above), or the error refusing it.
func (r *request) toolMode(e *toolEntry) (callMode, *Error) {
	support := e.tool.TaskSupport()
	if r.era == Modern {
		switch {
		case support == abi.TaskForbidden:
			return modeInline, nil
		case !r.caps.Tasks && support == abi.TaskRequired:
			return 0, r.missingTasks()
		case !r.caps.Tasks:
			return modeInline, nil
		}
		return modeEscalate, nil
	}
	requested := len(r.p.Task) > 0 && string(r.p.Task) != "null" && atLeast(r.version, V20251125)
	switch {
	case requested && support == abi.TaskForbidden:
		return 0, errorf(CodeMethodNotFound, "Tool "+r.p.Name+" does not support task-augmented calls")
	case requested:
		return modeTask, nil
	case support == abi.TaskRequired:
		return 0, r.missingTasks()
	}
	return modeInline, nil
}

// missingTasks is the error for a task-required tool called by a client
// that did not declare tasks.
func (r *request) missingTasks() *Error {
	if r.era == Modern {
		data, _ := sonic.Marshal(map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{ExtTasks: map[string]any{}}}})
		return &Error{Code: abi.CodeMissingCapability, Message: "This tool requires the " + ExtTasks + " extension", Data: data}
	}
	return errorf(CodeMethodNotFound, "Tool "+r.p.Name+" must be called as a task (params.task)")
}
