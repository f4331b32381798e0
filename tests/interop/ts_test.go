package interop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testkit/e2e"
)

// The TypeScript SDK client runs as `node ts/client.mjs`, which prints a
// report of what it saw; these tests check the report.

// tsReport is what ts/client.mjs prints.
type tsReport struct {
	ServerInfo      struct{ Name, Version string } `json:"serverInfo"`
	Capabilities    map[string]json.RawMessage     `json:"capabilities"`
	SessionID       *string                        `json:"sessionId"`
	ProtocolVersion *string                        `json:"protocolVersion"`
	Tools           []struct {
		Name            string `json:"name"`
		HasOutputSchema bool   `json:"hasOutputSchema"`
	} `json:"tools"`
	TextStats struct {
		Result tsCallResult `json:"result"`
		// Progress is what the SDK's onprogress callback got; WireProgress
		// the notifications for ProgressToken as they arrived.
		Progress      []progressNote  `json:"progress"`
		ProgressToken json.RawMessage `json:"progressToken"`
		WireProgress  []progressNote  `json:"wireProgress"`
	} `json:"textStats"`
	Hash        tsCallResult `json:"hash"`
	ConfirmPlan struct {
		Result       tsCallResult `json:"result"`
		Elicitations []struct {
			Message         string         `json:"message"`
			RequestedSchema map[string]any `json:"requestedSchema"`
		} `json:"elicitations"`
	} `json:"confirmPlan"`
	Terminated bool `json:"terminated"`
}

type tsCallResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
}

// tsComment is the comment the TypeScript client's elicitation answer
// carries.
const tsComment = "ship it from TypeScript"

func TestTypeScriptSDKStdio(t *testing.T) {
	t.Parallel()
	rep := runTSClient(t, append([]string{"stdio", wasmcpBin}, serveArgs()...)...)
	checkTSReport(t, rep)
}

func TestTypeScriptSDKStreamableHTTP(t *testing.T) {
	t.Parallel()
	rep := runTSClient(t, "http", startHTTP(t)+"/mcp")
	checkTSReport(t, rep)
	// The 2025-11-25 HTTP transport: initialize minted a session (visible
	// ASCII), the negotiated version is the SDK's latest, and the client
	// ended the session with DELETE.
	if rep.SessionID == nil || !regexp.MustCompile(`^[\x21-\x7E]+$`).MatchString(*rep.SessionID) {
		t.Errorf("session id = %v, want visible ASCII", rep.SessionID)
	}
	if rep.ProtocolVersion == nil || *rep.ProtocolVersion != "2025-11-25" {
		t.Errorf("negotiated protocol version = %v, want 2025-11-25", rep.ProtocolVersion)
	}
	if !rep.Terminated {
		t.Errorf("the client did not terminate its session")
	}
}

// The 2024-11-05 HTTP+SSE transport (wasmcp serve --legacy-sse).
func TestTypeScriptSDKLegacySSE(t *testing.T) {
	t.Parallel()
	rep := runTSClient(t, "sse", startHTTP(t, "--legacy-sse")+"/sse")
	checkTSReport(t, rep)
}

func checkTSReport(t *testing.T, rep *tsReport) {
	t.Helper()
	if rep.ServerInfo.Name != "wasmcp" {
		t.Errorf("serverInfo = %+v, want name wasmcp", rep.ServerInfo)
	}
	if _, ok := rep.Capabilities["tools"]; !ok {
		t.Errorf("capabilities %v lack tools", rep.Capabilities)
	}
	var names []string
	for _, tl := range rep.Tools {
		names = append(names, tl.Name)
		if tl.Name == "text_stats" && !tl.HasOutputSchema {
			t.Errorf("text_stats listed without its outputSchema")
		}
	}
	checkToolNames(t, names)

	if rep.TextStats.Result.IsError {
		t.Fatalf("text_stats failed: %+v", rep.TextStats.Result.Content)
	}
	checkStats(t, rep.TextStats.Result.StructuredContent)
	// The server must send every notification before the response. The SDK
	// (1.32.x) may drop those that arrive in the same read as the response
	// (typescript-sdk#2580), so what its callback got must be a prefix of
	// what arrived, not all of it.
	if tok := string(rep.TextStats.ProgressToken); tok == "" || tok == "null" {
		t.Errorf("the client sent text_stats without a progress token")
	}
	checkProgress(t, rep.TextStats.WireProgress)
	got := rep.TextStats.Progress
	if len(got) > len(rep.TextStats.WireProgress) || !slices.Equal(got, rep.TextStats.WireProgress[:len(got)]) {
		t.Errorf("the SDK's progress callback got %+v, not a prefix of the notifications on the wire %+v", got, rep.TextStats.WireProgress)
	} else if len(got) < progressLen {
		t.Logf("the SDK's progress callback got %d of %d notifications (typescript-sdk#2580)", len(got), progressLen)
	}

	if rep.Hash.IsError {
		t.Fatalf("hash failed: %+v", rep.Hash.Content)
	}
	checkHash(t, rep.Hash.StructuredContent)

	if n := len(rep.ConfirmPlan.Elicitations); n != 1 {
		t.Fatalf("the client answered %d elicitations, want 1", n)
	}
	e := rep.ConfirmPlan.Elicitations[0]
	checkElicitRequest(t, e.Message, e.RequestedSchema)
	res := rep.ConfirmPlan.Result
	if res.IsError || len(res.Content) != 1 || res.Content[0].Text != wantPlanAnswer(tsComment) {
		t.Errorf("confirm_plan result = %+v, want the text %q", res, wantPlanAnswer(tsComment))
	}
}

