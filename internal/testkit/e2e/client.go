package e2e

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
)

// ModernVersion is the MCP revision of the stateless clients.
const ModernVersion = "2026-07-28"

// StdioClient is one 2025-11-25 session over a server's stdin and stdout:
// it routes each response to the request that awaits it and each
// notifications/progress to its request's callback; every other message
// from the server (notifications, the server's own requests, which it
// never answers) goes to the onMessage hook and to Notes.
type StdioClient struct {
	in      io.Writer
	wmu     sync.Mutex
	next    atomic.Int64
	mu      sync.Mutex
	waiting map[string]chan string  // by id
	prog    map[string]func(string) // by progress token
	notes   chan string
	extra   atomic.Int64
	hook    func(method, line string)
}

// NewStdioClient initializes a session on s declaring the client
// capabilities caps (a JSON object). onMessage, if not nil, sees every
// message with a method other than notifications/progress.
func NewStdioClient(t testing.TB, s *Serve, caps string, onMessage func(method, line string)) *StdioClient {
	t.Helper()
	c := &StdioClient{in: s.Stdin, waiting: map[string]chan string{}, prog: map[string]func(string){},
		notes: make(chan string, 1024), hook: onMessage}
	go c.read(s.Stdout)
	init := c.Request(t, "initialize", `{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"e2e","version":"1"}}`, nil)
	if !strings.Contains(init, `"result"`) {
		t.Fatalf("initialize: %s", init)
	}
	c.Send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

// Send writes one line to the server.
func (c *StdioClient) Send(t testing.TB, line string) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		t.Errorf("writing to wasmcp: %v", err)
	}
}

// read dispatches the server's lines until its stdout ends.
func (c *StdioClient) read(out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 32<<20)
	for sc.Scan() {
		line := sc.Text()
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Token json.RawMessage `json:"progressToken"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		c.mu.Lock()
		f := c.prog[string(m.Params.Token)]
		ch, awaited := c.waiting[string(m.ID)]
		if m.Method == "" {
			delete(c.waiting, string(m.ID))
		}
		c.mu.Unlock()
		switch {
		case m.Method == "notifications/progress":
			if f != nil {
				f(line)
			}
		case m.Method != "":
			if c.hook != nil {
				c.hook(m.Method, line)
			}
			select {
			case c.notes <- line:
			default:
			}
		case awaited:
			ch <- line
		default:
			c.extra.Add(1)
		}
	}
}

// Request sends a request with params (a JSON object) and returns the
// response, failing the test when none comes within a minute. With
// progress set the request carries a progress token and its
// notifications/progress go to progress.
func (c *StdioClient) Request(t testing.TB, method, params string, progress func(string)) string {
	t.Helper()
	id := fmt.Sprint(c.next.Add(1))
	ch := make(chan string, 1)
	c.mu.Lock()
	c.waiting[id] = ch
	if progress != nil {
		c.prog[`"p`+id+`"`] = progress
		params = WithMeta(params, `{"progressToken":"p`+id+`"}`)
	}
	c.mu.Unlock()
	c.Send(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+method+`","params":`+params+`}`)
	select {
	case resp := <-ch:
		return resp
	case <-time.After(60 * time.Second):
		t.Fatalf("no answer to %s %s within a minute", method, params)
		return ""
	}
}

// Notes yields the messages with a method other than
// notifications/progress (new ones are dropped while 1024 lie unread).
func (c *StdioClient) Notes() <-chan string { return c.notes }

// Extra counts the responses no request awaited (a second answer to one
// request).
func (c *StdioClient) Extra() int64 { return c.extra.Load() }

// WithMeta inserts a _meta object into a params object.
func WithMeta(params, meta string) string {
	params = strings.TrimSpace(params)
	if params == "" || params == "{}" {
		return `{"_meta":` + meta + `}`
	}
	return `{"_meta":` + meta + `,` + params[1:]
}

// Post sends one 2026-07-28 request body to url with the headers the
// revision asks for (Mcp-Name when name is set).
func Post(ctx context.Context, url, method, name, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", ModernVersion)
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	return http.DefaultClient.Do(req)
}

// ReadSSE calls f with the data of each event until f returns false or
// the stream ends, and returns the stream's read error.
func ReadSSE(r io.Reader, f func(data string) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 32<<20)
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if len(data) > 0 {
				if !f(strings.Join(data, "\n")) {
					return nil
				}
				data = data[:0]
			}
		case strings.HasPrefix(line, "data:"):
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	return sc.Err()
}
