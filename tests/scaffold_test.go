package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

// TestScaffoldsPassCheck writes a tool in each language with `wasmcp new`,
// builds it with the build line it wrote, and runs `wasmcp check` on it: what
// a newcomer gets from `wasmcp new` keeps the guest ABI as written. A
// language whose toolchain is missing is skipped, except in CI.
func TestScaffoldsPassCheck(t *testing.T) {
	root, err := guestbuild.FindModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	toolchain := map[string]func() string{ // what is missing, "" when nothing
		"c": func() string {
			if _, err := exec.LookPath("clang-14"); err != nil {
				return "clang-14"
			}
			return ""
		},
		"rust": func() string {
			// Debian's Rust, as .ci/run installs it: no crates.io here.
			for _, p := range []string{"/usr/bin/cargo", "/usr/lib/rustlib/wasm32-wasi", "/usr/share/cargo/registry"} {
				if _, err := os.Stat(p); err != nil {
					return "Debian's Rust (" + p + ")"
				}
			}
			return ""
		},
	}
	for _, lang := range []string{"typescript", "javascript", "go", "c", "rust"} {
		t.Run(lang, func(t *testing.T) {
			if missing := toolchain[lang]; missing != nil {
				if m := missing(); m != "" {
					if os.Getenv("CI") != "" {
						t.Fatalf("toolchain missing in CI: %s", m)
					}
					t.Skipf("toolchain missing: %s", m)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			dir := filepath.Join(t.TempDir(), "tool")
			name := "hello_" + lang
			out, err := exec.CommandContext(ctx, wasmcpBin, "new", lang, name, "-o", dir, "--sdk", root).CombinedOutput()
			if err != nil {
				t.Fatalf("wasmcp new %s: %v\n%s", lang, err, out)
			}
			if !strings.Contains(string(out), "next:") {
				t.Errorf("wasmcp new printed no next step:\n%s", out)
			}
			target := filepath.Join(dir, name+".wasm")
			switch lang {
			case "typescript":
				target = filepath.Join(dir, name+".ts")
			case "javascript":
				target = filepath.Join(dir, name+".js")
			default:
				build := exec.CommandContext(ctx, "sh", filepath.Join(dir, "build.sh"))
				build.Dir = dir
				if out, err := build.CombinedOutput(); err != nil {
					t.Fatalf("%s build.sh: %v\n%s", lang, err, out)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, name+".policy.toml")); err != nil {
				t.Errorf("no policy stub: %v", err)
			}
			out, err = exec.CommandContext(ctx, wasmcpBin, "check", "--cache-dir", compileCache, target).CombinedOutput()
			if err != nil || !strings.Contains(string(out), "passed:") || strings.Contains(string(out), "FAIL") {
				t.Fatalf("wasmcp check %s: %v\n%s", target, err, out)
			}
			// The policy stub is a policy the server accepts: serve the
			// directory and call the tool.
			s := startServe(t, "--tools", dir, "--cache-dir", compileCache, "--watch=false")
			c := newStdioClient(t, s)
			res := c.request("tools/call", `{"name":"`+name+`","arguments":{"text":"hi"}}`, nil)
			if !strings.Contains(res, `hi (2 `) {
				t.Fatalf("tools/call %s: %s", name, res)
			}
		})
	}
}
