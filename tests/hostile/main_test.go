package hostile

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
	"github.com/wasmcp/wasmcp/internal/testkit/e2e"
)

// The battery's shared fixtures, built once by TestMain.
var (
	// wasmcpBin is the wasmcp command, built without -race (the race
	// detector slows wazero's compiler several times over; the host's own
	// packages run under -race).
	wasmcpBin string
	// toolsDir holds the guests and their policy files (see writeTools).
	toolsDir string
	// rawToolsDir holds good and the rawout guests (see writeRawTools),
	// apart so the battery's servers do not load them.
	rawToolsDir string
	// cacheDir is the compilation cache every server of the run shares.
	cacheDir string
	// outsideDir is a directory no guest is granted; the escape case
	// checks nothing appears in it.
	outsideDir string
	// netBase is the loopback HTTP server the hostilego policy grants
	// (http://127.0.0.1:PORT), the only destination the net_escape case
	// may reach; netPort is its port.
	netBase, netPort string
)

// netSecret is the header value the hostilego policy adds for netBase; it
// must never reach the guest.
const netSecret = "hostile-secret-value"

// hostEnv is the host variable the hostilego policy passes on as
// FROM_HOST; secretEnv is one no policy grants.
const (
	hostEnv   = "HOSTILE_FROM"
	secretEnv = "HOSTILE_SECRET_NOT_GRANTED"
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "wasmcp-hostile-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	if wasmcpBin, err = e2e.BuildWasmcp(context.Background(), dir, false); err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		return 1
	}
	srv := netServer()
	defer srv.Close()
	netBase = srv.URL
	netPort = strings.TrimPrefix(srv.URL, "http://127.0.0.1:")
	toolsDir = filepath.Join(dir, "tools")
	outsideDir = filepath.Join(dir, "outside")
	cacheDir = filepath.Join(os.TempDir(), "wasmcp-test-cache")
	if err := writeTools(toolsDir, outsideDir, hostileTimeout); err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		return 1
	}
	rawToolsDir = filepath.Join(dir, "rawtools")
	if err := writeRawTools(rawToolsDir, toolsDir); err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		return 1
	}
	return m.Run()
}

// writeTools fills dir with the battery's modules and policies:
//
//	hostile.wasm    the WAT guest whose tools misbehave (guests/hostile.wat)
//	gated.wasm      a WAT guest whose one tool never answers, served under
//	                max_instances = 1, max_queue = 1 (guests/gated.wat)
//	unstoppable.wasm an invalid module whose loop writes a global it does
//	                not define (guests/unstoppable.wat); it must be refused
//	hostilego.wasm  the Go guest (built now from guests/hostilego)
//	good.wasm       the well-behaved Go guest (guests/good)
//
// Hostile modules get small limits (32 MiB, timeout, 1 MiB output, 256 KiB
// lines); good gets the server's defaults. hostilego is granted /data
// (read-only: a file and two symbolic links leading out of it) and

// hostileTimeout is the hostile modules' deadline: long enough that the
// cases that end on their own (a stack overflow, memory refused) do so
// before it on a loaded two-core machine, short enough that the cases
// that end only at the deadline keep the battery quick.
const hostileTimeout = "5s"

