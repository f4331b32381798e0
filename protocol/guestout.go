package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

// What a guest writes is checked here before any of it can reach a client
// (docs/design/guest-output.md): every byte is made
// valid JSON in UTF-8 (jsonrpc.Clean; clean text, the usual case, is
// passed on as is), a result must have the shape its method's result has
// in the schema, the members the host owns are removed, and a JSON-RPC
// error code that only the host may answer is refused.

// ErrGuestOutput is wrapped by the error a guest call ends with when what
// the guest answered cannot be passed to a client.
var ErrGuestOutput = errors.New("guest answer refused")

// guestCall runs mod for method with peer as its peer, both behind the
// checks on what the guest writes.
func guestCall(ctx context.Context, mod Module, method string, params []byte, p contract.Peer) (*contract.Reply, error) {
	cp := &checkedPeer{p: p}
	reply, err := mod.Call(ctx, method, params, cp)
	if err != nil || reply == nil {
		return reply, err
	}
	if err := checkReply(method, reply, cp.passed); err != nil {
		return nil, fmt.Errorf("module %s: %w: %s", mod.Name(), ErrGuestOutput, err.Error())
	}
	return reply, nil
}

// checkedPeer cleans the params of a guest's notifications and requests
// (the wasmcp/ keys of their _meta removed: the host owns those);
// a message that cannot be made valid is dropped (a notification) or
// refused (a request). It remembers the error codes the host answered the
// guest's requests with: a guest may pass those on as its own answer (the
// -32021 of a missing client capability, typically).
type checkedPeer struct {
	p      contract.Peer
	mu     sync.Mutex
	passed []int
}

func (c *checkedPeer) Notify(ctx context.Context, method string, params []byte) {
	if params, ok := jsonrpc.Clean(params); ok {
		c.p.Notify(ctx, method, hostResult(params))
	}
}

func (c *checkedPeer) Request(ctx context.Context, method string, params []byte) ([]byte, error) {
	params, err := jsonrpc.CleanJSON(params)
	if err != nil {
		return nil, &abi.Error{Code: CodeInvalidParams, Message: method + " params: " + err.Error()}
	}
	res, err := c.p.Request(ctx, method, hostResult(params))
	var e *abi.Error
	if errors.As(err, &e) && reservedCode(e.Code) {
		c.mu.Lock()
		c.passed = append(c.passed, e.Code)
		c.mu.Unlock()
	}
	return res, err
}

