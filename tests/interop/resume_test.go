package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testkit/e2e"
)

// resumeReport is what ts/resume.mjs prints.
type resumeReport struct {
	Errors       []string     `json:"errors"`
	ResumedWith  []string     `json:"resumedWith"`
	CutAfter     *string      `json:"cutAfter"`
	WireMessages []string     `json:"wireMessages"`
	SessionID    *string      `json:"sessionId"`
	TextStats    tsCallResult `json:"textStats"`
	Progress     []float64    `json:"progress"`
	Hash         tsCallResult `json:"hash"`
}

// TestTypeScriptSDKResumesAStream: the official TypeScript client's
// tools/call stream is cut after its first event with an id and data, a
// progress notification (ts/resume.mjs);
// the SDK resumes it with a GET carrying that Last-Event-ID while its
// standalone GET stream is open, and gets the rest of the call's messages
// exactly once: each progress notification once, the response once (a
// response delivered twice, or on the standalone stream, makes the SDK
// report "Received a response for an unknown message ID").
func TestTypeScriptSDKResumesAStream(t *testing.T) {
	t.Parallel()
	node, script := tsClient(t)
	script = filepath.Join(filepath.Dir(script), "resume.mjs")
	base := startHTTP(t)
	url := base + "/mcp"
	// The test is about the stream, not the load: wait for /readyz (the
	// initial load over), so that no call waits for a module to compile
	// within the SDK's request timeout.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server was not ready within 5 minutes: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, script, url)
	var stdout bytes.Buffer
	stderr := &e2e.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = &stdout, stderr
	defer checkServerLog(t, "node resume.mjs", stderr)
	runErr := cmd.Run()
	var rep resumeReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("resume.mjs (%v) printed %q: %v", runErr, stdout.String(), err)
	}
	if runErr != nil {
		t.Fatalf("node resume.mjs: %v; report so far %+v", runErr, rep)
	}
	if rep.SessionID == nil || *rep.SessionID == "" {
		t.Fatalf("no session: %+v", rep)
	}
	if rep.CutAfter == nil || len(rep.ResumedWith) == 0 {
		t.Fatalf("the stream was not cut or not resumed: cut after %v, resumed with %v", rep.CutAfter, rep.ResumedWith)
	}
	if id := strings.TrimSpace(strings.TrimPrefix(firstLine(*rep.CutAfter, "id:"), "id:")); !slices.Contains(rep.ResumedWith, id) {
		t.Errorf("the SDK resumed with %v, not the id of the last event it got (%q)", rep.ResumedWith, id)
	}
	for _, e := range rep.Errors {
		if strings.Contains(e, "unknown message ID") {
			t.Errorf("the SDK got a response twice or on the wrong stream: %s", e)
		}
	}
	if rep.TextStats.IsError || len(rep.TextStats.Content) == 0 || !strings.Contains(string(rep.TextStats.StructuredContent), `"words":5`) {
		t.Errorf("text_stats after the resumption: %+v (%s)", rep.TextStats, rep.TextStats.StructuredContent)
	}
	// text_stats reports 5 steps; each arrives once, in order, on one
	// stream or the other.
	want := []float64{0, 1, 2, 3, 4}
	if !slices.Equal(rep.Progress, want) {
		t.Errorf("progress %v, want %v (each once)", rep.Progress, want)
	}
	responses := 0
	for _, m := range rep.WireMessages {
		if strings.HasPrefix(m, "response ") {
			responses++
		}
	}
	if responses != 2 {
		t.Errorf("the client got %d responses for 2 calls: %v", responses, rep.WireMessages)
	}
	if rep.Hash.IsError || len(rep.Hash.Content) == 0 {
		t.Errorf("hash after the resumption: %+v", rep.Hash)
	}
	t.Logf("cut after %q; resumed with %v; SDK errors %q", *rep.CutAfter, rep.ResumedWith, rep.Errors)
}

// firstLine returns the first line of s starting with prefix.
func firstLine(s, prefix string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
