package hostile

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
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
type server = e2e.Serve

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
	args := []string{"--tools", dir, "--cache-dir", cacheDir, "--watch=false",
		"--memory", "64", "--timeout", "10s", "--max-output", "4"}
	args = append(args, extra...)
	if transport == "http" {
		args = append(args, "--http", "127.0.0.1:0")
	}
	return e2e.StartServe(t, wasmcpBin, []string{hostEnv + "=from-host", secretEnv + "=s3cret"}, args...)
}

func tail(s string, n int) string { return e2e.Tail(s, n) }

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
	c *e2e.StdioClient
}

func newStdioClient(t *testing.T, s *server) *stdioClient {
	c := &stdioClient{}
	c.c = e2e.NewStdioClient(t, s, `{"elicitation":{}}`, c.count)
	return c
}

func (c *stdioClient) request(t *testing.T, method, params string) string {
	return c.c.Request(t, method, params, nil)
}

func (c *stdioClient) call(t *testing.T, tool, args string) reply {
	return parseReply(c.request(t, "tools/call", callParams(tool, args)))
}

// extra counts the responses no request awaited.
func (c *stdioClient) extra() int64 { return c.c.Extra() }

// httpClient speaks 2026-07-28 over Streamable HTTP: each call is a POST
// whose answer is JSON or an SSE stream of notifications and the response.
// It declares elicitation and asks for every log level.
type httpClient struct {
	counters
	url  string
	next atomic.Int64
}

const modernVersion = e2e.ModernVersion

func (c *httpClient) call(t *testing.T, tool, args string) reply {
	id := fmt.Sprint(c.next.Add(1))
	meta := `{"io.modelcontextprotocol/protocolVersion":"` + modernVersion + `",` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},` +
		`"io.modelcontextprotocol/logLevel":"debug"}`
	body := `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"_meta":` + meta + `,` + callParams(tool, args)[1:] + `}`
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	resp, err := e2e.Post(ctx, c.url, "tools/call", tool, body)
	if err != nil {
		t.Fatalf("tools/call %s: %v", tool, err)
	}
	defer resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		return parseReply(string(b))
	}
	var final string
	err = e2e.ReadSSE(resp.Body, func(msg string) bool {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal([]byte(msg), &m) != nil {
			return true
		}
		switch {
		case m.Method != "":
			c.count(m.Method, msg)
		case final == "" && string(m.ID) == id:
			final = msg
		default:
			c.nExtra.Add(1)
		}
		return true
	})
	if final == "" {
		t.Fatalf("tools/call %s: the event stream ended without a response (%v)", tool, err)
	}
	return parseReply(final)
}