// plainText makes a guest's error message plain text: a control
// character (ESC starting a terminal sequence, a BEL, a raw line break;
// a tab is kept) or a C1 control becomes U+FFFD, and so does a byte that
// is not UTF-8. A clean message, the usual case, is returned as is.
func plainText(s string) string {
	clean := true
	for _, r := range s {
		if isControl(r) || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if isControl(r) {
			r = utf8.RuneError
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isControl reports whether r is a C0 control other than tab, DEL, or a
// C1 control.
func isControl(r rune) bool {
	return (r < 0x20 && r != '\t') || (r >= 0x7F && r <= 0x9F)
}

// reservedCode reports whether a guest may not answer with code: the
// codes of the transport and of routing (-32700, -32600, -32601; the host
// parses, checks envelopes and routes, so a guest saying otherwise would
// mislead the client) and the -32000..-32099 range (server-defined, where
// the spec puts its own codes), except -32002, the legacy
// resource-not-found that resources/read translates for its revision.
func reservedCode(code int) bool {
	switch {
	case code == CodeParseError || code == CodeInvalidRequest || code == CodeMethodNotFound:
		return true
	case code == CodeResourceNotFound:
		return false
	}
	return code >= -32099 && code <= -32000
}

// checkReply makes a guest's reply fit to pass on, or says why it is not.
// passed are the reserved codes the host itself answered the guest with.
func checkReply(method string, reply *contract.Reply, passed []int) error {
	for i := range reply.InputRequests {
		p, err := jsonrpc.CleanJSON(reply.InputRequests[i].Params)
		if err != nil {
			return fmt.Errorf("its %s request's params: %w", reply.InputRequests[i].Method, err)
		}
		if !isObject(p) {
			return fmt.Errorf("its %s request has params that are not a JSON object", reply.InputRequests[i].Method)
		}
		reply.InputRequests[i].Params = p
	}
	if e := reply.Error; e != nil {
		if reservedCode(e.Code) && !slices.Contains(passed, e.Code) {
			return fmt.Errorf("it answered with the JSON-RPC error code %d, which only the server may use (message %q)", e.Code, shortText(e.Message))
		}
		e.Message = plainText(e.Message)
		if len(e.Data) > 0 {
			d, err := jsonrpc.CleanJSON(e.Data)
			if err != nil {
				return fmt.Errorf("its error's data: %w", err)
			}
			e.Data = d
		}
		return nil
	}
	if len(reply.InputRequests) > 0 {
		return nil
	}
	res, err := jsonrpc.CleanJSON(bytes.TrimSpace(reply.Result))
	if err != nil {
		if errors.Is(err, jsonrpc.ErrNotJSON) {
			return errors.New("its result is not valid JSON")
		}
		return fmt.Errorf("its result: %w", err)
	}
	if len(res) == 0 || res[0] != '{' {
		return fmt.Errorf("its %s result is not a JSON object: %s", method, shortText(string(res)))
	}
	res, err = stripHostMembers(res)
	if err != nil {
		return err
	}
	if err := checkShape(method, res); err != nil {
		return fmt.Errorf("its %s result %w", method, err)
	}
	reply.Result = res
	return nil
}

// hostMembers are the result members only the host sets: the result's
// type and what an input_required result carries (a guest must not make a
// result look like input_required or a task: its requests to the client
// go through the host, which checks the client's capabilities), cache
// hints, and a legacy task.
var hostMembers = []string{"resultType", "inputRequests", "requestState", "ttlMs", "cacheScope", "task"}

// quotedHostMembers are hostMembers as they appear in JSON text, quoted.
var quotedHostMembers = func() [][]byte {
	q := make([][]byte, len(hostMembers))
	for i, k := range hostMembers {
		q[i] = []byte(`"` + k + `"`)
	}
	return q
}()

// stripHostMembers removes the members the host owns from a result object,
// and from its _meta the keys the spec reserves and every key with
// HostMetaPrefix (the host owns every wasmcp/ key a client sees), however
// spelled. A member a case-insensitive decoder reads as _meta ("_META")
// goes whole: the host's _meta is the only one. Only a result that may
// name one of them is decoded.
func stripHostMembers(res []byte) ([]byte, error) {
	// A quick look for the names; a result that may hold one is decoded.
	suspect := jsonrpc.MayHold(res, quotedHostMembers...) || mayHoldMemberFold(res) ||
		mayHoldMetaFold(res) && (bytes.Contains(res, []byte("modelcontextprotocol")) || mayHoldHostKey(res))
	if !suspect {
		return res, nil
	}
	var m map[string]json.RawMessage
	if err := sonic.Unmarshal(res, &m); err != nil {
		return nil, errors.New("its result is not a JSON object")
	}
	changed := false
	for _, k := range hostMembers {
		if _, ok := m[k]; ok {
			delete(m, k)
			changed = true
		}
	}
	for k := range m {
		if k != "_meta" && isMetaKey(k) || isHostMemberFold(k) {
			// What a case-folding decoder (Go's encoding/json) reads as
			// the host's member: "CacheScope", "cacheſcope", "ResultType".
			delete(m, k)
			changed = true
		}
	}
	if raw, ok := m["_meta"]; ok {
		var meta map[string]json.RawMessage
		if sonic.Unmarshal(raw, &meta) != nil {
			return nil, errors.New("its result's _meta is not an object")
		}
		cut := false
		for k := range meta {
			if reservedMetaKey(k) || hasHostPrefix(k) {
				delete(meta, k)
				cut = true
			}
		}
		if cut {
			changed = true
			if len(meta) == 0 {
				delete(m, "_meta")
			} else {
				b, err := sonic.Marshal(meta)
				if err != nil {
					return nil, err
				}
				m["_meta"] = b
			}
		}
	}
	if !changed {
		return res, nil
	}
	return sonic.Marshal(m)
}

// isHostMemberFold reports whether k is one of hostMembers only without
// regard to case or Unicode folding.
func isHostMemberFold(k string) bool {
	for _, h := range hostMembers {
		if k != h && len(k) >= len(h) && strings.EqualFold(k, h) {
			return true
		}
	}
	return false
}

// mayHoldMemberFold reports whether b may hold a member that folds to one
// of hostMembers without being it: a quote followed by one of their names
// in another ASCII case, or a character that folds to an ASCII letter of
// theirs ("ſ" to s, the Kelvin sign to k). The quick look beside MayHold,
// one IndexByte pass over the quotes.
func mayHoldMemberFold(b []byte) bool {
	if bytes.Contains(b, []byte("\xc5\xbf")) || bytes.Contains(b, []byte("\xe2\x84\xaa")) {
		return true
	}
	for off := 0; ; {
		i := bytes.IndexByte(b[off:], '"')
		if i < 0 {
			return false
		}
		j := off + i + 1
		for _, q := range quotedHostMembers {
			n := len(q) - 1 // the name and its closing quote
			if j+n <= len(b) && b[j]|0x20 == q[1]|0x20 && bytes.EqualFold(b[j:j+n], q[1:]) {
				return true
			}
		}
		off = j
	}
}

// mayHoldMetaFold reports whether b may hold a member named _meta in any
// ASCII case, or escaped.
func mayHoldMetaFold(b []byte) bool {
	if bytes.Contains(b, []byte(`\u`)) {
		return true
	}
	for off := 0; ; {
		i := bytes.IndexByte(b[off:], '_')
		if i < 0 {
			return false
		}
		j := off + i
		if j+5 <= len(b) && b[j+1]|0x20 == 'm' && b[j+2]|0x20 == 'e' && b[j+3]|0x20 == 't' && b[j+4]|0x20 == 'a' {
			return true
		}
		off = j + 1
	}
}

// reservedMetaKey reports whether a _meta key has a prefix the spec
// reserves: one whose second label is modelcontextprotocol or mcp
// (io.modelcontextprotocol/serverInfo, dev.mcp/x).
func reservedMetaKey(k string) bool {
	prefix, _, ok := strings.Cut(k, "/")
	if !ok {
		return false
	}
	labels := strings.Split(prefix, ".")
	return len(labels) >= 2 && (labels[1] == "modelcontextprotocol" || labels[1] == "mcp")
}

// checkShape checks a result object against the schema of its method's
// result: the members a client relies on, with their types. Members are
// captured raw (aliasing res), so a check costs few allocations.
func checkShape(method string, res []byte) error {
	switch method {
	case abi.MethodToolsCall:
		var r struct {
			Content    *[]contentBlock `json:"content"`
			Structured jsonrpc.Raw     `json:"structuredContent"`
			IsError    jsonrpc.Raw     `json:"isError"`
		}
		if err := sonic.Unmarshal(res, &r); err != nil {
			return errors.New("is not a CallToolResult: content must be an array of content blocks")
		}
		if r.Content == nil {
			return errors.New(`has no "content" array`)
		}
		for i := range *r.Content {
			if err := (*r.Content)[i].check(); err != nil {
				return fmt.Errorf("has content[%d] that %w", i, err)
			}
		}
		if len(r.Structured) > 0 && r.Structured[0] != '{' {
			return errors.New(`has a "structuredContent" that is not an object`)
		}
		if len(r.IsError) > 0 && string(r.IsError) != "true" && string(r.IsError) != "false" {
			return errors.New(`has an "isError" that is not a boolean`)
		}
	case abi.MethodResourceRead:
		var r struct {
			Contents *[]struct {
				URI  jsonrpc.Raw `json:"uri"`
				Text jsonrpc.Raw `json:"text"`
				Blob jsonrpc.Raw `json:"blob"`
			} `json:"contents"`
		}
		if err := sonic.Unmarshal(res, &r); err != nil || r.Contents == nil {
			return errors.New(`is not a ReadResourceResult: it needs a "contents" array of objects with a uri and a text or blob string`)
		}
		for i, c := range *r.Contents {
			if !isString(c.URI) || isString(c.Text) == isString(c.Blob) {
				return fmt.Errorf("has contents[%d] without a uri string and exactly one of text or blob", i)
			}
		}
	case abi.MethodPromptsGet:
		var r struct {
			Messages *[]struct {
				Role    string       `json:"role"`
				Content contentBlock `json:"content"`
			} `json:"messages"`
		}
		if err := sonic.Unmarshal(res, &r); err != nil || r.Messages == nil {
			return errors.New(`is not a GetPromptResult: it needs a "messages" array of objects with a role and a content block`)
		}
		for i := range *r.Messages {
			m := &(*r.Messages)[i]
			if m.Role != "user" && m.Role != "assistant" {
				return fmt.Errorf(`has messages[%d] whose role is not "user" or "assistant"`, i)
			}
			if err := m.Content.check(); err != nil {
				return fmt.Errorf("has messages[%d] whose content %w", i, err)
			}
		}
	case abi.MethodComplete:
		var r struct {
			Completion *struct {
				Values  *[]string `json:"values"`
				Total   *float64  `json:"total"`
				HasMore *bool     `json:"hasMore"`
			} `json:"completion"`
		}
		if err := sonic.Unmarshal(res, &r); err != nil || r.Completion == nil || r.Completion.Values == nil {
			return errors.New(`is not a CompleteResult: it needs "completion" with a "values" array of strings`)
		}
		if n := len(*r.Completion.Values); n > 100 {
			return errors.New("has " + strconv.Itoa(n) + " completion values; at most 100 are allowed")
		}
	}
	return nil
}

// contentBlock is a content block's members, raw; set is false when the
// value was not an object.
type contentBlock struct {
	set      bool
	Type     jsonrpc.Raw
	Text     jsonrpc.Raw
	Data     jsonrpc.Raw
	MimeType jsonrpc.Raw
	URI      jsonrpc.Raw
	Name     jsonrpc.Raw
	Resource jsonrpc.Raw
}

// UnmarshalJSON captures the members of an object; anything else leaves
// the block unset.
func (b *contentBlock) UnmarshalJSON(raw []byte) error {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var m struct {
		Type     jsonrpc.Raw `json:"type"`
		Text     jsonrpc.Raw `json:"text"`
		Data     jsonrpc.Raw `json:"data"`
		MimeType jsonrpc.Raw `json:"mimeType"`
		URI      jsonrpc.Raw `json:"uri"`
		Name     jsonrpc.Raw `json:"name"`
		Resource jsonrpc.Raw `json:"resource"`
	}
	if err := sonic.Unmarshal(raw, &m); err != nil {
		return nil
	}
	*b = contentBlock{set: true, Type: m.Type, Text: m.Text, Data: m.Data, MimeType: m.MimeType, URI: m.URI, Name: m.Name, Resource: m.Resource}
	return nil
}

// isString reports whether raw JSON is a string.
func isString(raw []byte) bool { return len(raw) > 1 && raw[0] == '"' }

// check checks one content block: an object with a known type and that
// type's required members.
func (b *contentBlock) check() error {
	if !b.set || !isString(b.Type) {
		return errors.New(`is not a content block (an object with a "type" string)`)
	}
	switch typ := string(b.Type); typ {
	case `"text"`:
		if !isString(b.Text) {
			return errors.New(`of type "text" has no "text" string`)
		}
	case `"image"`, `"audio"`:
		if !isString(b.Data) || !isString(b.MimeType) {
			return fmt.Errorf(`of type %s needs "data" and "mimeType" strings`, typ)
		}
	case `"resource_link"`:
		if !isString(b.URI) || !isString(b.Name) {
			return errors.New(`of type "resource_link" needs "uri" and "name" strings`)
		}
	case `"resource"`:
		if len(b.Resource) == 0 || b.Resource[0] != '{' {
			return errors.New(`of type "resource" needs a "resource" object`)
		}
	default:
		return fmt.Errorf("has the unknown type %s", shortText(typ))
	}
	return nil
}

// shortText is s cut to a length fit for a message.
func shortText(s string) string {
	if len(s) > 120 {
		return strings.ToValidUTF8(s[:120], "") + "…"
	}
	return s
}