// runTSClient runs ts/client.mjs with args and returns its report.
func runTSClient(t *testing.T, args ...string) *tsReport {
	t.Helper()
	node, script := tsClient(t)
	scenario, _ := json.Marshal(map[string]any{
		"statsText": statsText, "statsTop": statsTop, "planText": planText,
		"hashInput": hashInput, "comment": tsComment,
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "INTEROP_SCENARIO="+string(scenario))
	var stdout bytes.Buffer
	stderr := &e2e.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	// Over stdio the server's stderr reaches ours through node's.
	defer checkServerLog(t, "node client.mjs (and wasmcp on stdio)", stderr)
	if err := cmd.Run(); err != nil {
		t.Fatalf("node client.mjs %s: %v", strings.Join(args[:1], " "), err)
	}
	var rep tsReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("client.mjs printed %q: %v", stdout.String(), err)
	}
	return &rep
}

var (
	tsOnce          sync.Once
	tsNode, tsDir   string
	tsSkip, tsError string
)

// tsClient returns the node command and the client script, installing the
// npm project in ts/ (npm ci) when its node_modules is missing or was
// installed from another package-lock.json. It skips the test when Node.js
// 18+ or npm is not installed.
func tsClient(t *testing.T) (node, script string) {
	t.Helper()
	tsOnce.Do(setupTS)
	if tsSkip != "" {
		t.Skip(tsSkip)
	}
	if tsError != "" {
		t.Fatal(tsError)
	}
	return tsNode, filepath.Join(tsDir, "client.mjs")
}

func setupTS() {
	tsDir = filepath.Join(repoRoot, "tests", "interop", "ts")
	tsNode, tsSkip, tsError = npmProject(tsDir, 18)
}

// npmProject returns the node command for the npm project in dir, first
// installing it (npm ci) when its node_modules is missing or was installed
// from another package-lock.json. skip is set when Node.js minNode+ or npm
// is not installed, failure when the installation failed.
func npmProject(dir string, minNode int) (node, skip, failure string) {
	node, err := exec.LookPath("node")
	if err != nil {
		return "", fmt.Sprintf("node is not installed; the TypeScript SDK tests need Node.js %d or newer", minNode), ""
	}
	out, err := exec.Command(node, "--version").Output()
	v := strings.TrimPrefix(strings.TrimSpace(string(out)), "v")
	major, _ := strconv.Atoi(strings.SplitN(v, ".", 2)[0])
	if err != nil || major < minNode {
		return "", fmt.Sprintf("the TypeScript SDK tests need Node.js %d or newer, found %s", minNode, strings.TrimSpace(string(out))), ""
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", "npm is not installed; the TypeScript SDK tests need it", ""
	}
	lock, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return "", "", "reading " + dir + "/package-lock.json: " + err.Error()
	}
	sum := sha256.Sum256(lock)
	want := hex.EncodeToString(sum[:])
	stamp := filepath.Join(dir, "node_modules", ".wasmcp-interop-lock")
	if got, err := os.ReadFile(stamp); err == nil && string(got) == want {
		return node, "", ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", "", "npm ci in " + dir + " (the npm registry must be reachable): " + err.Error() + "\n" + string(out)
	}
	if err := os.WriteFile(stamp, []byte(want), 0o644); err != nil {
		return "", "", "writing " + stamp + ": " + err.Error()
	}
	return node, "", ""
}
