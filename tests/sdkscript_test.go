package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
	"github.com/wasmcp/wasmcp/internal/testkit/e2e"
	"github.com/wasmcp/wasmcp/internal/testkit/npmtest"
)

// TestOfficialSDKServer: wasmcp serve --tools DIR, DIR holding a server
// written for the official SDK (examples/typescript-sdk/server.ts,
// unchanged) and node_modules with the zod its package.json pins: tools/list
// shows the zod shape as JSON Schema, tools/call adds, and a bad argument
// is a tool error — in a 2025-11-25 session and in 2026-07-28 requests.
func TestOfficialSDKServer(t *testing.T) {
	root, err := guestbuild.FindModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	example := filepath.Join(root, "examples", "typescript-sdk")
	src, err := os.ReadFile(filepath.Join(example, "server.ts"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if b, err := os.ReadFile(filepath.Join(example, "package.json")); err != nil || json.Unmarshal(b, &pkg) != nil || pkg.Dependencies["zod"] == "" {
		t.Fatalf("examples/typescript-sdk/package.json does not pin zod: %v", err)
	}
	dir := t.TempDir()
	npmtest.CopyInto(t, npmtest.Modules(t, "zod@"+pkg.Dependencies["zod"]), dir)
	if err := os.WriteFile(filepath.Join(dir, "server.ts"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--tools", dir, "--stdio", "--cache-dir", compileCache, "--watch=false", "--snapshot-timeout", "2m"}
	check := func(t *testing.T, list, good, bad string) {
		t.Helper()
		var l struct {
			Result struct {
				Tools []struct {
					Name        string `json:"name"`
					InputSchema struct {
						Type       string                       `json:"type"`
						Properties map[string]map[string]string `json:"properties"`
						Required   []string                     `json:"required"`
					} `json:"inputSchema"`
				} `json:"tools"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(list), &l); err != nil || len(l.Result.Tools) != 1 {
			t.Fatalf("tools/list: %s", list)
		}
		s := l.Result.Tools[0].InputSchema
		if l.Result.Tools[0].Name != "add" || s.Type != "object" || s.Properties["a"]["type"] != "number" || s.Properties["b"]["type"] != "number" || strings.Join(s.Required, ",") != "a,b" {
			t.Errorf("tools/list: %s, want add with numbers a and b", list)
		}
		if !strings.Contains(good, `"text":"3"`) || strings.Contains(good, `"isError":true`) {
			t.Errorf("add(1, 2): %s", good)
		}
		// wasmcp checks the arguments against the JSON Schema zod made
		// before the call (zod's own message, for what JSON Schema cannot
		// say, is registry's TestSDKServer).
		if !strings.Contains(bad, `"isError":true`) || !strings.Contains(bad, "Invalid arguments for tool add") || !strings.Contains(bad, "want number") {
			t.Errorf("add(\"x\", 2): %s, want a tool error naming the argument's type", bad)
		}
	}
	t.Run("2025-11-25", func(t *testing.T) {
		s := startServe(t, args...)
		c := e2e.NewStdioClient(t, s, `{}`, nil)
		list := c.Request(t, "tools/list", `{}`, nil)
		good := c.Request(t, "tools/call", `{"name":"add","arguments":{"a":1,"b":2}}`, nil)
		bad := c.Request(t, "tools/call", `{"name":"add","arguments":{"a":"x","b":2}}`, nil)
		check(t, list, good, bad)
	})
	t.Run("2026-07-28", func(t *testing.T) {
		s := startServe(t, args...)
		c := newModernLines(t, s)
		text := func(m map[string]any) string { b, _ := json.Marshal(m); return string(b) }
		list := text(c.call("1", "tools/list", `{}`, ""))
		good := text(c.call("2", "tools/call", `{}`, `"name":"add","arguments":{"a":1,"b":2}`))
		bad := text(c.call("3", "tools/call", `{}`, `"name":"add","arguments":{"a":"x","b":2}`))
		check(t, list, good, bad)
	})
}