// /scratch (read-write), and two environment variables.
func writeTools(dir, outside, timeout string) error {
	for _, d := range []string{dir, outside, filepath.Join(dir, "data"), filepath.Join(dir, "scratch")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	for _, name := range []string{"hostile.wasm", "gated.wasm", "unstoppable.wasm"} {
		wasm, err := os.ReadFile(filepath.Join("guests", name))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), wasm, 0o644); err != nil {
			return err
		}
	}
	ctx := context.Background()
	for _, g := range []string{"hostilego", "good"} {
		if err := guestbuild.Build(ctx, filepath.Join("guests", g), filepath.Join(dir, g+".wasm")); err != nil {
			return err
		}
	}
	limits := `memory = "32MiB"
timeout = "` + timeout + `"
max_output = "1MiB"
max_line = "256KiB"
`
	files := map[string]string{
		"hostile.policy.toml": limits,
		"gated.policy.toml":   "memory = \"1MiB\"\ntimeout = \"1s\"\nmax_instances = 1\nmax_queue = 1\nstderr = \"discard\"\n",
		"hostilego.policy.toml": limits + `
[[mount]]
host = "data"
guest = "/data"

[[mount]]
host = "scratch"
guest = "/scratch"
mode = "rw"

[env]
GRANTED = "yes"
FROM_HOST = { from = "` + hostEnv + `" }

[http]
max_requests = 10

[[http.allow]]
scheme = "http"
host = "127.0.0.1"
port = ` + netPort + `
headers = { X-Token = "` + netSecret + `" }
`,
		"data/hello.txt": "hello\n",
		"outside/secret": "secret\n",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if name == "outside/secret" {
			p = filepath.Join(outside, "secret")
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return err
		}
	}
	// Links an operator might leave in a mount, one absolute, one relative.
	if err := os.Symlink(outside, filepath.Join(dir, "data", "abs_link")); err != nil {
		return err
	}
	rel, err := filepath.Rel(filepath.Join(dir, "data"), outside)
	if err != nil {
		return err
	}
	return os.Symlink(rel, filepath.Join(dir, "data", "rel_link"))
}

// netServer is the one destination the hostilego policy grants: "/" answers
// "fine", "/echo" echoes the X-Token header and "/out" redirects to a port the policy
// does not grant.
func netServer() *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo":
			fmt.Fprintf(w, "token=%s", r.Header.Get("X-Token"))
		case "/out":
			http.Redirect(w, r, "http://127.0.0.1:1/", http.StatusFound)
		default:
			fmt.Fprint(w, "fine")
		}
	}))
}

// writeRawTools fills dir with good.wasm (copied from goodDir) and the
// guests of what a guest writes:
//
//	rawout.wasm  a Go guest writing raw bytes (guests/rawout): bad bytes,
//	             bad shapes, forged members, reserved error codes
//	costly.wasm  rawout declaring an exponentially branching schema
//	             (MODE=costly); it must be refused at load
//	texts.wasm   rawout declaring prompts and resources with terminal
//	             escapes, CR/LF, NUL and 70 KiB texts (MODE=texts)
//
// rawout's calls answer at once; their generous deadline keeps a loaded
// machine from turning them into timeouts.
func writeRawTools(dir, goodDir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	good, err := os.ReadFile(filepath.Join(goodDir, "good.wasm"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "good.wasm"), good, 0o644); err != nil {
		return err
	}
	built := filepath.Join(dir, "rawout.build")
	if err := guestbuild.Build(context.Background(), filepath.Join("guests", "rawout"), built); err != nil {
		return err
	}
	raw, err := os.ReadFile(built)
	if err != nil {
		return err
	}
	if err := os.Remove(built); err != nil {
		return err
	}
	limits := "memory = \"32MiB\"\ntimeout = \"20s\"\nmax_output = \"1MiB\"\nmax_line = \"256KiB\"\n"
	for name, policy := range map[string]string{
		"rawout": limits,
		"costly": limits + "\n[env]\nMODE = \"costly\"\n",
		"texts":  limits + "\n[env]\nMODE = \"texts\"\n",
	} {
		// A custom section of its own makes each copy a module of its
		// own for the description cache (keyed by the module's digest).
		if err := os.WriteFile(filepath.Join(dir, name+".wasm"), withCustomSection(raw, name+".wasm"), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name+".policy.toml"), []byte(policy), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// withCustomSection returns wasm with a custom section named name (with
// a one-byte payload: wazero refuses an empty one at the end of a module)
// appended.
func withCustomSection(wasm []byte, name string) []byte {
	body := append(uleb(nil, uint64(len(name))), name...)
	body = append(body, 1)
	out := append([]byte(nil), wasm...)
	out = append(out, 0) // custom section id
	out = uleb(out, uint64(len(body)))
	return append(out, body...)
}

func uleb(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
