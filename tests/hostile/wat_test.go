package hostile

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWATUpToDate rebuilds every guests/*.wat with wat2wasm and compares
// the result with the committed .wasm beside it, so the binaries the
// battery runs are the sources it shows. wat2wasm comes with WABT (Debian
// package wabt; .ci/run installs it); without it the test is skipped and
// the committed binaries are used as they are.
func TestWATUpToDate(t *testing.T) {
	wat2wasm, err := exec.LookPath("wat2wasm")
	if err != nil {
		t.Skip("wat2wasm not installed (apt-get install wabt): the committed .wasm files are not checked against their .wat sources")
	}
	sources, err := filepath.Glob("guests/*.wat")
	if err != nil || len(sources) == 0 {
		t.Fatalf("no guests/*.wat: %v", err)
	}
	for _, src := range sources {
		committed := strings.TrimSuffix(src, ".wat") + ".wasm"
		t.Run(filepath.Base(src), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.wasm")
			text, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			// A source may name extra flags on a line ";; wat2wasm flags: …".
			args := []string{src, "-o", out}
			for _, line := range strings.Split(string(text), "\n") {
				if f, ok := strings.CutPrefix(line, ";; wat2wasm flags:"); ok {
					args = append(strings.Fields(f), args...)
				}
			}
			cmd := exec.Command(wat2wasm, args...)
			if msg, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("wat2wasm %s: %v\n%s", src, err, msg)
			}
			built, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			have, err := os.ReadFile(committed)
			if err != nil {
				t.Fatalf("%s has no committed %s: %v", src, committed, err)
			}
			if !bytes.Equal(built, have) {
				ver, _ := exec.Command(wat2wasm, "--version").Output()
				t.Fatalf("%s differs from what wat2wasm %s builds from %s (the committed files were built with 1.0.32): rebuild it with wat2wasm %s",
					committed, strings.TrimSpace(string(ver)), src, strings.Join(args[:len(args)-1], " ")+" "+committed)
			}
		})
	}
}
