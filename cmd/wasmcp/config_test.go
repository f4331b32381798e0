package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "wasmcp.toml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// line is the printed line of key.
func line(t *testing.T, out, key string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, key+" = ") {
			return l
		}
	}
	t.Fatalf("no %s in\n%s", key, out)
	return ""
}

func TestConfigPrecedence(t *testing.T) {
	cfg := writeConfig(t, `
# a comment
http = "127.0.0.1:9000"
max_body = "2MiB"
sse-replay = 64
watch = false
allowed-origins = ["https://a.example", "https://b.example"]
timeout = "3s"
`)
	t.Setenv("WASMCP_SSE_REPLAY", "32")
	t.Setenv("WASMCP_TIMEOUT", "4s")
	code, out, errs := runCLI("serve", "--config", cfg, "--timeout", "5s", "--print-config")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	for key, want := range map[string]string{
		"http":            `http = "127.0.0.1:9000" # file`,
		"max-body":        `max-body = "2MiB" # file`,
		"sse-replay":      `sse-replay = 32 # env`,
		"timeout":         `timeout = "5s" # flag`,
		"watch":           `watch = false # file`,
		"allowed-origins": `allowed-origins = "https://a.example,https://b.example" # file`,
		"workers":         `workers = 16 # default`,
	} {
		if got := line(t, out, key); got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
	// The printed configuration is itself a valid config file giving the
	// same configuration: every flag is a key.
	again := writeConfig(t, out)
	t.Setenv("WASMCP_SSE_REPLAY", "")
	os.Unsetenv("WASMCP_SSE_REPLAY")
	os.Unsetenv("WASMCP_TIMEOUT")
	code, out2, errs := runCLI("serve", "--config", again, "--print-config")
	if code != 0 {
		t.Fatalf("printed config refused: %s\n%s", errs, out)
	}
	strip := func(s string) string {
		var b strings.Builder
		for _, l := range strings.Split(s, "\n") {
			if i := strings.LastIndex(l, " # "); i > 0 {
				l = l[:i]
			}
			b.WriteString(l + "\n")
		}
		return b.String()
	}
	if strip(out) != strip(out2) {
		t.Fatalf("round trip differs:\n%s\n---\n%s", out, out2)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"http = \"127.0.0.1:1\"\n\nmax-bdy = \"1MiB\"\n", `wasmcp.toml:3: unknown key "max-bdy"`},
		{"workers = \"many\"\n", `wasmcp.toml:1: key workers = "many": parse error`},
		{"[http]\nx = 1\n", `wasmcp.toml:1: key http: tables are not settings`},
		{"max-body = \"4MiB\"\nmax_body = \"2MiB\"\n", `set twice`},
		{"config = \"other.toml\"\n", `unknown key "config"`},
		{"http = [1, 2]\n", `want an array of strings`},
		{"http = \n", `wasmcp.toml:1:`},
	} {
		code, _, errs := runCLI("serve", "--config", writeConfig(t, c.file), "--print-config")
		if code == 0 || !strings.Contains(errs, c.want) {
			t.Errorf("%q: exit %d, %s; want %s", c.file, code, errs, c.want)
		}
	}
	t.Setenv("WASMCP_MAX_BODY", "lots")
	if code, _, errs := runCLI("serve", "--print-config"); code == 0 || !strings.Contains(errs, "WASMCP_MAX_BODY") {
		t.Errorf("bad environment value: exit %d, %s", code, errs)
	}
}
