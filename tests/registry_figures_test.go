package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestRegistryFigures measures the figures of docs/registry-tools.md:
// `wasmcp pull` (resolve, fetch, verify the digests and the signature) of
// the reload guest (3.6 MiB Go module, pushed with --sign) from the local
// registry, and serve's start with 20 signed pulled tools cached and the
// registry down (every digest and signature verified again). Run with WASMCP_REGISTRY_FIGURES=1:
//
//	WASMCP_REGISTRY_FIGURES=1 go test ./tests -run TestRegistryFigures -v
func TestRegistryFigures(t *testing.T) {
	if os.Getenv("WASMCP_REGISTRY_FIGURES") == "" {
		t.Skip("set WASMCP_REGISTRY_FIGURES=1 to measure")
	}
	e := newRegEnv(t, false)
	keys := t.TempDir()
	if out, err := runWasmcp("keygen", "--out", filepath.Join(keys, "me")); err != nil {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	sign := []string{"--sign", filepath.Join(keys, "me.key")}
	pub := filepath.Join(keys, "me.pub")
	e.push(t, "v1", "", "tools/reload:v1", sign...)
	var pulls []time.Duration
	for i := range 5 {
		cache := filepath.Join(t.TempDir(), "c")
		dir := t.TempDir()
		t0 := time.Now()
		out := e.run(t, true, "pull", e.reg.Addr+"/tools/reload:v1", "-o", dir, "--key", pub, "--cache-dir", cache)
		pulls = append(pulls, time.Since(t0))
		if i == 0 {
			t.Logf("%s", out)
		}
	}
	t.Logf("wasmcp pull (process, empty cache, signed: digests and signature verified, module described), %d-byte module: %v", len(e.v1), pulls)
	// The module described before (as after a serve of it, or a pull with
	// the same --cache-dir): its description comes from the cache.
	pulls = nil
	for range 5 {
		t0 := time.Now()
		e.run(t, true, "pull", e.reg.Addr+"/tools/reload:v1", "-o", t.TempDir(), "--key", pub, "--cache-dir", e.cache)
		pulls = append(pulls, time.Since(t0))
	}
	t.Logf("wasmcp pull, the compilation and description caches warm: %v", pulls)

	// 20 tools: the same module with 20 policies, so 20 manifests.
	for i := range 20 {
		e.push(t, "v1", fmt.Sprintf("timeout = \"%ds\"\n", 10+i), fmt.Sprintf("tools/reload%d:v1", i), sign...)
	}
	var lock strings.Builder
	for i := range 20 {
		// One module under 20 names: each declares the others' names.
		out := e.run(t, true, "pull", fmt.Sprintf("%s/tools/reload%d:v1", e.reg.Addr, i), "-o", e.tools, "--key", pub, "--cache-dir", e.cache, "--allow-collision")
		_ = out
	}
	b, _ := os.ReadFile(filepath.Join(e.tools, "wasmcp.lock"))
	lock.Write(b)
	for i := range 20 {
		e.run(t, true, "approve", fmt.Sprintf("reload%d", i), "-o", e.tools)
	}
	e.reg.Stop()
	took := regexp.MustCompile(`pulled tools checked".*took=(\S+)`)
	loaded := regexp.MustCompile(`modules loaded" took=(\S+)`)
	for run := range 3 {
		if run > 0 {
			// Start from the cache, not from files installed by the run before.
			for i := range 20 {
				os.Remove(filepath.Join(e.tools, fmt.Sprintf("reload%d.wasm", i)))
			}
		}
		t0 := time.Now()
		cmd := exec.Command(wasmcpBin, "serve", "--tools", e.tools, "--cache-dir", e.cache, "--watch=false")
		cmd.Stdin = strings.NewReader("") // stdin at EOF: serve ends once the load has
		out, err := cmd.CombinedOutput()
		wall := time.Since(t0)
		if err != nil {
			t.Fatalf("serve: %v\n%s", err, out)
		}
		m, l := took.FindSubmatch(out), loaded.FindSubmatch(out)
		if m == nil || l == nil || !strings.Contains(string(out), "modules=20") {
			t.Fatalf("serve output:\n%s", out)
		}
		t.Logf("serve, 20 signed pulled tools cached, registry down: verify (digests, signatures)+install %s, load ended %s, process %s", m[1], l[1], wall.Round(time.Millisecond))
	}
}
