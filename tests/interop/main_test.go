package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
	"github.com/wasmcp/wasmcp/internal/testkit/e2e"
)

// Built once per test binary by TestMain.
var (
	// wasmcpBin is the wasmcp command under test (built with -race when the
	// tests run with -race).
	wasmcpBin string
	// toolsDir holds exampleModules, built for wasip1.
	toolsDir string
	// cacheDir is the compilation cache every server started here shares;
	// TestMain fills it so servers start without compiling.
	cacheDir string
	// repoRoot is the root of the wasmcp module.
	repoRoot string
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "interop:", err)
		return 1
	}
	root, err := guestbuild.FindModuleRoot()
	if err != nil {
		return fail(err)
	}
	repoRoot = root
	dir, err := os.MkdirTemp("", "wasmcp-interop-")
	if err != nil {
		return fail(err)
	}
	defer os.RemoveAll(dir)
	toolsDir = filepath.Join(dir, "tools")
	cacheDir = filepath.Join(dir, "cache")

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if wasmcpBin, err = e2e.BuildWasmcp(ctx, dir, raceEnabled); err != nil {
		return fail(err)
	}
	for _, name := range exampleModules {
		if err := guestbuild.Build(ctx, filepath.Join(root, "examples", "wasm", name), filepath.Join(toolsDir, name+".wasm")); err != nil {
			return fail(fmt.Errorf("building the example guests: %w", err))
		}
	}
	// Fill the compilation cache: serve on stdio with stdin at EOF loads
	// (and compiles) every module, then returns. wazero's compiler built
	// with -race takes minutes for the examples; the cache it reads is the
	// same either way, so a plain build fills it.
	warmBin := wasmcpBin
	if raceEnabled {
		if warmBin, err = e2e.BuildWasmcp(ctx, dir, false); err != nil {
			return fail(err)
		}
	}
	warm := exec.CommandContext(ctx, warmBin, serveArgs("--log-level", "warn")...)
	if out, err := warm.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("warming the compilation cache: %v\n%s", err, out))
	}
	return m.Run()
}

// serveArgs is the argument list of `wasmcp serve` on the example tools,
// followed by extra.
func serveArgs(extra ...string) []string {
	return append([]string{"serve", "--tools", toolsDir, "--cache-dir", cacheDir, "--watch=false"}, extra...)
}

// checkServerLog fails t when the server's stderr shows a data race or a
// panic, and shows the log when t failed.
func checkServerLog(t *testing.T, name string, log *e2e.LockedBuffer) {
	t.Helper()
	s := log.String()
	if strings.Contains(s, "WARNING: DATA RACE") || strings.Contains(s, "panic:") {
		t.Errorf("%s reported a data race or a panic", name)
	}
	if t.Failed() && s != "" {
		t.Logf("%s stderr:\n%s", name, s)
	}
}

// startHTTP starts `wasmcp serve --http` with extra flags on a free
// loopback port and returns its base URL (http://127.0.0.1:PORT; the MCP
// endpoint is /mcp) once it accepts connections. The server is stopped
// (SIGINT, then SIGKILL) when the test ends.
func startHTTP(t *testing.T, extra ...string) string {
	t.Helper()
	for attempt := 0; ; attempt++ {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(freePort(t)))
		log := &e2e.LockedBuffer{}
		cmd := exec.Command(wasmcpBin, serveArgs(append([]string{"--http", addr}, extra...)...)...)
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting wasmcp: %v", err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		err := waitListening(addr, exited, 60*time.Second)
		if err == nil {
			t.Cleanup(func() {
				stopProcess(t, cmd, exited)
				checkServerLog(t, "wasmcp serve --http", log)
			})
			return "http://" + addr
		}
		if !errors.Is(err, errExited) {
			_ = cmd.Process.Kill()
			<-exited
			t.Fatalf("wasmcp serve --http %s: %v\n%s", addr, err, log.String())
		}
		out := log.String()
		switch {
		case strings.Contains(out, "address already in use") && attempt < 3:
			continue // the free port was taken in between; pick another
		}
		t.Fatalf("wasmcp serve --http %s exited before listening:\n%s", addr, out)
	}
}

var errExited = errors.New("the process exited")

// waitListening polls addr until it accepts a TCP connection, the process
// exits (errExited) or the deadline passes.
func waitListening(addr string, exited <-chan error, within time.Duration) error {
	deadline := time.Now().Add(within)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening after %v: %w", within, err)
		}
		select {
		case <-exited:
			return errExited
		case <-tick.C:
		}
	}
}

