package hostile

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestInspectShowsEffectivePolicy checks `wasmcp inspect` prints each
// module's effective policy with the policy file's keys, the server's
// defaults filled in, and environment variables by name and source only.
func TestInspectShowsEffectivePolicy(t *testing.T) {
	inspect := func(module string, extra ...string) map[string]any {
		t.Helper()
		args := append([]string{"inspect", "--cache-dir", cacheDir}, extra...)
		cmd := exec.Command(wasmcpBin, append(args, filepath.Join(toolsDir, module+".wasm"))...)
		cmd.Env = append(os.Environ(), hostEnv+"=from-host")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("inspect %s: %v", module, err)
		}
		if strings.Contains(string(out), "from-host") {
			t.Fatalf("inspect %s shows an environment value: %s", module, out)
		}
		var v struct {
			PolicyFile string         `json:"policyFile"`
			Policy     map[string]any `json:"policy"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			t.Fatalf("inspect %s: %v\n%s", module, err, out)
		}
		if want := filepath.Join(toolsDir, module+".policy.toml"); module != "good" && v.PolicyFile != want {
			t.Errorf("inspect %s: policyFile %q, want %q", module, v.PolicyFile, want)
		}
		return v.Policy
	}
	got := inspect("hostilego")
	want := map[string]any{
		"memory": "32MiB", "timeout": hostileTimeout, "max_output": "1MiB", "max_line": "256KiB",
		"max_instances": 0.0, "max_queue": 64.0, "stderr": "log",
		"mount": []any{
			map[string]any{"host": filepath.Join(toolsDir, "data"), "guest": "/data", "mode": "ro"},
			map[string]any{"host": filepath.Join(toolsDir, "scratch"), "guest": "/scratch", "mode": "rw"},
		},
		"env": map[string]any{"FROM_HOST": "from " + hostEnv, "GRANTED": "literal"},
		"http": map[string]any{
			"allow":    []any{map[string]any{"rule": "GET,HEAD http://127.0.0.1:" + netPort + "/", "headers": map[string]any{"X-Token": "literal"}}},
			"networks": []any{}, "max_requests": 10.0, "max_bytes_out": "1MiB", "max_bytes_in": "8MiB", "timeout": "10s", "concurrency": 4.0,
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("inspect hostilego:\n got %v\nwant %v", got, want)
	}
	got = inspect("gated")
	if got["max_instances"] != 1.0 || got["max_queue"] != 1.0 || got["stderr"] != "discard" || got["memory"] != "1MiB" || got["timeout"] != "1s" {
		t.Errorf("inspect gated: %v", got)
	}
	// A module without a policy file shows the server's defaults, here
	// set by flags.
	got = inspect("good", "--memory", "48", "--timeout", "3s", "--max-output", "2")
	want = map[string]any{
		"memory": "48MiB", "timeout": "3s", "max_output": "2MiB", "max_line": "4MiB",
		"max_instances": 0.0, "max_queue": 64.0, "stderr": "log", "mount": []any{}, "env": map[string]any{},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("inspect good:\n got %v\nwant %v", got, want)
	}
}
