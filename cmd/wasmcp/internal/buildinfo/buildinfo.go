// Package buildinfo says what the wasmcp binary was built from: its
// version (stamped, the module version, the VCS revision, or the commit of
// the checkout it was compiled in) and that checkout's directory, which
// `wasmcp new` uses for the SDKs.
package buildinfo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// Version is the version to report: stamped, the one stamped with
// -ldflags (anything but "dev"), else the module version the binary was built at (go install …@v1.2.3),
// else the VCS revision stamped by go build in a checkout, else — for
// `go run` and builds with -buildvcs=false, which stamp none — the commit
// of the checkout the binary was built from, asked of git once.
func Version(stamped string) string {
	versionOnce.Do(func() { versionText = findVersion(stamped) })
	return versionText
}

var (
	versionOnce sync.Once
	versionText string
)

func findVersion(stamped string) string {
	if stamped != "dev" && stamped != "" {
		return stamped
	}
	info, ok := debug.ReadBuildInfo()
	if ok {
		if v := info.Main.Version; v != "" && v != "(devel)" {
			return v
		}
		var rev, dirty string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "-dirty"
				}
			}
		}
		if rev != "" {
			return "dev-" + short(rev) + dirty
		}
	}
	if rev := checkoutRevision(); rev != "" {
		return "dev-" + rev
	}
	return "dev"
}

// Checkout is the root of the wasmcp checkout this binary was compiled
// from, when it still exists where the compiler saw it (go run, go build
// or go install in a clone), else "". The path is the compiler's: absolute
// without -trimpath; with -trimpath it is module-relative and nothing is
// found.
func Checkout() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	// This file is cmd/wasmcp/internal/buildinfo/buildinfo.go.
	root := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(file)))))
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return ""
	}
	return root
}

// checkoutRevision is the commit of Checkout: "abcdef012345" or
// "abcdef012345-dirty", or "" when there is no checkout or no git.
func checkoutRevision() string {
	dir := Checkout()
	if dir == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	rev := short(strings.TrimSpace(string(out)))
	if rev == "" {
		return ""
	}
	// Any change to tracked files marks the build dirty, as go build's
	// vcs.modified does.
	if err := exec.CommandContext(ctx, "git", "-C", dir, "diff-index", "--quiet", "HEAD", "--").Run(); err != nil {
		if _, isExit := err.(*exec.ExitError); isExit {
			rev += "-dirty"
		}
	}
	return rev
}

func short(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
