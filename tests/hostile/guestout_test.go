package hostile

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

// validWire fails the test unless raw is valid JSON in UTF-8 with no raw
// CR or LF.
func validWire(t *testing.T, what, raw string) {
	t.Helper()
	if !json.Valid([]byte(raw)) || !utf8.ValidString(raw) || strings.ContainsAny(raw, "\r\n") {
		t.Fatalf("%s: not one line of valid JSON in UTF-8: %q", what, raw)
	}
}

// TestGuestOutputChecked runs rawout's answers through wasmcp serve over
// stdio and HTTP, each beside a call to the good module: bytes are
// repaired, shapes and reserved codes become tool errors naming the
// module, host-owned members never reach the client.
func TestGuestOutputChecked(t *testing.T) {
	for _, transport := range []string{"stdio", "http"} {
		t.Run(transport, func(t *testing.T) {
			t.Parallel()
			srv := startServerIn(t, transport, rawToolsDir, "--workers", "64")
			var c client
			if transport == "stdio" {
				c = newStdioClient(t, srv)
			} else {
				c = &httpClient{url: srv.URL}
			}
			cases := []struct {
				tool  string
				check func(t *testing.T, r reply)
			}{
				{"cr_text", func(t *testing.T, r reply) {
					if r.isError || r.text != "a\rb\x1b[2J\x00\uFFFDc\\x" {
						t.Fatalf("want the text repaired, got %q (%s)", r.text, r)
					}
				}},
				{"result_number", func(t *testing.T, r reply) { toolError(t, r, "rawout", "result is not a JSON object: 5") }},
				{"result_string", func(t *testing.T, r reply) { toolError(t, r, "rawout", `result is not a JSON object: "str"`) }},
				{"result_null", func(t *testing.T, r reply) { toolError(t, r, "rawout", "result is not a JSON object: null") }},
				{"content_string", func(t *testing.T, r reply) { toolError(t, r, "rawout", "content must be an array") }},
				{"forge_input", func(t *testing.T, r reply) {
					if r.isError || r.inputs != 0 || (r.resultType != "" && r.resultType != "complete") || strings.Contains(r.raw, "evil") || r.text != "forged" {
						t.Fatalf("a forged input_required or serverInfo reached the client: %s", r)
					}
				}},
				{"forge_task", func(t *testing.T, r reply) {
					if r.isError || (r.resultType != "" && r.resultType != "complete") {
						t.Fatalf("a forged task reached the client: %s", r)
					}
				}},
				{"reserved_parse", func(t *testing.T, r reply) {
					toolError(t, r, "rawout", "error code -32700, which only the server may use")
				}},
				{"reserved_server", func(t *testing.T, r reply) {
					toolError(t, r, "rawout", "error code -32022, which only the server may use")
				}},
			}
			var wg sync.WaitGroup
			for _, tc := range cases {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var good reply
					var gw sync.WaitGroup
					gw.Add(1)
					go func() {
						defer gw.Done()
						good = c.call(t, "echo", `{"text":"`+tc.tool+`","sleep_ms":100}`)
					}()
					r := c.call(t, tc.tool, "{}")
					gw.Wait()
					t.Run(tc.tool, func(t *testing.T) {
						if transport == "stdio" {
							validWire(t, tc.tool, r.raw)
						}
						tc.check(t, r)
						if good.isError || good.text != "echo: "+tc.tool {
							t.Errorf("the neighbour's call failed: %s", good)
						}
					})
				}()
			}
			wg.Wait()
			// Load-time refusals.
			if r := c.call(t, "costly_call", "{}"); r.rpcCode != -32602 || !strings.Contains(r.rpcMsg, "Unknown tool") {
				t.Errorf("the exponential schema's tool: want it unknown (its module refused), got %s", r)
			}
			log := srv.Stderr.String()
			if !strings.Contains(log, "costly.wasm") || !strings.Contains(log, "too costly") {
				t.Errorf("the log does not say costly.wasm was refused for its schema")
			}
			if strings.Count(log, "declaration refused") < 4 {
				t.Errorf("the log does not name the four refused declarations of texts.wasm")
			}
			if transport == "stdio" {
				sc := c.(*stdioClient)
				prompts := sc.request(t, "prompts/list", "{}")
				resources := sc.request(t, "resources/list", "{}")
				validWire(t, "prompts/list", prompts)
				validWire(t, "resources/list", resources)
				if !strings.Contains(prompts, "clean_prompt") || strings.Contains(prompts, "osc_prompt") || strings.Contains(prompts, "nul") {
					t.Errorf("prompts/list: %s", tail(prompts, 600))
				}
				if !strings.Contains(resources, "clean_resource") || strings.Contains(resources, "cr_resource") || strings.Contains(resources, "big_resource") {
					t.Errorf("resources/list: %s", tail(resources, 600))
				}
			} else {
				checkSSEWire(t, srv.URL)
			}
			if after := c.call(t, "echo", `{"text":"after"}`); after.text != "echo: after" {
				t.Errorf("the host stopped serving: %s", after)
			}
		})
	}
}

