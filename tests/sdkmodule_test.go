package tests

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/modfile"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

const (
	sdkModule = "github.com/wasmcp/wasmcp/guest-sdk/go"
	abiModule = "github.com/wasmcp/wasmcp/abi"
)

// TestReadmeWritingATool follows the section "Go" of docs/writing-tools.md
// from an empty directory outside the repository, running its blocks as
// written: the shell blocks with bash (`wasmcp new go wc --sdk
// ~/src/wasmcp`, with this checkout for ~/src/wasmcp and the wasmcp under
// test on PATH), the Go block as main.go. The go command has no module
// proxy (GOPROXY=off) and a module cache of its own: the scaffold's
// replace lines must be all a tool needs of the unpublished SDK. The
// tool's module graph must hold the tool, the SDK and abi and nothing
// else; the built module is then served by wasmcp serve over stdio and
// answers a tools/call.
func TestReadmeWritingATool(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is needed to run the shell blocks of docs/writing-tools.md")
	}
	root, err := guestbuild.FindModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "docs", "writing-tools.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeSection(t, string(readme), "Go")
	if len(blocks) != 3 || blocks[0].lang != "sh" || blocks[1].lang != "go" || blocks[2].lang != "sh" {
		t.Fatalf("docs/writing-tools.md, section \"Go\", should hold three blocks, sh (module), go (main.go), sh (build); found %v", blocks)
	}
	if !strings.Contains(blocks[0].text, "wasmcp new go wc --sdk ~/src/wasmcp") {
		t.Fatalf("the first block of docs/writing-tools.md does not scaffold with wasmcp new go wc --sdk ~/src/wasmcp:\n%s", blocks[0].text)
	}
	// A release tags the root module, the SDK and abi together: the
	// versions they require of each other agree.
	abiVersion := requiredVersion(t, filepath.Join(root, "guest-sdk", "go", "go.mod"), abiModule)
	if v := requiredVersion(t, filepath.Join(root, "go.mod"), abiModule); v != abiVersion {
		t.Fatalf("the root module requires abi %s but the SDK requires %s: a release tags one version of each", v, abiVersion)
	}
	requiredVersion(t, filepath.Join(root, "go.mod"), sdkModule)

	tmp := t.TempDir()
	work := filepath.Join(tmp, "work")
	bin := filepath.Join(tmp, "bin")
	for _, d := range []string{work, bin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(wasmcpBin, filepath.Join(bin, "wasmcp")); err != nil {
		t.Fatal(err)
	}
	const goDelim = "README_GO_BLOCK"
	if strings.Contains(blocks[1].text, goDelim) {
		t.Fatalf("the Go block contains %s", goDelim)
	}
	script := "set -euo pipefail\n" + strings.ReplaceAll(blocks[0].text, "~/src/wasmcp", root) +
		"cat > main.go <<'" + goDelim + "'\n" + blocks[1].text + goDelim + "\n" +
		blocks[2].text +
		"go list -m all > \"$MODULES_OUT\"\n"
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = work
	cmd.Env = append(os.Environ(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		"GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local",
		"GOMODCACHE="+filepath.Join(tmp, "modcache"),
		// -modcacherw lets the test's temporary directory be removed.
		"GOFLAGS=-modcacherw",
		"MODULES_OUT="+filepath.Join(tmp, "modules.txt"),
	)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the blocks of docs/writing-tools.md failed outside the repository: %v\nscript:\n%s\noutput:\n%s", err, script, out)
	}

	mods, err := os.ReadFile(filepath.Join(tmp, "modules.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var graph []string
	for _, line := range strings.Split(strings.TrimSpace(string(mods)), "\n") {
		graph = append(graph, strings.Fields(line)[0])
	}
	slices.Sort(graph)
	if want := []string{"example.com/wc", abiModule, sdkModule}; !slices.Equal(graph, want) {
		t.Fatalf("the tool's module graph is %v, want %v (the SDK must need the standard library and abi only)", graph, want)
	}

	var wasms []string
	_ = filepath.WalkDir(work, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".wasm") {
			wasms = append(wasms, p)
		}
		return nil
	})
	if len(wasms) != 1 {
		t.Fatalf("the build of docs/writing-tools.md made %d .wasm files (%v), want 1", len(wasms), wasms)
	}
	tools := filepath.Join(tmp, "tools")
	if err := os.Mkdir(tools, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(wasms[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tools, filepath.Base(wasms[0])), b, 0o644); err != nil {
		t.Fatal(err)
	}

	s := startServe(t, "--tools", tools, "--stdio", "--cache-dir", filepath.Join(tmp, "cache"), "--watch=false")
	r := newRawSession(t, s)
	r.result("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "e2e", "version": "1"},
	})
	r.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if got := r.toolText("word_count", map[string]any{"text": "one two  three\nfour"}, nil); got != "4" {
		t.Fatalf("word_count answered %q, want 4", got)
	}
}

type mdBlock struct{ lang, text string }

func (b mdBlock) String() string { return "```" + b.lang }

// readmeSection returns the fenced code blocks of the "## title" section
// of a Markdown document,
// up to its first subsection.
func readmeSection(t *testing.T, readme, title string) []mdBlock {
	t.Helper()
	start := strings.Index(readme, "\n## "+title+"\n")
	if start < 0 {
		t.Fatalf("docs/writing-tools.md has no section %q", title)
	}
	sec := readme[start+len(title)+5:]
	// The section's own text ends at its first subsection or the next
	// section.
	for _, next := range []string{"\n## ", "\n### "} {
		if end := strings.Index(sec, next); end >= 0 {
			sec = sec[:end]
		}
	}
	var blocks []mdBlock
	for _, m := range regexp.MustCompile("(?ms)^```(\\w*)\n(.*?)^```$").FindAllStringSubmatch(sec, -1) {
		blocks = append(blocks, mdBlock{lang: m[1], text: m[2]})
	}
	return blocks
}

// requiredVersion returns the version of path that the go.mod file at
// gomod requires.
func requiredVersion(t *testing.T, gomod, path string) string {
	t.Helper()
	data, err := os.ReadFile(gomod)
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse(gomod, data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Require {
		if r.Mod.Path == path {
			return r.Mod.Version
		}
	}
	t.Fatalf("%s does not require %s", gomod, path)
	return ""
}
