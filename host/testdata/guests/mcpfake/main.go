// Command mcpfake is a small MCP stdio server in the shape of the SDKs'
// (a reader goroutine feeding a channel, handlers that answer while it
// reads on), for the host's tests of MCP servers as guests. It records
// every message it received, and its tool "trace" answers with them.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
)

type msg struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`
}

var (
	outMu sync.Mutex
	seen  []string // methods received, in order
	inits int
)

func send(v any) {
	b, _ := json.Marshal(v)
	outMu.Lock()
	os.Stdout.Write(append(b, '\n'))
	outMu.Unlock()
}

func reply(id json.RawMessage, result any) {
	send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func fail(id json.RawMessage, code int, text string) {
	send(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": text}})
}

func main() {
	in := make(chan msg)
	go func() {
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m msg
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				in <- m
			}
		}
		close(in)
	}()
	responses := map[string]chan msg{}
	var mu sync.Mutex
	for m := range in {
		if m.Method == "" {
			mu.Lock()
			ch := responses[string(m.ID)]
			mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		seen = append(seen, m.Method)
		if m.ID == nil {
			continue
		}
		if m.Method != "initialize" && inits == 0 {
			fail(m.ID, -32603, "method "+m.Method+" is invalid during session initialization")
			continue
		}
		switch m.Method {
		case "initialize":
			inits++
			var p struct {
				ProtocolVersion string `json:"protocolVersion"`
			}
			json.Unmarshal(m.Params, &p)
			reply(m.ID, map[string]any{"protocolVersion": "2025-03-26",
				"capabilities": map[string]any{"tools": map[string]any{}, "resources": map[string]any{}, "logging": map[string]any{}},
				"serverInfo":   map[string]any{"name": "fake", "version": "9"}, "instructions": "offered " + p.ProtocolVersion})
		case "logging/setLevel":
			reply(m.ID, map[string]any{})
		case "tools/list":
			var p struct {
				Cursor string `json:"cursor"`
			}
			json.Unmarshal(m.Params, &p)
			if p.Cursor == "" {
				reply(m.ID, map[string]any{"tools": []any{map[string]any{"name": "trace", "inputSchema": map[string]any{"type": "object"}}},
					"nextCursor": "page2"})
			} else {
				reply(m.ID, map[string]any{"tools": []any{map[string]any{"name": "ask", "inputSchema": map[string]any{"type": "object"}}}})
			}
		case "resources/list":
			reply(m.ID, map[string]any{"resources": []any{map[string]any{"uri": "fake://r", "name": "r"}}})
		case "tools/call":
			var p struct {
				Name string `json:"name"`
			}
			json.Unmarshal(m.Params, &p)
			id, params := m.ID, m.Params
			switch p.Name {
			case "trace":
				text := strings.Join(seen, ",") + " " + string(params)
				reply(id, map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}})
			case "ask":
				// Answered on a goroutine of its own while the reader
				// reads on, as the SDKs do.
				ch := make(chan msg, 1)
				mu.Lock()
				responses["1"] = ch
				responses["2"] = ch
				mu.Unlock()
				go func() {
					send(map[string]any{"jsonrpc": "2.0", "id": 2, "method": "ping"})
					<-ch
					send(map[string]any{"jsonrpc": "2.0", "method": "notifications/message", "params": map[string]any{"level": "debug", "data": "asking"}})
					send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "elicitation/create", "params": map[string]any{"message": "Your name?"}})
					r := <-ch
					reply(id, map[string]any{"content": []any{map[string]any{"type": "text", "text": fmt.Sprintf("got %s", r.Result)}}})
				}()
			default:
				fail(id, -32602, "unknown tool "+p.Name)
			}
		default:
			fail(m.ID, -32601, "method not found: "+m.Method)
		}
	}
}
