package buildinfo

import (
	"os/exec"
	"strings"
	"testing"
)

// A binary built from a checkout without VCS stamping (go run, go test,
// -buildvcs=false) reports the checkout's commit, not "dev".
func TestVersionNamesTheCheckoutCommit(t *testing.T) {
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout, or no git: %v", err)
	}
	head := strings.TrimSpace(string(out))[:12]
	v := Version("dev")
	if !strings.HasPrefix(v, "dev-"+head) {
		t.Fatalf("Version(\"dev\") = %q, want dev-%s…", v, head)
	}
}
