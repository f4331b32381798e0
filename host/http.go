package host

import (
	"encoding/json"
	"fmt"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/egress"
)

// setupEgress builds the module's outbound HTTP client when its policy
// grants any (abi.MethodHTTP, ABI 1.1).
func (m *Module) setupEgress() error {
	if m.policy.HTTP == nil {
		return nil
	}
	o := m.engine.cfg.Egress
	if o.Logger == nil {
		o.Logger = m.engine.log
	}
	c, err := egress.NewClient(m.policy.HTTP, o)
	if err != nil {
		return err
	}
	m.egress = c
	return nil
}

// httpSession returns the call's outbound HTTP session, starting it on
// first use.
func (c *call) httpSession() *egress.Session {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.net == nil {
		c.net = c.m.egress.NewSession(c.m.name, c.id)
	}
	return c.net
}

// httpRequest makes a guest's wasmcp/http request asynchronously; the
// answer goes to the guest's stdin like a client's answer. It counts toward
// the guest's outstanding requests.
func (c *call) httpRequest(id, params []byte) error {
	if c.m.egress == nil {
		c.stdin.push(httpErrorLine(id, abi.HTTPPolicyRefused,
			fmt.Sprintf("module %s may not make HTTP requests: its policy (%s.policy.toml) has no [http] section", c.m.name, c.m.name)))
		return nil
	}
	var req abi.HTTPRequest
	if err := sonic.Unmarshal(params, &req); err != nil {
		c.stdin.push(httpErrorLine(id, abi.HTTPInvalid, "params are not an HTTP request: "+err.Error()))
		return nil
	}
	unread := c.stdin.unreadAnswers()
	c.mu.Lock()
	if c.outstanding+unread >= maxOutstanding {
		c.mu.Unlock()
		return c.protocolError("has more than %d requests outstanding", maxOutstanding)
	}
	c.outstanding++
	c.mu.Unlock()
	sess := c.httpSession()
	c.stdin.begin()
	c.pending.Add(1)
	go func() {
		defer c.pending.Done()
		var line []byte
		resp, e := sess.Do(c.ctx, &req)
		if e != nil {
			line = httpErrorLine(id, e.Reason, e.Msg)
		} else if b, err := sonic.Marshal(resp); err != nil {
			line = httpErrorLine(id, abi.HTTPProtocol, "cannot encode the response: "+err.Error())
		} else {
			line = resultLine(id, b)
		}
		c.mu.Lock()
		c.outstanding--
		c.mu.Unlock()
		c.stdin.answer(line)
	}()
	return nil
}

func httpErrorLine(id []byte, reason, msg string) []byte {
	data, _ := json.Marshal(abi.HTTPErrorData{Reason: reason})
	return errorLine(id, abi.CodeHTTPFailed, msg, data)
}
