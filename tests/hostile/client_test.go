package hostile

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testkit/e2e"
)

// The battery's client side: a wasmcp serve process and an MCP client for
// it over stdio (a 2025-11-25 session that declares elicitation, so a
// guest's requests reach it) or over Streamable HTTP (2026-07-28, one POST
// per call).

// server is a running wasmcp serve.
type server struct {
	cmd    *exec.Cmd
	stderr *e2e.LockedBuffer
	stdin  io.WriteCloser // stdio only
	stdout io.ReadCloser  // stdio only
	url    string         // HTTP only
	done   chan struct{}  // closed when the process exits
}

// startServer starts wasmcp serve on the battery's tools directory over
// transport ("stdio" or "http"). Server-wide defaults are generous (64
// MiB, 10 s, 4 MiB); the hostile modules' policy files lower them. The
// process is stopped when the test ends.
func startServer(t *testing.T, transport string) *server {
	t.Helper()
	return startServerIn(t, transport, toolsDir, "--workers", "64")
}

// startServerIn starts wasmcp serve as startServer does, on the tools
// directory dir, with extra flags.
func startServerIn(t *testing.T, transport, dir string, extra ...string) *server {
	t.Helper()
	args := []string{"serve", "--tools", dir, "--cache-dir", cacheDir, "--watch=false",
		"--memory", "64", "--timeout", "10s", "--max-output", "4"}
	args = append(args, extra...)
	if transport == "http" {
		args = append(args, "--http", "127.0.0.1:0")
	}
	s := &server{stderr: &e2e.LockedBuffer{}, done: make(chan struct{})}
	s.cmd = exec.Command(wasmcpBin, args...)
	s.cmd.Env = append(os.Environ(), hostEnv+"=from-host", secretEnv+"=s3cret")
	s.cmd.Stderr = s.stderr
	var err error
	if transport == "stdio" {
		if s.stdin, err = s.cmd.StdinPipe(); err != nil {
			t.Fatal(err)
		}
		if s.stdout, err = s.cmd.StdoutPipe(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		if s.stdin != nil {
			s.stdin.Close()
		}
		_ = s.cmd.Process.Signal(os.Interrupt)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.done
		}
		if t.Failed() {
			t.Logf("wasmcp stderr (last 8 KiB):\n%s", tail(s.stderr.String(), 8<<10))
		}
	})
	if transport == "http" {
		re := regexp.MustCompile(`url=(http://\S+/mcp)`)
		deadline := time.Now().Add(60 * time.Second)
		for {
			if m := re.FindStringSubmatch(s.stderr.String()); m != nil {
				s.url = m[1]
				break
			}
			select {
			case <-s.done:
				t.Fatalf("wasmcp serve --http exited: %s", s.stderr)
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("wasmcp serve --http did not report its address: %s", s.stderr)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	return s
}

// alive reports whether the server process is still running.
func (s *server) alive() bool {
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// reply is the answer to one tools/call.
type reply struct {
	raw        string
	rpcCode    int    // JSON-RPC error code; 0 for a result
	rpcMsg     string // JSON-RPC error message
	isError    bool
	text       string // the first text block of the result
	resultType string // 2026-07-28 results only
	inputs     int    // input requests of an input_required result
}

func parseReply(raw string) reply {
	r := reply{raw: raw}
	var m struct {
		Result *struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			IsError       bool                       `json:"isError"`
			ResultType    string                     `json:"resultType"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
		} `json:"result"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		r.rpcMsg = "unparseable reply: " + err.Error()
		r.rpcCode = 1
		return r
	}
	switch {
	case m.Error != nil:
		r.rpcCode, r.rpcMsg = m.Error.Code, m.Error.Message
	case m.Result != nil:
		r.isError, r.resultType, r.inputs = m.Result.IsError, m.Result.ResultType, len(m.Result.InputRequests)
		if len(m.Result.Content) > 0 {
			r.text = m.Result.Content[0].Text
		}
	default:
		r.rpcCode, r.rpcMsg = 1, "reply with neither result nor error"
	}
	return r
}

func (r reply) String() string { return tail(r.raw, 600) }

// client calls tools and counts what else the server sent.
type client interface {
	// call calls a tool and returns its reply; it fails the test if no
	// reply comes within a minute.
	call(t *testing.T, tool, args string) reply
	// logs counts the notifications/message from the logger "hostile".
	logs() int64
	// elicits counts the elicitation/create requests the client received.
	elicits() int64
	// extra counts responses to requests the client was no longer waiting
	// for (a second answer to one call).
	extra() int64
}

type counters struct{ nLogs, nElicits, nExtra atomic.Int64 }

func (c *counters) logs() int64    { return c.nLogs.Load() }
func (c *counters) elicits() int64 { return c.nElicits.Load() }
func (c *counters) extra() int64   { return c.nExtra.Load() }

// count classifies one server message that is not the awaited response.
func (c *counters) count(method, line string) {
	switch {
	case method == "notifications/message" && strings.Contains(line, `"logger":"hostile"`):
		c.nLogs.Add(1)
	case method == "elicitation/create":
		c.nElicits.Add(1)
	}
}

func callParams(tool, args string) string {
	return `{"name":` + quote(tool) + `,"arguments":` + args + `}`
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// stdioClient is one 2025-11-25 session over the server's stdin/stdout.
// It declares elicitation and never answers the requests it gets, so a
// guest's requests stay outstanding.
type stdioClient struct {
	counters
	in      io.Writer
	wmu     sync.Mutex
	next    atomic.Int64
	mu      sync.Mutex
	waiting map[string]chan string
}

func newStdioClient(t *testing.T, s *server) *stdioClient {
	c := &stdioClient{in: s.stdin, waiting: map[string]chan string{}}
	go c.read(s.stdout)
	init := c.request(t, "initialize", `{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"hostile-battery","version":"1"}}`)
	if !strings.Contains(init, `"result"`) {
		t.Fatalf("initialize: %s", init)
	}
	c.send(t, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func (c *stdioClient) send(t *testing.T, line string) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		t.Errorf("writing to wasmcp: %v", err)
	}
}

func (c *stdioClient) read(out io.Reader) {
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 1<<20), 32<<20)
	for sc.Scan() {
		line := sc.Text()
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal([]byte(line), &m) != nil {
			continue
		}
		if m.Method != "" {
			c.count(m.Method, line)
			continue
		}
		c.mu.Lock()
		ch, ok := c.waiting[string(m.ID)]
		delete(c.waiting, string(m.ID))
		c.mu.Unlock()
		if !ok {
			c.nExtra.Add(1)
			continue
		}
		ch <- line
	}
}

func (c *stdioClient) request(t *testing.T, method, params string) string {
	id := fmt.Sprint(c.next.Add(1))
	ch := make(chan string, 1)
	c.mu.Lock()
	c.waiting[id] = ch
	c.mu.Unlock()
	c.send(t, `{"jsonrpc":"2.0","id":`+id+`,"method":"`+method+`","params":`+params+`}`)
	select {
	case resp := <-ch:
		return resp
	case <-time.After(60 * time.Second):
		t.Fatalf("no answer to %s %s within a minute", method, params)
		return ""
	}
}

func (c *stdioClient) call(t *testing.T, tool, args string) reply {
	return parseReply(c.request(t, "tools/call", callParams(tool, args)))
}

// httpClient speaks 2026-07-28 over Streamable HTTP: each call is a POST
// whose answer is JSON or an SSE stream of notifications and the response.
// It declares elicitation and asks for every log level.
type httpClient struct {
	counters
	url  string
	next atomic.Int64
}

const modernVersion = "2026-07-28"

func (c *httpClient) call(t *testing.T, tool, args string) reply {
	id := fmt.Sprint(c.next.Add(1))
	meta := `{"io.modelcontextprotocol/protocolVersion":"` + modernVersion + `",` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},` +
		`"io.modelcontextprotocol/logLevel":"debug"}`
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"_meta":` + meta + `,` + callParams(tool, args)[1:] + `}`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", modernVersion)
	req.Header.Set("Mcp-Method", "tools/call")
	req.Header.Set("Mcp-Name", tool)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("tools/call %s: %v", tool, err)
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		return parseReply(string(b))
	}
	var final string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 32<<20)
	var data []string
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "data:") {
			data = append(data, strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
			continue
		}
		if line != "" || len(data) == 0 {
			continue
		}
		msg := strings.Join(data, "\n")
		data = data[:0]
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal([]byte(msg), &m) != nil {
			continue
		}
		switch {
		case m.Method != "":
			c.count(m.Method, msg)
		case final == "" && string(m.ID) == id:
			final = msg
		default:
			c.nExtra.Add(1)
		}
	}
	if final == "" {
		t.Fatalf("tools/call %s: the event stream ended without a response (%v)", tool, sc.Err())
	}
	return parseReply(final)
}
