package hostile

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// checkReport runs wasmcp check --json on a module of the battery and
// returns its exit code, each check's status and detail, and the output.
func checkReport(t *testing.T, module string) (int, map[string]string, string) {
	t.Helper()
	cmd := exec.Command(wasmcpBin, "check", "--json", "--cache-dir", cacheDir, filepath.Join(toolsDir, module+".wasm"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("check %s: %v", module, err)
	}
	var rep struct {
		Passed bool `json:"passed"`
		Checks []struct {
			Status, Check, Detail string
		} `json:"checks"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("check %s: exit %d, %v\n%s\nstderr: %s", module, code, err, out, stderr.String())
	}
	status := map[string]string{}
	for _, c := range rep.Checks {
		status[c.Check] = c.Status + " " + c.Detail
	}
	return code, status, string(out)
}

// TestCheckCatchesHostileGuest runs wasmcp check on the battery's hostile
// guest: every misbehaving tool fails the check that concerns it, and the
// command exits 1.
func TestCheckCatchesHostileGuest(t *testing.T) {
	code, status, out := checkReport(t, "hostile")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	if !strings.Contains(status["load"], "hostile.policy.toml") {
		t.Errorf("load line %q does not name the policy file", status["load"])
	}
	for check, want := range map[string]string{
		"tool loop: answers":                           "limit timeout",
		"tool recurse: answers":                        "stack overflow",
		"tool stdout_flood: answers":                   "limit output",
		"tool endless_line: answers":                   "limit line",
		"tool malformed: answers":                      "not a JSON-RPC message",
		"tool wrong_id: answers":                       "answered with id",
		"tool two_responses: nothing after the answer": "after its answer",
		"tool exit_mid: answers":                       "exited with code 7",
		"tool unreachable: answers":                    "unreachable",
		"tool request_flood: answers":                  "requests to the client outstanding",
		"tool close_stdout: answers":                   "exited without answering",
		"ids echoed":                                   "answered with id",
		"limits":                                       "limit timeout",
	} {
		got, ok := status[check]
		if !ok || !strings.HasPrefix(got, "FAIL ") || !strings.Contains(got, want) {
			t.Errorf("%s: %q, want FAIL with %q", check, got, want)
		}
	}
}

// TestCheckPassesGoodGuest: the battery's well-behaved guest passes.
func TestCheckPassesGoodGuest(t *testing.T) {
	code, status, out := checkReport(t, "good")
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s", code, out)
	}
	if !strings.HasPrefix(status["tool echo: answers"], "ok ") || !strings.HasPrefix(status["closed stdin"], "ok ") {
		t.Errorf("report: %s", out)
	}
}
