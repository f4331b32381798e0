package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/tasks"
)

// collector is a task as the owner of its guest: it records the outcome
// in the task and, for a legacy task, carries the guest's messages to the
// client.
type collector struct {
	srv  *Server
	id   string
	era  contract.Era
	e    *toolEntry
	r    *request  // detached: what the guest serves
	live *liveTask // legacy: where requests to the client go
}

func (s *Server) newCollector(t *tasks.Task, e *toolEntry, r *request) *collector {
	c := &collector{srv: s, id: t.ID, era: t.Era, e: e, r: r}
	if t.Era == contract.Legacy {
		c.live = s.liveTask(t.ID, r.sess)
	}
	return c
}

// notify passes a legacy task's progress and log messages to the session,
// tagged with the task; a modern task has no stream after its request was
// answered, so they are dropped.
func (c *collector) notify(ctx context.Context, method string, params []byte) {
	if c.era != contract.Legacy || c.r.stream == nil {
		c.srv.log.Debug("task notification dropped: no stream after the task's request was answered", "task", c.id, "method", method)
		return
	}
	if p, err := withMeta(params, MetaRelatedTask, relatedTask(c.id)); err == nil {
		params = p
	}
	(&peer{r: c.r, mod: c.e.mod}).Notify(ctx, method, params)
}

func relatedTask(id string) []byte {
	return append(appendString([]byte(`{"taskId":`), id), '}')
}

// finish records the guest's outcome in the task.
func (c *collector) finish(o outcome) {
	m := c.srv.tasks
	defer m.Stopped(c.id)
	ctx := context.Background()
	if c.live != nil {
		defer c.srv.dropLive(c.id)
	}
	if o.err != nil && errors.Is(o.err, contract.ErrCanceled) {
		// Stopped by tasks/cancel, expiry or shutdown, which ended (or
		// deleted) the task first; anything else ends it here.
		msg := "Task stopped: " + o.err.Error()
		if _, err := m.Finish(ctx, c.id, tasks.Failed, msg, nil, errorf(CodeInternalError, msg)); err != nil && !ignorable(err) {
			c.srv.log.Warn("recording a task's end failed", "task", c.id, "err", err)
		}
		return
	}
	if o.err == nil && len(o.reply.InputRequests) > 0 {
		c.park(ctx, o.reply)
		return
	}
	result, rerr := c.srv.toolOutcome(ctx, c.e, o.reply, o.err)
	var err error
	if rerr != nil {
		_, err = m.FinishOrKeep(ctx, c.id, tasks.Failed, rerr.Message, nil, rerr)
	} else {
		_, err = m.FinishOrKeep(ctx, c.id, tasks.Completed, "", bytes.Clone(result), nil)
	}
	if err != nil && !ignorable(err) && !errors.Is(err, tasks.ErrPending) {
		c.srv.log.Warn("recording a task's result failed", "task", c.id, "err", err)
	}
}

// ignorable reports whether recording a task's end failed only because it
// already ended or no longer exists.
func ignorable(err error) bool {
	return errors.Is(err, tasks.ErrTerminal) || errors.Is(err, tasks.ErrNotFound) || errors.Is(err, tasks.ErrClosed)
}

// park puts a modern task whose guest waits for the client into
// input_required with the guest's requests; tasks/update answers them.
func (c *collector) park(ctx context.Context, reply *contract.Reply) {
	m := c.srv.tasks
	if c.era != contract.Modern || c.r.inputs == nil {
		msg := "guest requests left unanswered outside the " + V20260728 + " revision"
		_, _ = m.Finish(ctx, c.id, tasks.Failed, msg, nil, errorf(CodeInternalError, msg))
		return
	}
	known := c.r.inputs.known()
	inputs := make([]tasks.InputRequest, len(reply.InputRequests))
	for i, q := range reply.InputRequests {
		inputs[i] = tasks.InputRequest{Key: q.Key, Method: q.Method, Params: q.Params}
	}
	_, err := m.Update(ctx, c.id, func(t *tasks.Task) error {
		if err := m.Move(t, tasks.InputRequired, "Waiting for input from the client"); err != nil {
			return err
		}
		t.Inputs, t.GuestState = inputs, bytes.Clone(reply.State)
		if t.Answers == nil {
			t.Answers = map[string]json.RawMessage{}
		}
		for k, v := range known {
			t.Answers[k] = v
		}
		return nil
	})
	if err != nil && !ignorable(err) {
		c.srv.log.Warn("recording a task's input requests failed", "task", c.id, "err", err)
	}
}

// request sends a legacy task's request to the client: the task waits in
// input_required until the answer comes. The request travels, tagged with
// the task, on the stream of a tasks/result call waiting for the task (the
// 2025-11-25 revision's way), so it waits for one.
func (c *collector) request(ctx context.Context, method string, params []byte) ([]byte, error) {
	r := c.r
	if e := r.requiredCapability(method, params); e != nil {
		return nil, e
	}
	if p, err := withMeta(params, MetaRelatedTask, relatedTask(c.id)); err == nil {
		params = p
	}
	c.live.asking(c.srv, 1)
	defer c.live.asking(c.srv, -1)
	for {
		// The session of the tasks/result call gets the client's answer.
		st, sess, err := c.live.stream(ctx)
		if err != nil {
			return nil, err
		}
		m, err := sess.request(ctx, st, method, params)
		if errors.Is(err, errStreamClosed) {
			continue // that tasks/result ended: wait for another
		}
		if err != nil {
			return nil, err
		}
		if m.Error != nil {
			return nil, m.Error
		}
		return hostResult(m.Result), nil
	}
}
