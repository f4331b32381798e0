// Command inputs is a guest for the host's input-required tests, written
// against the raw ABI (no SDK) so that each tool controls exactly which
// requests it sends, with which ids, and when it reads stdin.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

const description = `{"abiVersion":1,"name":"inputs","version":"1.0.0","tools":[
{"name":"ask","description":"Elicits under the id user_name and echoes the answer.","inputSchema":{"type":"object"}},
{"name":"ask3","description":"Sends three requests (ids \"a\", 2, \"c\") before reading.","inputSchema":{"type":"object"}},
{"name":"ask_then_answer","description":"Sends a request and answers without reading stdin.","inputSchema":{"type":"object"}},
{"name":"dup","description":"Sends two requests with the same id.","inputSchema":{"type":"object"}},
{"name":"state","description":"Leaves state, then elicits.","inputSchema":{"type":"object"}},
{"name":"chain","description":"Asks first, then second once first is answered.","inputSchema":{"type":"object"}},
{"name":"notify","description":"Sends list_changed and resources/updated notifications.","inputSchema":{"type":"object"}}
]}`

type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

var (
	in  = bufio.NewReader(os.Stdin)
	out = bufio.NewWriter(os.Stdout)
)

func send(line string) {
	out.WriteString(line + "\n")
	out.Flush()
}

func read() (message, bool) {
	line, err := in.ReadBytes('\n')
	if err != nil && len(line) == 0 {
		return message{}, false
	}
	var m message
	if json.Unmarshal(line, &m) != nil {
		return message{}, false
	}
	return m, true
}

func elicit(id string) {
	send(`{"jsonrpc":"2.0","id":` + id + `,"method":"elicitation/create","params":{"message":"` + strings.Trim(id, `"`) + `?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}`)
}

func answer(id json.RawMessage, text string) {
	b, _ := json.Marshal(text)
	send(`{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":` + string(b) + `}]}}`)
}

// collect reads n responses and returns them as "id=result|error" texts.
func collect(n int) []string {
	var got []string
	for len(got) < n {
		m, ok := read()
		if !ok {
			os.Exit(0) // stdin ended: the host stopped waiting for us
		}
		if m.Error != nil {
			got = append(got, string(m.ID)+"="+string(m.Error))
		} else {
			got = append(got, string(m.ID)+"="+string(m.Result))
		}
	}
	return got
}

func main() {
	req, ok := read()
	if !ok {
		os.Exit(1)
	}
	if req.Method == "wasmcp/describe" {
		send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":` + strings.ReplaceAll(description, "\n", "") + `}`)
		return
	}
	var p struct {
		Name string `json:"name"`
	}
	json.Unmarshal(req.Params, &p)
	switch p.Name {
	case "ask":
		elicit(`"user_name"`)
		answer(req.ID, strings.Join(collect(1), ";"))
	case "ask3":
		elicit(`"a"`)
		elicit(`2`)
		elicit(`"c"`)
		answer(req.ID, strings.Join(collect(3), ";"))
	case "ask_then_answer":
		elicit(`"k"`)
		answer(req.ID, "answered anyway")
	case "dup":
		elicit(`"x"`)
		elicit(`"x"`)
		answer(req.ID, strings.Join(collect(2), ";"))
	case "state":
		send(`{"jsonrpc":"2.0","method":"wasmcp/state","params":{"state":{"step":1}}}`)
		send(`{"jsonrpc":"2.0","method":"wasmcp/state","params":{"state":{"step":2}}}`)
		elicit(`"s"`)
		answer(req.ID, strings.Join(collect(1), ";"))
	case "chain":
		elicit(`"first"`)
		a := collect(1)
		elicit(`"second"`)
		b := collect(1)
		answer(req.ID, a[0]+";"+b[0])
	case "notify":
		send(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
		send(`{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{}}`)
		send(`{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`)
		send(`{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://x"}}`)
		send(`{"jsonrpc":"2.0","method":"notifications/unknown"}`)
		answer(req.ID, "notified")
	default:
		fmt.Fprintln(os.Stderr, "unknown tool", p.Name)
		os.Exit(2)
	}
}
