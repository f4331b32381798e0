package check

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
)

// toolResult is the part of a CallToolResult the check reads.
type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError bool `json:"isError"`
}

func (r toolResult) firstText() string {
	for _, c := range r.Content {
		if c.Type == "text" {
			return c.Text
		}
	}
	return ""
}

// clientResult decodes the CallToolResult the client got.
func clientResult(res json.RawMessage) toolResult {
	var r toolResult
	_ = json.Unmarshal(res, &r)
	return r
}

// toolResultProblems checks a guest's CallToolResult: an object whose
// content is an array of well-formed blocks, isError a boolean,
// structuredContent an object, present and matching the output schema
// when the tool declares one (unless the result is an error).
func toolResultProblems(raw []byte, s contract.ToolSchemas) []string {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return []string{"the result is not a JSON object"}
	}
	var probs []string
	var blocks []json.RawMessage
	if c, ok := m["content"]; !ok {
		probs = append(probs, "no content array")
	} else if json.Unmarshal(c, &blocks) != nil || blocks == nil {
		probs = append(probs, "content is not an array")
	}
	for i, b := range blocks {
		if p := contentProblem(b); p != "" {
			probs = append(probs, fmt.Sprintf("content[%d]: %s", i, p))
		}
	}
	isError := false
	if e, ok := m["isError"]; ok {
		if json.Unmarshal(e, &isError) != nil {
			probs = append(probs, "isError is not a boolean")
		}
	}
	sc, hasSC := m["structuredContent"]
	if hasSC && !isObject(sc) {
		probs = append(probs, "structuredContent is not an object")
	}
	if s.Output != nil && !isError {
		switch {
		case !hasSC:
			probs = append(probs, "the tool declares an outputSchema but the result has no structuredContent")
		case isObject(sc):
			if err := s.Output.ValidateJSON(sc, false); err != nil {
				probs = append(probs, "structuredContent does not match the outputSchema: "+err.Error())
			}
		}
	}
	return probs
}

// contentProblem checks one content block (MCP ContentBlock).
func contentProblem(b json.RawMessage) string {
	var c map[string]json.RawMessage
	if json.Unmarshal(b, &c) != nil || c == nil {
		return "not an object"
	}
	var typ string
	if json.Unmarshal(c["type"], &typ) != nil || typ == "" {
		return "no type"
	}
	need := func(keys ...string) string {
		for _, k := range keys {
			var v string
			if json.Unmarshal(c[k], &v) != nil {
				return fmt.Sprintf("a %s block without a string %q", typ, k)
			}
		}
		return ""
	}
	switch typ {
	case "text":
		return need("text")
	case "image", "audio":
		return need("data", "mimeType")
	case "resource_link":
		return need("uri", "name")
	case "resource":
		var r map[string]json.RawMessage
		if json.Unmarshal(c["resource"], &r) != nil || r == nil {
			return "a resource block without a resource object"
		}
		return resourceContentsProblem(r)
	}
	return fmt.Sprintf("unknown content type %q", typ)
}

// resourceContentsProblem checks TextResourceContents or
// BlobResourceContents.
func resourceContentsProblem(r map[string]json.RawMessage) string {
	var uri string
	if json.Unmarshal(r["uri"], &uri) != nil || uri == "" {
		return "no uri"
	}
	var s string
	_, hasText := r["text"]
	_, hasBlob := r["blob"]
	switch {
	case hasText && json.Unmarshal(r["text"], &s) == nil:
	case hasBlob && json.Unmarshal(r["blob"], &s) == nil:
	default:
		return "neither a string text nor a string blob"
	}
	return ""
}

