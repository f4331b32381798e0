package sdktest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCargoTest runs the crate's tests with /usr/bin/cargo and
// /usr/bin/rustc (Debian's 1.63, the toolchain CI has, not a rustup one
// that may come first on the PATH) and the crates of
// /usr/share/cargo/registry through debian-cargo.toml.
func TestCargoTest(t *testing.T) {
	if testing.Short() {
		t.Skip("cargo builds serde and syn for minutes; the full run (.ci/test) runs it")
	}
	for _, p := range []string{"/usr/bin/cargo", "/usr/bin/rustc", "/usr/share/cargo/registry"} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s is missing (apt-get install rustc cargo librust-serde-dev librust-serde-derive-dev librust-serde-json-dev)", p)
		}
	}
	if m, _ := filepath.Glob("/usr/share/cargo/registry/serde_json-1.*"); len(m) == 0 {
		t.Skip("serde_json is not in /usr/share/cargo/registry (apt-get install librust-serde-json-dev)")
	}
	crate, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	// Compiling serde_derive and syn on a loaded machine takes minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/usr/bin/cargo", "--config", filepath.Join(crate, "debian-cargo.toml"), "test",
		"--manifest-path", filepath.Join(crate, "Cargo.toml"))
	cmd.Env = append(os.Environ(), "CARGO_HOME="+home, "CARGO_TARGET_DIR="+filepath.Join(home, "target"),
		"RUSTC=/usr/bin/rustc", "RUSTDOC=/usr/bin/rustdoc")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cargo test: %v\n%s", err, out)
	}
	// Every test binary ran and passed: lib, tests/serve.rs, doc tests.
	if n := strings.Count(string(out), "test result: ok."); n < 3 {
		t.Fatalf("cargo test ran %d test binaries, want 3:\n%s", n, out)
	}
	t.Logf("%s", out)
}
