package pull_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/pull"
	"github.com/wasmcp/wasmcp/pull/oci"
	"github.com/wasmcp/wasmcp/pull/signing"
)

// TestVerifyOnlySkipped: referrers that were all skipped (malformed, over
// a cap) are no signature: the tool is refused, saying what was skipped,
// never served as if unsigned.
func TestVerifyOnlySkipped(t *testing.T) {
	dir := t.TempDir()
	_, pub, err := signing.GenerateKey("")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "k.pub"), pub, 0o644); err != nil {
		t.Fatal(err)
	}
	d := "sha256:" + strings.Repeat("ab", 32)
	sigs := []oci.Signature{{Source: "referrer sha256:1", Skipped: "signature manifest: want one layer"}, {Source: "referrer sha256:2", Skipped: "over the cap"}}
	_, err = pull.Verify(context.Background(), sigs, d, &pull.Tool{Name: "echo", Reference: "r.example/tools/echo:1", Key: "k.pub"}, dir)
	if err == nil || !strings.Contains(err.Error(), "no signature of "+d+" verifies") || !strings.Contains(err.Error(), "skipped: over the cap") {
		t.Fatalf("got %v", err)
	}
}
