package protocol

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/internal/jsonrpc"
	"github.com/wasmcp/wasmcp/tasks"
)

// The task methods of both eras.
//
// 2025-11-25 (core, experimental): tasks/get → the Task; tasks/result →
// blocks until the task ends, then answers exactly the underlying result
// (with the related-task _meta) or error; tasks/list → the caller's tasks,
// paginated; tasks/cancel → the cancelled Task (-32602 for a task that
// already ended); notifications/tasks/status on the session's stream.
//
// 2026-07-28 (extension io.modelcontextprotocol/tasks, which the request
// must declare, else -32021): tasks/get → the DetailedTask (inputRequests
// while input_required, the result once completed, the error once failed);
// tasks/update → inputResponses for an input_required task; tasks/cancel →
// an empty acknowledgement; notifications/tasks on subscriptions/listen
// streams that name the task. tasks/result and tasks/list are -32601 there.
//
// Everywhere a task another principal owns is an unknown task (-32602).

// taskTime formats a task timestamp: RFC 3339, UTC, milliseconds.
func appendTaskTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, "2006-01-02T15:04:05.000Z")
	return append(b, '"')
}

// appendTask encodes the Task fields of t for an era, without braces.
func appendTask(b []byte, t *tasks.Task, era Era) []byte {
	b = append(b, `"taskId":`...)
	b = appendString(b, t.ID)
	b = append(b, `,"status":"`...)
	b = append(b, t.Status...)
	b = append(b, '"')
	if t.StatusMessage != "" {
		b = append(b, `,"statusMessage":`...)
		b = appendString(b, t.StatusMessage)
	}
	b = append(b, `,"createdAt":`...)
	b = appendTaskTime(b, t.CreatedAt)
	b = append(b, `,"lastUpdatedAt":`...)
	b = appendTaskTime(b, t.UpdatedAt)
	if era == Modern {
		b = append(b, `,"ttlMs":`...)
	} else {
		b = append(b, `,"ttl":`...)
	}
	b = strconv.AppendInt(b, t.TTL.Milliseconds(), 10)
	if era == Modern {
		b = append(b, `,"pollIntervalMs":`...)
	} else {
		b = append(b, `,"pollInterval":`...)
	}
	return strconv.AppendInt(b, max(t.PollInterval.Milliseconds(), 1), 10)
}

// appendDetails adds what a modern DetailedTask carries beyond the Task.
func appendDetails(b []byte, t *tasks.Task) []byte {
	switch t.Status {
	case tasks.InputRequired:
		b = append(b, `,"inputRequests":`...)
		b = appendInputRequests(b, len(t.Inputs), func(i int) (string, string, []byte) {
			q := &t.Inputs[i]
			return q.Key, q.Method, q.Params
		})
	case tasks.Completed:
		if len(t.Result) > 0 {
			b = append(b, `,"result":`...)
			b = append(b, t.Result...)
		}
	case tasks.Failed:
		if t.Error != nil {
			b = append(b, `,"error":`...)
			b = appendTaskError(b, t.Error)
		}
	}
	return b
}

func appendTaskError(b []byte, e *Error) []byte {
	return jsonrpc.AppendErrorObject(b, e.Code, e.Message, e.Data)
}

// encodeCreated is the CreateTaskResult of an era: {"task": Task} in the
// legacy era, the Task's fields flattened with resultType "task" in the
// modern era.
func (s *Server) encodeCreated(t *tasks.Task, era Era) []byte {
	b := make([]byte, 0, 256)
	if era == Modern {
		b = append(b, `{"resultType":"task",`...)
		b = appendTask(b, t, era)
		b = append(b, ',')
		b = append(b, s.metaInfo...)
		return append(b, '}')
	}
	b = append(b, `{"task":{`...)
	b = appendTask(b, t, era)
	return append(b, `}}`...)
}

// encodeDetailed is a modern DetailedTask, without braces.
func encodeDetailed(b []byte, t *tasks.Task) []byte {
	b = appendTask(b, t, Modern)
	return appendDetails(b, t)
}

// taskParams reads the taskId of a task method.
func (r *request) taskID() (string, *Error) {
	if r.p.TaskID == "" {
		return "", errorf(CodeInvalidParams, "Invalid params: taskId is required")
	}
	return r.p.TaskID, nil
}

// taskGate refuses the task methods to a caller that cannot use them: a
// modern request that did not declare the tasks extension (-32021), a
// legacy session before 2025-11-25 (-32601).
func (r *request) taskGate() *Error {
	if r.era == Modern {
		if !r.caps.Tasks {
			return r.missingTasks()
		}
		return nil
	}
	if !atLeast(r.version, V20251125) {
		return errorf(CodeMethodNotFound, "Method not found: "+r.msg.Method+" (tasks need protocol revision "+V20251125+")")
	}
	return nil
}

