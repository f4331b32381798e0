package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

var (
	mcpFakeOnce sync.Once
	mcpFakeWasm []byte
	mcpFakeErr  error
)

// mcpFake builds testdata/guests/mcpfake, an MCP stdio server shaped like
// the SDKs' (a reader goroutine, handlers answering while it reads).
func mcpFake(t *testing.T) []byte {
	t.Helper()
	mcpFakeOnce.Do(func() {
		out := filepath.Join(t.TempDir(), "mcpfake.wasm")
		if mcpFakeErr = guestbuild.Build(context.Background(), "testdata/guests/mcpfake", out); mcpFakeErr == nil {
			mcpFakeWasm, mcpFakeErr = os.ReadFile(out)
		}
	})
	if mcpFakeErr != nil {
		t.Fatal(mcpFakeErr)
	}
	return mcpFakeWasm
}

// mcpEngine is an engine on the cache directory dir.
func mcpEngine(t *testing.T, dir string) *Engine {
	t.Helper()
	e, err := NewEngine(Config{CacheDir: dir, Logger: quietLogger, DescribeTimeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

func TestMCPServerGuestModule(t *testing.T) {
	wasm := mcpFake(t)
	cache := t.TempDir()
	m, err := mcpEngine(t, cache).Load(context.Background(), "fake", wasm, Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Mode() != ModeMCPServer || m.MCPVersion() != "2025-03-26" {
		t.Fatalf("mode %q, revision %q", m.Mode(), m.MCPVersion())
	}
	d := m.Description()
	if d.Name != "fake" || d.Version != "9" || d.Instructions != "offered "+abi.MCPServerVersions()[0] ||
		len(d.Tools) != 2 || d.Tools[0].Name != "trace" || d.Tools[1].Name != "ask" ||
		len(d.Resources) != 1 || len(d.ResourceTemplates) != 0 {
		t.Fatalf("description: %+v", d)
	}

	// The handshake comes before the request, whose params lose the
	// host–client keys.
	params := `{"name":"trace","arguments":{},"task":{"ttl":1},"_meta":{"progressToken":"t",` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`
	reply, err := m.Call(context.Background(), abi.MethodToolsCall, []byte(params), nil)
	if err != nil || reply.Error != nil {
		t.Fatalf("trace: %v %v", err, reply)
	}
	text := string(reply.Result)
	if !strings.Contains(text, `initialize,notifications/initialized,logging/setLevel,tools/call {`) ||
		!strings.Contains(text, `progressToken`) || strings.Contains(text, "io.modelcontextprotocol") || strings.Contains(text, "ttl") {
		t.Fatalf("trace: %s", text)
	}

	// The server's requests reach the peer while its reader reads on;
	// its ping is the host's to answer.
	p := &recordingPeer{}
	reply, err = m.Call(context.Background(), abi.MethodToolsCall, []byte(`{"name":"ask","arguments":{}}`), p)
	if err != nil || reply.Error != nil || !strings.Contains(string(reply.Result), `got {\"action\":\"accept\"`) {
		t.Fatalf("ask: %v %s", err, reply.Result)
	}
	if len(p.notes) != 1 || !strings.Contains(p.notes[0], `"asking"`) {
		t.Fatalf("notifications: %v", p.notes)
	}

	// The next engine lists it from the cache, still an MCP server.
	m2, err := mcpEngine(t, cache).Open(context.Background(), "fake", wasm, "", Policy{}, func() ([]byte, error) { return wasm, nil })
	if err != nil || m2.Mode() != ModeMCPServer || m2.Footprint().Code != 0 {
		t.Fatalf("from the cache: %v, mode %v", err, m2.Mode())
	}
	if reply, err := m2.Call(context.Background(), abi.MethodToolsCall, []byte(`{"name":"trace"}`), nil); err != nil || reply.Error != nil {
		t.Fatalf("call after Open: %v %v", err, reply)
	}
}

func TestMCPServerGuestModes(t *testing.T) {
	wasm := mcpFake(t)
	// mode = "mcp-server": no wasmcp/describe at all.
	m, err := mcpEngine(t, testCache).Load(context.Background(), "fake", wasm, Policy{Mode: ModeMCPServer})
	if err != nil || m.Mode() != ModeMCPServer {
		t.Fatalf("mode mcp-server: %v", err)
	}
	// mode = "wasmcp": the server's refusal of wasmcp/describe is final
	// (its reader blocks on stdin: the describe run may also time out).
	e, err := NewEngine(Config{CacheDir: testCache, Logger: quietLogger, DescribeTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	if _, err := e.Load(context.Background(), "fake", wasm, Policy{Mode: ModeABI}); err == nil || !strings.Contains(err.Error(), "describe failed") {
		t.Fatalf("mode wasmcp: %v", err)
	}
	// A wasmcp guest in mode mcp-server is refused: it does not answer
	// initialize.
	if _, err := mcpEngine(t, testCache).Load(context.Background(), "probe", probeWasm, Policy{Mode: ModeMCPServer}); err == nil ||
		!strings.Contains(err.Error(), "MCP discovery failed") {
		t.Fatalf("probe as an MCP server: %v", err)
	}
}
