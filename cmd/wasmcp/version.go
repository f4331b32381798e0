package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// buildVersion is the version to report: the one stamped with -ldflags,
// else the module version the binary was built at (go install …@v1.2.3),
// else the VCS revision stamped by go build in a checkout, else — for
// `go run` and builds with -buildvcs=false, which stamp none — the commit
// of the checkout the binary was built from, asked of git once.
func buildVersion() string {
	versionOnce.Do(func() { versionText = findVersion() })
	return versionText
}

var (
	versionOnce sync.Once
	versionText string
)

func findVersion() string {
	if version != "dev" {
		return version
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
	return version
}

// checkoutRevision is the commit of the checkout this file was compiled
// from, when the binary runs where that checkout still is (go run, or a
// build with -buildvcs=false): "abcdef012345" or "abcdef012345-dirty", or
// "" when there is no such checkout or no git. The path is the compiler's
// (absolute without -trimpath); with -trimpath it is module-relative and
// nothing is found.
func checkoutRevision() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok || !filepath.IsAbs(file) {
		return ""
	}
	dir := filepath.Dir(file)
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
