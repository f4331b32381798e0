package tstransform

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// secret is what the files outside the tools directory hold: no bundle
// and no error may ever show it.
const secret = "SECRET-OUTSIDE-THE-TOOLS-DIRECTORY"

// bundleDirs makes outer/tools (the tools directory) and outer/secret.js
// beside it, writes files into tools, and answers the tools directory.
func bundleDirs(t *testing.T, files map[string]string) (tools, outer string) {
	t.Helper()
	outer = t.TempDir()
	tools = filepath.Join(outer, "tools")
	write := func(p, text string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(outer, "secret.js"), `export const s = "`+secret+`";`+"\n")
	write(filepath.Join(outer, "pkg", "index.js"), `export const s = "`+secret+`";`+"\n")
	write(filepath.Join(outer, "tsconfig.json"), `{"compilerOptions": {"paths": {"mapped": ["./secret.js"]}}}`)
	write(filepath.Join(outer, "package.json"), `{"imports": {"#s": "./secret.js"}, "browser": {"./tools/local.js": "./secret.js"}}`)
	for name, text := range files {
		write(filepath.Join(tools, filepath.FromSlash(name)), text)
	}
	return tools, outer
}

func bundleOf(t *testing.T, tools, src string, max int64) (*Bundled, error) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(tools, "app.ts"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return Bundle(context.Background(), "app.ts", []byte(src), BundleOptions{Root: tools, MaxInput: max,
		Aliases: map[string]string{"@modelcontextprotocol/sdk/server/mcp.js": `import * as z from "zod"; export const hasZod = typeof z.object === "function";`}})
}

// TestBundleReadsItsImports: a bundle holds the script, the packages it
// imports from node_modules and the files beside it it imports; it lists
// every file it read with its hash; an alias is served by its source;
// process.env.NODE_ENV is "production" (a script has no process).
func TestBundleReadsItsImports(t *testing.T) {
	tools, _ := bundleDirs(t, map[string]string{
		"node_modules/greet/package.json": `{"name": "greet", "main": "main.js"}`,
		"node_modules/greet/main.js":      `module.exports = { greet: (n) => (process.env.NODE_ENV === "production" ? "hello " : "debug ") + n };`,
		"lib/util.ts":                     `export const twice = (x: number): number => 2 * x;`,
	})
	b, err := bundleOf(t, tools, `import { greet } from "greet";
import { twice } from "./lib/util.ts";
import { hasZod } from "@modelcontextprotocol/sdk/server/mcp.js";
const x: number = twice(21);
await Promise.resolve();
console.log(greet("ada"), x, hasZod);
`, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	code := string(b.Code)
	if strings.Contains(code, "process") {
		t.Errorf("the bundle still asks process for NODE_ENV:\n%s", code)
	}
	for _, want := range []string{`"hello "`, "2 * x", `require("wasmcp").topLevel(`, "await "} {
		if !strings.Contains(code, want) && !strings.Contains(code, strings.ReplaceAll(want, " ", "")) {
			t.Errorf("the bundle lacks %q:\n%s", want, code)
		}
	}
	var paths []string
	for _, in := range b.Inputs {
		paths = append(paths, in.Path)
		if len(in.Sum) != 64 {
			t.Errorf("input %s has sum %q", in.Path, in.Sum)
		}
	}
	if got := strings.Join(paths, " "); got != "app.ts lib/util.ts node_modules/greet/main.js node_modules/greet/package.json" {
		t.Errorf("inputs = %s", got)
	}
}

// TestBundleConfined: an import of a file outside the tools directory —
// by ../, by an absolute path, by a link in node_modules (a package or a
// file), through a tsconfig.json or package.json of a parent directory —
// is refused with an error naming the import, and the file's contents
// reach neither the bundle nor the error.
func TestBundleConfined(t *testing.T) {
	tools, outer := bundleDirs(t, nil)
	if err := os.MkdirAll(filepath.Join(tools, "node_modules", "half"), 0o755); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		filepath.Join(tools, "node_modules", "half", "index.js"): filepath.Join(outer, "secret.js"),
		filepath.Join(tools, "near.js"):                          filepath.Join(outer, "secret.js"),
	}
	for link, target := range links {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	for what, c := range map[string]struct{ imp, want string }{
		"../":              {"../secret.js", "outside the tools directory"},
		"absolute":         {filepath.Join(outer, "secret.js"), "absolute import paths are refused"},
		"linked file":      {"half", "outside the tools directory"},
		"linked neighbour": {"./near.js", "outside the tools directory"},
		"parent tsconfig":  {"mapped", `cannot find "mapped"`},
		"parent imports":   {"#s", "outside the tools directory"},
	} {
		b, err := bundleOf(t, tools, "import { s } from "+quote(c.imp)+";\nconsole.log(s);\n", 1<<20)
		var refused *Error
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: import %q: %v, want a refusal saying %q", what, c.imp, err, c.want)
		}
		if b != nil && strings.Contains(string(b.Code), secret) || err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the outside file's contents reached the bundle or its error", what)
		}
	}
	// A package linked to a directory outside is refused before esbuild
	// reads its package.json, whatever is imported.
	if err := os.Symlink(filepath.Join(outer, "pkg"), filepath.Join(tools, "node_modules", "evil")); err != nil {
		t.Fatal(err)
	}
	for _, imp := range []string{"evil", "./local.js"} {
		b, err := bundleOf(t, tools, "import { s } from "+quote(imp)+";\nconsole.log(s);\n", 1<<20)
		var refused *Error
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), "node_modules/evil: it is outside the tools directory") {
			t.Errorf("linked package, import %q: %v, want a refusal naming node_modules/evil", imp, err)
		}
		if b != nil {
			t.Errorf("linked package, import %q: a bundle", imp)
		}
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }

// TestBundleRefusesNodeBuiltins: Node's built-ins are refused at load
// with a message that says a script has none; a package of the same name
// in node_modules (a polyfill) is used.
func TestBundleRefusesNodeBuiltins(t *testing.T) {
	tools, _ := bundleDirs(t, map[string]string{"node_modules/events/index.js": `module.exports = { polyfill: true };`})
	for _, imp := range []string{"node:fs", "fs", "child_process", "node:events"} {
		_, err := bundleOf(t, tools, "import * as m from "+quote(imp)+";\nconsole.log(m);\n", 1<<20)
		if err == nil || !strings.Contains(err.Error(), "is a Node built-in") {
			t.Errorf("import %q: %v, want it refused as a Node built-in", imp, err)
		}
	}
	if _, err := bundleOf(t, tools, "import * as m from \"events\";\nconsole.log(m);\n", 1<<20); err != nil {
		t.Errorf("the events polyfill in node_modules: %v", err)
	}
}

// TestBundleBoundsItsInput: the files a bundle reads are bounded, added
// up: past the bound the bundle is refused, saying so.
func TestBundleBoundsItsInput(t *testing.T) {
	tools, _ := bundleDirs(t, map[string]string{
		"node_modules/a/index.js": "export const a = \"" + strings.Repeat("a", 3000) + "\";\n",
		"node_modules/b/index.js": "export const b = \"" + strings.Repeat("b", 3000) + "\";\n",
	})
	src := "import { a } from \"a\";\nimport { b } from \"b\";\nconsole.log(a, b);\n"
	if _, err := bundleOf(t, tools, src, 8000); err != nil {
		t.Fatalf("within the bound: %v", err)
	}
	_, err := bundleOf(t, tools, src, 5000)
	if err == nil || !strings.Contains(err.Error(), "more than the bytes a bundle may read") {
		t.Fatalf("past the bound: %v, want it refused", err)
	}
}