func unknownTask(id string) *Error {
	return errorf(CodeInvalidParams, "Unknown task: "+id)
}

// lookupTask finds a task of the caller, or the error to answer.
func (r *request) lookupTask() (*tasks.Task, *Error) {
	if e := r.taskGate(); e != nil {
		return nil, e
	}
	id, e := r.taskID()
	if e != nil {
		return nil, e
	}
	t, err := r.srv.tasks.Get(r.ctx, id, r.owner())
	if errors.Is(err, tasks.ErrNotFound) {
		return nil, unknownTask(id)
	}
	if err != nil {
		return nil, errorf(CodeInternalError, "Cannot read task "+id+": "+err.Error())
	}
	return t, nil
}

func (r *request) tasksGet() Response {
	t, e := r.lookupTask()
	if e != nil {
		return r.fail(e)
	}
	b := make([]byte, 0, 256+len(t.Result))
	b = append(b, '{')
	if r.era == Modern {
		b = append(b, `"resultType":"complete",`...)
		b = encodeDetailed(b, t)
		b = append(b, ',')
		b = append(b, r.srv.metaInfo...)
	} else {
		b = appendTask(b, t, Legacy)
	}
	b = append(b, '}')
	return Response{Body: ResultResponse(r.msg.ID, b), Era: r.era}
}

// tasksResult serves the legacy tasks/result: it waits for the task to end
// and answers its underlying result or error. While it waits, the task's
// requests to the client travel on this request's stream.
func (r *request) tasksResult() Response {
	t, e := r.lookupTask()
	if e != nil {
		return r.fail(e)
	}
	ctx, cancel := context.WithCancelCause(r.ctx)
	defer cancel(nil)
	if r.sess != nil {
		defer r.sess.track(r.msg.ID, cancel)()
	}
	if !t.Status.Terminal() && r.stream != nil && r.sess != nil {
		if lt := r.srv.lookupLive(t.ID); lt != nil {
			defer lt.offer(r.stream, r.sess)()
		}
	}
	t, err := r.srv.tasks.Wait(ctx, t.ID, r.owner())
	switch {
	case errors.Is(err, tasks.ErrNotFound):
		return r.fail(unknownTask(r.p.TaskID))
	case errors.Is(err, ErrCanceledByClient), errors.Is(err, ErrSessionClosed):
		return Response{Era: r.era}
	case err != nil:
		return r.fail(errorf(CodeInternalError, "Waiting for task "+r.p.TaskID+" failed: "+err.Error()))
	}
	related := relatedTask(t.ID)
	switch t.Status {
	case tasks.Completed:
		res, err := withMeta(t.Result, MetaRelatedTask, related)
		if err != nil {
			res = t.Result
		}
		return Response{Body: ResultResponse(r.msg.ID, res), Era: r.era}
	case tasks.Failed:
		te := t.Error
		if te == nil {
			te = errorf(CodeInternalError, t.StatusMessage)
		}
		return r.fail(te)
	default:
		data := append(append([]byte(`{"_meta":{"`+MetaRelatedTask+`":`), related...), `}}`...)
		return r.fail(&Error{Code: CodeInvalidParams, Message: "Task " + t.ID + " was cancelled", Data: data})
	}
}

func (r *request) tasksList() Response {
	if e := r.taskGate(); e != nil {
		return r.fail(e)
	}
	cursor := ""
	if r.p.Cursor != nil && *r.p.Cursor != "" {
		c, err := base64.RawURLEncoding.DecodeString(*r.p.Cursor)
		if err != nil {
			return r.fail(errorf(CodeInvalidParams, "Invalid cursor"))
		}
		cursor = string(c)
	}
	owner, session := r.owner(), ""
	if owner == "" && r.sess != nil {
		// Without authentication every client is the same principal:
		// list only the tasks of this session.
		session = r.sess.ID
	}
	page, err := r.srv.tasks.List(r.ctx, owner, session, cursor, r.srv.opts.PageSize)
	if err != nil {
		return r.fail(errorf(CodeInternalError, "Cannot list tasks: "+err.Error()))
	}
	b := make([]byte, 0, 64+200*len(page.Tasks))
	b = append(b, `{"tasks":[`...)
	for i, t := range page.Tasks {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '{')
		b = appendTask(b, t, Legacy)
		b = append(b, '}')
	}
	b = append(b, ']')
	if page.Next != "" {
		b = append(b, `,"nextCursor":"`...)
		b = append(b, base64.RawURLEncoding.EncodeToString([]byte(page.Next))...)
		b = append(b, '"')
	}
	b = append(b, '}')
	return Response{Body: ResultResponse(r.msg.ID, b), Era: r.era}
}

