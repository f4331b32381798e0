package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// wasmcp check prints its report and exits 1 on any failure: the probe
// guest's misbehaving tools fail under the policy given with --policy.
func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "short.policy.toml")
	if err := os.WriteFile(pol, []byte("timeout = \"3s\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCLI("check", "--cache-dir", cache, "--policy", pol, probe)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s %s", code, out, errs)
	}
	for _, want := range []string{
		"ok    load: ", "policy " + pol,
		"FAIL  tool wrong_id: answers: ", "answered with id 987654321",
		"FAIL  tool loop: answers: ", "deadline of 3s exceeded",
		"FAIL  ids echoed: ",
		"ok    tool count: answers",
		"ok    closed stdin: the guest ended (exit code 1)",
		"\nFAILED: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// A file that does not load is a failed check, in JSON too; a missing
// --policy file is one as well; no module is a usage error.
func TestCheckCommandLoadFailures(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.wasm")
	if err := os.WriteFile(bad, []byte("not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runCLI("check", "--cache-dir", cache, "--json", bad)
	var rep struct {
		Passed bool `json:"passed"`
		Checks []struct{ Status, Check, Detail string }
	}
	if code != 1 || json.Unmarshal([]byte(out), &rep) != nil || rep.Passed || len(rep.Checks) != 1 ||
		rep.Checks[0].Status != "FAIL" || rep.Checks[0].Check != "load" {
		t.Errorf("bad module: exit %d\n%s", code, out)
	}
	code, out, _ = runCLI("check", "--cache-dir", cache, "--policy", filepath.Join(t.TempDir(), "none.toml"), probe)
	if code != 1 || !strings.Contains(out, "FAIL  load: policy: ") {
		t.Errorf("missing policy: exit %d\n%s", code, out)
	}
	if code, _, errs := runCLI("check"); code != 2 || !strings.Contains(errs, "Usage: wasmcp check") {
		t.Errorf("no module: exit %d %s", code, errs)
	}
}
