// Command rules is a guest for the check's tests, written against the ABI
// directly (no SDK): it keeps the rules unless the environment variable
// BREAK (set by the test's policy) names one to break.
//
//	after       writes a line after its answer
//	wrongid     answers with another id
//	badresult   answers a result whose content is not an array
//	badoutput   answers structuredContent that does not match the output schema
//	badnote     sends a progress notification whose progress is not a number
//	hang        never ends when stdin is closed without a request
//	crashdecline traps when the client declines its elicitation
//	badresource answers a resource read without contents
//	badprompt   answers a prompt with a message of role "system"
//	badcomplete answers a completion without values
package main

import (
	"bufio"
	"encoding/json"
	"os"
)

const describe = `{"abiVersion":1,"name":"rules","version":"1.0.0",
"tools":[
 {"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string","minLength":3}},"required":["text"]},
  "outputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},
 {"name":"confirm","inputSchema":{"type":"object","properties":{"n":{"type":"integer","minimum":2,"maximum":4}},"required":["n"],"additionalProperties":false}},
 {"name":"pattern","inputSchema":{"type":"object","properties":{"code":{"type":"string","pattern":"^[QZ]{7}$"}},"required":["code"]}},
 {"name":"later","inputSchema":{"type":"object"},"execution":{"taskSupport":"required"}}],
"resources":[{"uri":"rules://doc","name":"doc","mimeType":"text/plain"}],
"prompts":[{"name":"hello","arguments":[{"name":"who","required":true}]}],
"completions":true}`

type msg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

var out = bufio.NewWriter(os.Stdout)

func send(m msg) {
	m.JSONRPC = "2.0"
	b, _ := json.Marshal(m)
	out.Write(append(b, '\n'))
}

func main() {
	mode := os.Getenv("BREAK")
	in := bufio.NewReader(os.Stdin)
	line, err := in.ReadBytes('\n')
	if err != nil {
		if mode == "hang" {
			for {
				in.ReadBytes('\n') // end of file again, forever
			}
		}
		os.Exit(0)
	}
	var req msg
	if json.Unmarshal(line, &req) != nil {
		os.Exit(1)
	}
	id := req.ID
	if mode == "wrongid" && req.Method == "tools/call" {
		id = json.RawMessage(`424242`)
	}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      struct {
			ProgressToken json.RawMessage `json:"progressToken"`
		} `json:"_meta"`
	}
	json.Unmarshal(req.Params, &p)
	var result string
	switch req.Method {
	case "wasmcp/describe":
		result = describe
	case "tools/call":
		if len(p.Meta.ProgressToken) > 0 {
			progress := `1`
			if mode == "badnote" {
				progress = `"half"`
			}
			send(msg{Method: "notifications/progress", Params: json.RawMessage(`{"progressToken":` + string(p.Meta.ProgressToken) + `,"progress":` + progress + `,"total":2}`)})
		}
		switch p.Name {
		case "echo":
			var a struct {
				Text string `json:"text"`
			}
			json.Unmarshal(p.Arguments, &a)
			t, _ := json.Marshal(a.Text)
			switch mode {
			case "badresult":
				result = `{"content":"` + a.Text + `"}`
			case "badoutput":
				result = `{"content":[{"type":"text","text":` + string(t) + `}],"structuredContent":{"text":7}}`
			default:
				result = `{"content":[{"type":"text","text":` + string(t) + `}],"structuredContent":{"text":` + string(t) + `}}`
			}
		case "confirm":
			send(msg{ID: json.RawMessage(`"q"`), Method: "elicitation/create",
				Params: json.RawMessage(`{"message":"Sure?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}`)})
			out.Flush()
			var ans msg
			for {
				l, err := in.ReadBytes('\n')
				if err != nil {
					os.Exit(1)
				}
				if json.Unmarshal(l, &ans) == nil && string(ans.ID) == `"q"` {
					break
				}
			}
			var r struct {
				Action string `json:"action"`
			}
			json.Unmarshal(ans.Result, &r)
			if r.Action != "accept" && mode == "crashdecline" {
				var m map[string]int
				m["boom"]++ // a nil map: the guest panics
			}
			result = `{"content":[{"type":"text","text":"` + r.Action + `"}]}`
		default:
			result = `{"content":[{"type":"text","text":"ok"}]}`
		}
	case "resources/read":
		result = `{"contents":[{"uri":"rules://doc","mimeType":"text/plain","text":"the rules"}]}`
		if mode == "badresource" {
			result = `{"contents":[]}`
		}
	case "completion/complete":
		result = `{"completion":{"values":["Ada","Bob"],"total":2}}`
		if mode == "badcomplete" {
			result = `{"completion":{}}`
		}
	case "prompts/get":
		role := "user"
		if mode == "badprompt" {
			role = "system"
		}
		result = `{"messages":[{"role":"` + role + `","content":{"type":"text","text":"hello"}}]}`
	default:
		send(msg{ID: id, Error: json.RawMessage(`{"code":-32601,"message":"method not found"}`)})
		out.Flush()
		return
	}
	var compact = json.RawMessage(result)
	if b, err := json.Marshal(compact); err == nil {
		compact = b
	}
	send(msg{ID: id, Result: compact})
	if mode == "after" {
		send(msg{Method: "notifications/message", Params: json.RawMessage(`{"level":"info","data":"too late"}`)})
	}
	out.Flush() // the answer and anything after it in one write
}