func (r *request) tasksCancel() Response {
	t, e := r.lookupTask()
	if e != nil {
		return r.fail(e)
	}
	t, err := r.srv.tasks.Cancel(r.ctx, t.ID, r.owner())
	switch {
	case errors.Is(err, tasks.ErrNotFound):
		return r.fail(unknownTask(r.p.TaskID))
	case errors.Is(err, tasks.ErrTerminal):
		if r.era == Modern {
			return r.ok([]byte(`{}`), noCache) // cancel is idempotent there
		}
		return r.fail(errorf(CodeInvalidParams, "Cannot cancel task "+t.ID+": it already ended ("+string(t.Status)+")"))
	case err != nil:
		return r.fail(errorf(CodeInternalError, "Cannot cancel task "+r.p.TaskID+": "+err.Error()))
	}
	if r.era == Modern {
		return r.ok([]byte(`{}`), noCache)
	}
	b := append(appendTask([]byte{'{'}, t, Legacy), '}')
	return Response{Body: ResultResponse(r.msg.ID, b), Era: r.era}
}

// tasksUpdate serves the modern tasks/update: inputResponses for the
// requests an input_required task waits for. Keys it does not wait for are
// ignored; once every request is answered the guest runs again with the
// answers.
func (r *request) tasksUpdate() Response {
	t, e := r.lookupTask()
	if e != nil {
		return r.fail(e)
	}
	resp := bytes.TrimSpace(r.p.InputResponses)
	var answers map[string]json.RawMessage
	if len(resp) > 0 && string(resp) != "null" {
		if resp[0] != '{' || sonic.Unmarshal(resp, &answers) != nil {
			return r.fail(errorf(CodeInvalidParams, "Invalid params: inputResponses must be an object"))
		}
	}
	for _, q := range t.Inputs {
		if a, ok := answers[q.Key]; ok && !validAnswer(q.Method, a) {
			return r.fail(errorf(CodeInvalidParams, "Invalid params: inputResponses["+strconv.Quote(q.Key)+"] is not a valid "+q.Method+" result"))
		}
	}
	m := r.srv.tasks
	resume := false
	t, err := m.Update(r.ctx, t.ID, func(t *tasks.Task) error {
		if t.Status != tasks.InputRequired {
			return errUnchanged
		}
		var left []tasks.InputRequest
		took := false
		for _, q := range t.Inputs {
			a, ok := answers[q.Key]
			if !ok {
				left = append(left, q)
				continue
			}
			if t.Answers == nil {
				t.Answers = map[string]json.RawMessage{}
			}
			t.Answers[q.Key] = bytes.Clone(a)
			took = true
		}
		if !took {
			return errUnchanged
		}
		if len(left) > 0 {
			t.Inputs = left
			t.UpdatedAt = time.Now().UTC()
			return nil
		}
		resume = true
		return m.Move(t, tasks.Working, "")
	})
	switch {
	case errors.Is(err, errUnchanged), errors.Is(err, tasks.ErrTerminal):
	case errors.Is(err, tasks.ErrNotFound):
		return r.fail(unknownTask(r.p.TaskID))
	case err != nil:
		return r.fail(errorf(CodeInternalError, "Cannot update task "+r.p.TaskID+": "+err.Error()))
	}
	if resume {
		r.srv.resume(t)
	}
	return r.ok([]byte(`{}`), noCache)
}

// taskChanged tells clients that a task changed: a legacy task's session
// gets notifications/tasks/status, modern listeners that named the task get
// notifications/tasks.
func (s *Server) taskChanged(t *tasks.Task) {
	if s.observer != nil {
		s.observer.TaskChanged(string(t.Status))
	}
	if t.Era == contract.Legacy {
		lt := s.lookupLive(t.ID)
		if lt == nil || lt.sess == nil {
			return
		}
		b := append(appendTask([]byte{'{'}, t, Legacy), '}')
		s.sendToSession(lt.sess, Notification("notifications/tasks/status", b))
		return
	}
	s.mu.Lock()
	var ls []*Listener
	for l := range s.listeners {
		if l.Tasks[t.ID] && l.Principal == t.Owner {
			ls = append(ls, l)
		}
	}
	s.mu.Unlock()
	if len(ls) == 0 {
		return
	}
	b := append(encodeDetailed([]byte{'{'}, t), '}')
	for _, l := range ls {
		l.Send(l.message("notifications/tasks", b))
	}
}