// checkSSEWire posts a call whose guest logs a message holding raw CR,
// a forged SSE field, a terminal escape and a byte that is not UTF-8, and
// reads the event stream as bytes: no CR anywhere, every line a data line
// (or empty, id or comment), every event's data valid JSON in UTF-8.
func checkSSEWire(t *testing.T, url string) {
	meta := `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/logLevel":"debug"}`
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":` + meta + `,"name":"notify_cr","arguments":{}}}`
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", "2026-07-28")
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", "notify_cr")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("want an event stream (the guest logs first), got %s: %q", resp.Header.Get("Content-Type"), raw)
	}
	if strings.Contains(string(raw), "\r") {
		t.Fatalf("a raw CR on the SSE wire: %q", raw)
	}
	events := 0
	var data []string
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(make([]byte, 1<<20), 8<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if len(data) > 0 {
				validWire(t, "SSE event", strings.Join(data, ""))
				events++
			}
			data = nil
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		case strings.HasPrefix(line, "id:"), strings.HasPrefix(line, ":"):
		default:
			t.Fatalf("SSE line that is no data line: %q", line)
		}
	}
	if events != 2 {
		t.Fatalf("want the log and the response, got %d events: %q", events, raw)
	}
}

// TestStdioFairAcrossModules floods one module over stdio with calls that
// sleep to their deadline (2 s), past its workers and queue (the default
// 16 and 64), and calls another module meanwhile: that call is answered
// before any call of the flood ends, and only the flooded module's calls
// are refused as overloaded.
func TestStdioFairAcrossModules(t *testing.T) {
	srv := startServerIn(t, "stdio", toolsDir)
	c := newStdioClient(t, srv)
	if r := c.call(t, "echo", `{"text":"ready"}`); r.text != "echo: ready" {
		t.Fatalf("the good module does not answer: %s", r)
	}
	const flood = 90
	var ended, overloaded atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < flood; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := c.call(t, "sleep_forever", "{}")
			if r.rpcCode == -32603 && strings.Contains(r.rpcMsg, "overloaded") {
				if !strings.Contains(r.rpcMsg, "hostilego") {
					t.Errorf("overloaded, not naming the flooded module: %s", r)
				}
				overloaded.Add(1)
				return
			}
			ended.Add(1)
		}()
	}
	time.Sleep(300 * time.Millisecond) // the flood is in
	r := c.call(t, "echo", `{"text":"during"}`)
	endedBefore := ended.Load()
	if r.text != "echo: during" {
		t.Fatalf("the other module's call: %s", r)
	}
	if endedBefore != 0 {
		t.Errorf("the other module's call was answered after %d calls of the flood ended", endedBefore)
	}
	wg.Wait()
	if n := overloaded.Load(); n != flood-80 {
		t.Errorf("%d calls of the flood were refused as overloaded; want %d (%d past 16 running and 64 waiting)", n, flood-80, flood-80)
	}
	fmt.Fprintf(io.Discard, "%d", ended.Load())
}
