package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/testkit/e2e"
	"github.com/wasmcp/wasmcp/internal/testkit/npmtest"
)

// officialSDKServer is a TypeScript MCP server written for the official
// SDK, unchanged: wasmcp bundles it with the zod in node_modules beside
// it and serves its McpServer calls with its own (docs/typescript.md).
const officialSDKServer = `import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";
const server = new McpServer({ name: "demo", version: "1.0.0" });
server.registerTool("add", { title: "Add", description: "Add two numbers",
  inputSchema: { a: z.number(), b: z.number() } },
  async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
await server.connect(new StdioServerTransport());
`

// TestOfficialSDKServer: wasmcp serve --tools DIR, DIR holding a server
// written for the official SDK and node_modules with zod: tools/list
// shows the zod shape as JSON Schema, tools/call adds, and a bad argument
// is a tool error — in a 2025-11-25 session and in 2026-07-28 requests.
func TestOfficialSDKServer(t *testing.T) {
	dir := t.TempDir()
	npmtest.CopyInto(t, npmtest.Modules(t, "zod@4.6.7"), dir)
	if err := os.WriteFile(filepath.Join(dir, "demo.ts"), []byte(officialSDKServer), 0o644); err != nil {
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