// stopProcess interrupts cmd and waits for it, killing it if it does not
// exit in time.
func stopProcess(t *testing.T, cmd *exec.Cmd, exited <-chan error) {
	t.Helper()
	if err := cmd.Process.Signal(os.Interrupt); err != nil { // no SIGINT on this system
		_ = cmd.Process.Kill()
	}
	select {
	case <-exited:
	case <-time.After(15 * time.Second):
		t.Errorf("wasmcp did not exit within 15s of SIGINT; killing it")
		_ = cmd.Process.Kill()
		<-exited
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// The scenario every client runs, and what the example tools must answer.
const (
	statsText   = "The cat sat. The cat ran!\nThe end?"
	statsTop    = 2
	planText    = "Rewrite the parser in Zig."
	hashInput   = "abc"
	hashSHA256  = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	progressLen = 5 // text_stats reports 0/4 … 4/4
)

// exampleModules are the examples/wasm modules the server serves.
var exampleModules = []string{"codec", "guide", "jsonquery", "textstats"}

// wantTools are the tools of exampleModules, sorted; every client must see
// them listed.
var wantTools = []string{"client_roots", "confirm_plan", "hash", "json_query", "text_stats", "transcode"}

// checkToolNames checks a tools/list outcome: the tools of wantTools, each
// once, in any order.
func checkToolNames(t *testing.T, names []string) {
	t.Helper()
	got := slices.Sorted(slices.Values(names))
	if !slices.Equal(got, wantTools) {
		t.Errorf("tools listed: %v, want %v", names, wantTools)
	}
}

// checkStats checks text_stats' structured result for statsText, statsTop.
func checkStats(t *testing.T, structured []byte) {
	t.Helper()
	var got struct {
		Characters, Words, Lines, Sentences int
		AverageWordLength                   float64
		TopWords                            []struct {
			Word  string
			Count int
		}
	}
	if err := json.Unmarshal(structured, &got); err != nil {
		t.Fatalf("text_stats structuredContent %s: %v", structured, err)
	}
	if got.Characters != 34 || got.Words != 8 || got.Lines != 2 || got.Sentences != 3 || got.AverageWordLength != 3 {
		t.Errorf("text_stats counts = %+v, want 34 characters, 8 words, 2 lines, 3 sentences, average 3", got)
	}
	if len(got.TopWords) != statsTop || got.TopWords[0].Word != "the" || got.TopWords[0].Count != 3 ||
		got.TopWords[1].Word != "cat" || got.TopWords[1].Count != 2 {
		t.Errorf("text_stats topWords = %+v, want [the×3 cat×2]", got.TopWords)
	}
}

// progressNote is one progress notification as a client saw it.
type progressNote struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total"`
	Message  string  `json:"message"`
}

// checkProgress checks text_stats' progress: 0/4 … 4/4, increasing, each
// with a message.
func checkProgress(t *testing.T, got []progressNote) {
	t.Helper()
	if len(got) != progressLen {
		t.Fatalf("got %d progress notifications %+v, want %d", len(got), got, progressLen)
	}
	for i, p := range got {
		if p.Progress != float64(i) || p.Total != progressLen-1 || p.Message == "" {
			t.Errorf("progress notification %d = %+v, want progress %d of %d with a message", i, p, i, progressLen-1)
		}
	}
}

// checkHash checks hash's structured result for sha256 of hashInput.
func checkHash(t *testing.T, structured []byte) {
	t.Helper()
	var got struct{ Algorithm, Encoding, Digest string }
	if err := json.Unmarshal(structured, &got); err != nil {
		t.Fatalf("hash structuredContent %s: %v", structured, err)
	}
	if got.Algorithm != "sha256" || got.Encoding != "hex" || got.Digest != hashSHA256 {
		t.Errorf("hash = %+v, want sha256 hex %s", got, hashSHA256)
	}
}

// checkElicitRequest checks the elicitation confirm_plan sent: the plan in
// the message and a form schema with the approve field.
func checkElicitRequest(t *testing.T, message string, schema any) {
	t.Helper()
	if !strings.Contains(message, planText) {
		t.Errorf("elicitation message %q does not show the plan %q", message, planText)
	}
	b, _ := json.Marshal(schema)
	var s struct {
		Type       string
		Properties map[string]struct{ Type string }
		Required   []string
	}
	if err := json.Unmarshal(b, &s); err != nil || s.Type != "object" || s.Properties["approve"].Type != "boolean" {
		t.Errorf("elicitation requestedSchema = %s, want an object with a boolean approve", b)
	}
}

// wantPlanAnswer is confirm_plan's text when the user accepted with
// approve=true and comment.
func wantPlanAnswer(comment string) string {
	return fmt.Sprintf("accepted: approve=true comment=%q", comment)
}
