package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

var probe string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wasmcp-cli-test")
	if err != nil {
		panic(err)
	}
	probe = filepath.Join(dir, "probe.wasm")
	if err := guestbuild.Build(context.Background(), "../../host/testdata/guests/probe", probe); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var cache = filepath.Join(os.TempDir(), "wasmcp-test-cache")

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

func TestInspect(t *testing.T) {
	code, out, errs := runCLI("inspect", "--cache-dir", cache, probe)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var v struct {
		Module      string         `json:"module"`
		Shape       string         `json:"shape"`
		Policy      map[string]any `json:"policy"`
		Description struct {
			ABIVersion int              `json:"abiVersion"`
			Tools      []map[string]any `json:"tools"`
		} `json:"description"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	if v.Module != "probe" || v.Shape != "command" || v.Description.ABIVersion != 1 || len(v.Description.Tools) == 0 || v.Policy["memory"] != "256MiB" {
		t.Fatalf("inspect: %s", out)
	}
}

func TestCall(t *testing.T) {
	code, out, errs := runCLI("call", "--cache-dir", cache, probe, "count", "{}")
	if code != 0 || !strings.Contains(out, `"text": "1"`) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	code, out, _ = runCLI("call", "--cache-dir", cache, "--timeout", "1s", probe, "loop", "{}")
	if code != 1 || strings.Contains(out, "text") {
		t.Fatalf("loop: exit %d, %s", code, out)
	}
	if code, _, errs := runCLI("call", "--cache-dir", cache, probe, "nope"); code != 1 || !strings.Contains(errs, `has no tool "nope"`) {
		t.Fatalf("unknown tool: %d %s", code, errs)
	}
	if code, _, errs := runCLI("call", "--cache-dir", cache, probe, "sleep", `{"n":"x"}`); code != 1 || !strings.Contains(errs, "invalid arguments") {
		t.Fatalf("bad args: %d %s", code, errs)
	}
	if code, _, errs := runCLI("call", "--cache-dir", cache, probe, "count", `{`); code != 1 || !strings.Contains(errs, "not valid JSON") {
		t.Fatalf("bad JSON: %d %s", code, errs)
	}
}

func TestUsage(t *testing.T) {
	if code, _, errs := runCLI(); code != 2 || !strings.Contains(errs, "wasmcp serve --tools DIR") {
		t.Fatalf("no args: %d %s", code, errs)
	}
	if code, out, _ := runCLI("--help"); code != 0 || !strings.Contains(out, "Usage:") {
		t.Fatalf("--help: %d %s", code, out)
	}
	// Help asked for goes to stdout, with the flags spelled as the
	// README spells them.
	for _, cmd := range []string{"serve", "inspect", "call", "check"} {
		code, out, errs := runCLI(cmd, "--help")
		if code != 0 || !strings.Contains(out, "Usage: wasmcp "+cmd) || errs != "" ||
			!strings.Contains(out, "\n  --timeout") || strings.Contains(out, "\n  -timeout") {
			t.Errorf("%s --help: %d %s (stderr %s)", cmd, code, out, errs)
		}
	}
	if code, _, errs := runCLI("serve"); code != 2 || !strings.Contains(errs, "Usage: wasmcp serve") ||
		!strings.HasPrefix(errs, "wasmcp serve: --tools is required") {
		t.Fatalf("serve without --tools: %d %s", code, errs)
	}
	tools := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--tools", "/nonexistent-dir"}, "--tools /nonexistent-dir: does not exist"},
		{[]string{"serve", "--tools", tools, "--http-mode", "simple"}, "--http-mode needs --http ADDR"},
		{[]string{"serve", "--tools", tools, "--legacy-sse"}, "--legacy-sse needs --http ADDR"},
		{[]string{"serve", "--tools", tools, "--memory", "64MiB", "--max-output", "1MiB", "--http", "256.0.0.1:1"}, "--http"},
	} {
		if code, _, errs := runCLI(c.args...); code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: %d %s", c.args, code, errs)
		}
	}
	// A port in use is reported before any module loads.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	deployed := t.TempDir()
	_ = os.WriteFile(filepath.Join(deployed, "broken.wasm"), []byte("not wasm"), 0o644)
	if code, _, errs := runCLI("serve", "--tools", deployed, "--http", ln.Addr().String(), "--data-dir", "-", "--cache-dir", "-"); code != 1 ||
		!strings.Contains(errs, "address already in use") || strings.Contains(errs, "broken") {
		t.Errorf("port in use: %d %s", code, errs)
	}
	if code, _, _ := runCLI("frobnicate"); code != 2 {
		t.Fatalf("unknown command: %d", code)
	}
}

func TestSizeFlags(t *testing.T) {
	for in, want := range map[string]uint64{"64": 64 << 20, "64MiB": 64 << 20, "512KiB": 512 << 10, "1GiB": 1 << 30, "1048576B": 1 << 20} {
		var m mibSize
		if err := m.Set(in); err != nil || uint64(m) != want {
			t.Errorf("%s: %d %v, want %d", in, m, err, want)
		}
	}
	var m mibSize
	if m.Set("64 furlongs") == nil || m.Set("-1") == nil {
		t.Error("a bad size was accepted")
	}
	if v := buildVersion(); v == "" {
		t.Error("empty version")
	}
}
