package server

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/pull/oci"
)

// TestPulledLockDeleted: a tools directory whose lock was deleted while
// serve was not running still holds the modules installed from it (with
// their .NAME.wasmcp-pulled markers). Serve's start removes them rather
// than serving them unchecked as if placed by hand; a directory with
// neither lock nor markers has no pulled tools.
func TestPulledLockDeleted(t *testing.T) {
	dir := t.TempDir()
	pc := &PullConfig{OCI: oci.Options{DockerConfig: filepath.Join(t.TempDir(), "none.json")}}
	os.WriteFile(pc.OCI.DockerConfig, []byte(`{}`), 0o600)
	ec := &host.Config{CacheDir: t.TempDir()}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if p, err := newPulledTools(dir, pc, ec, log); err != nil || p != nil {
		t.Fatalf("no lock, no markers: %v, %v", p, err)
	}
	for _, f := range []string{"echo.wasm", ".echo.wasmcp-pulled", "echo.policy.toml", "hand.wasm"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("\x00asm\x01\x00\x00\x00"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p, err := newPulledTools(dir, pc, ec, log)
	if err != nil || p == nil {
		t.Fatalf("markers without a lock: %v, %v", p, err)
	}
	defer p.close()
	if !p.sync(context.Background(), false) {
		t.Error("sync reports no change")
	}
	for _, f := range []string{"echo.wasm", ".echo.wasmcp-pulled", "echo.policy.toml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			t.Errorf("%s left in the tools directory", f)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "hand.wasm")); err != nil {
		t.Errorf("a module placed by hand removed: %v", err)
	}
}