// readResultProblems checks a ReadResourceResult.
func readResultProblems(raw []byte) []string {
	var m struct {
		Contents []map[string]json.RawMessage `json:"contents"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return []string{"the result is not an object with a contents array"}
	}
	if len(m.Contents) == 0 {
		return []string{"no contents"}
	}
	var probs []string
	for i, c := range m.Contents {
		if p := resourceContentsProblem(c); p != "" {
			probs = append(probs, fmt.Sprintf("contents[%d]: %s", i, p))
		}
	}
	return probs
}

// promptResultProblems checks a GetPromptResult.
func promptResultProblems(raw []byte) []string {
	var m struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Messages == nil {
		return []string{"the result is not an object with a messages array"}
	}
	var probs []string
	for i, msg := range m.Messages {
		if msg.Role != "user" && msg.Role != "assistant" {
			probs = append(probs, fmt.Sprintf("messages[%d]: role %q is neither user nor assistant", i, msg.Role))
		}
		if p := contentProblem(msg.Content); p != "" {
			probs = append(probs, fmt.Sprintf("messages[%d].content: %s", i, p))
		}
	}
	return probs
}

// logLevels are MCP's log levels.
var logLevels = map[string]bool{"debug": true, "info": true, "notice": true, "warning": true,
	"error": true, "critical": true, "alert": true, "emergency": true}

// noteProblem checks one notification the guest wrote during a call whose
// progress token was token; last is the previous progress value.
func noteProblem(n message, token string, last *float64) string {
	var p map[string]json.RawMessage
	if len(n.params) > 0 && (json.Unmarshal(n.params, &p) != nil || p == nil) {
		return "params is not an object"
	}
	switch n.method {
	case abi.MethodProgress:
		var tok any
		if json.Unmarshal(p["progressToken"], &tok) != nil {
			return "no progressToken"
		}
		if s, ok := tok.(string); !ok || s != token {
			return fmt.Sprintf("progressToken %s is not the request's %q", p["progressToken"], token)
		}
		var prog float64
		if json.Unmarshal(p["progress"], &prog) != nil || math.IsNaN(prog) {
			return "progress is not a number"
		}
		if prog <= *last {
			return fmt.Sprintf("progress %v does not increase (after %v)", prog, *last)
		}
		*last = prog
		if t, ok := p["total"]; ok {
			var total float64
			if json.Unmarshal(t, &total) != nil {
				return "total is not a number"
			}
		}
		if msg, ok := p["message"]; ok {
			var s string
			if json.Unmarshal(msg, &s) != nil {
				return "message is not a string"
			}
		}
	case abi.MethodLog:
		var level string
		if json.Unmarshal(p["level"], &level) != nil || !logLevels[level] {
			return fmt.Sprintf("level %s is not an MCP log level", p["level"])
		}
		if _, ok := p["data"]; !ok {
			return "no data"
		}
		if l, ok := p["logger"]; ok {
			var s string
			if json.Unmarshal(l, &s) != nil {
				return "logger is not a string"
			}
		}
	case abi.MethodResourceUpdated:
		var uri string
		if json.Unmarshal(p["uri"], &uri) != nil || uri == "" {
			return "no uri"
		}
	}
	return ""
}

// requestProblem checks the params of a request of the guest to the
// client.
func requestProblem(q guestRequest) string {
	var p map[string]json.RawMessage
	if len(q.params) > 0 && (json.Unmarshal(q.params, &p) != nil || p == nil) {
		return "params is not an object"
	}
	switch q.method {
	case abi.MethodElicit:
		var msg string
		if json.Unmarshal(p["message"], &msg) != nil {
			return "no message"
		}
		if _, isURL := p["url"]; !isURL && !isObject(p["requestedSchema"]) {
			return "no requestedSchema object"
		}
	case abi.MethodSample:
		var msgs []json.RawMessage
		if json.Unmarshal(p["messages"], &msgs) != nil || msgs == nil {
			return "no messages array"
		}
		var n float64
		if json.Unmarshal(p["maxTokens"], &n) != nil {
			return "no maxTokens"
		}
	}
	return ""
}

func isObject(b json.RawMessage) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(b, &m) == nil && m != nil
}
