package tests

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

// The command blocks of the docs work as written. Every ```sh block of the
// README, CONTRIBUTING.md, docs/ and the SDK and example READMEs says, in
// a comment on one of the two lines before it, what this test does with it:
//
//	<!-- doc-test: run[, OPTION]... -->  it is run, as below
//	<!-- doc-test: check-only: WHY -->   it cannot run here; WHY says why
//	                                     (a public service, root, minutes of CPU)
//
// A block with neither fails the test: a new block must choose. Every
// block, run or not, is checked against the repository: a wasmcp command
// and every flag it is given exist (its --help lists them), a path given
// to go test, go run or go build exists, a name given to -run or -bench
// names a test or benchmark that exists, and a script it runs exists and
// is executable. Under -short only the checks run.
//
// Run blocks run as a user would type them into one terminal, page by
// page in the page's order, under bash -e (docrun_test.go): in one fresh
// clone of the checkout per test binary (a directory named wasmcp), with
// the wasmcp under test first on PATH, and per page a fresh HOME (GOPATH
// and GOBIN in it; Go's build and module caches are the machine's). A
// page's first block starts in an empty directory beside the clone, each
// next one where the one before it ended (its last cd). A block has two
// minutes. Its options:
//
//	dir=repo   start in the clone's root
//	examples   the example tools are built in the clone first
//	           (go run ./examples/wasm/build, once per test binary)
//	serve      a wasmcp serve of the examples over HTTP runs beside the
//	           block: 127.0.0.1:8080 in the block is its address
//	server     the block starts a server that runs until stopped: its
//	           127.0.0.1:PORT becomes a free port; the test lists its tools
//	           over HTTP (HTTPS trusting its --tls-cert), then sends SIGTERM
//	needs=CMD  skipped when CMD is not installed (failed under CI)
//	expect=TEXT  its output must hold TEXT (the rest of the marker)
//
// and these substitutions: registry.example is a docker-registry on
// loopback that the test starts for the page, ~/src/wasmcp and
// /path/to/wasmcp are the clone, and a .wasm file the block uses but
// neither builds nor has is a small module. npm keeps its downloads
// between runs. A wasmcp serve on stdio is sent initialize and
// tools/list, must answer the list, and ends at the end of its input.
//
// A block in another language (a tool's source) marked
// <!-- doc-test: file NAME --> is written as NAME into the directory the
// page's next run block starts in. The README's first set-up command is
// also run from a fresh clone with an empty build cache, by
// TestReadmeFirstCommand.

// docFiles are the Markdown files whose blocks are held to this.
func docFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{"README.md", "CONTRIBUTING.md", "docs/*.md", "docs/design/*.md", "abi/README.md",
		"guest-sdk/*/README.md", "examples/*/README.md", "examples/*/*/README.md", "tests/conformance/README.md"} {
		m, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	return files
}

// docBlock is one shell block of a Markdown file, or a block of another
// language marked to be written as a file.
type docBlock struct {
	file   string            // relative to the repository
	line   int               // of the opening fence
	mode   string            // "run", "check-only", "file" or "" (no marker)
	reason string            // check-only: why; file: its name
	opts   map[string]string // run: its options ("" for a bare option)
	text   string
}

// name is the block's place: FILE:LINE.
func (b docBlock) name() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

var markerRE = regexp.MustCompile(`^<!--\s*doc-test:\s*(.*?)\s*-->\s*$`)

// parseMarker reads a doc-test comment's text into b; false when it is
// none of the three forms.
func parseMarker(s string, b *docBlock) bool {
	switch {
	case s == "run" || strings.HasPrefix(s, "run,"):
		b.mode, b.opts = "run", map[string]string{}
		s, expect, ok := strings.Cut(s, "expect=")
		if ok {
			b.opts["expect"] = expect
		}
		for _, o := range strings.Split(strings.TrimRight(strings.TrimSpace(s), ","), ",")[1:] {
			k, v, _ := strings.Cut(strings.TrimSpace(o), "=")
			b.opts[k] = v
		}
	case strings.HasPrefix(s, "check-only:"):
		b.mode, b.reason = "check-only", strings.TrimSpace(strings.TrimPrefix(s, "check-only:"))
	case strings.HasPrefix(s, "file "):
		b.mode, b.reason = "file", strings.TrimSpace(strings.TrimPrefix(s, "file "))
	default:
		return false
	}
	return true
}

// runOptions are the options a run marker may give.
var runOptions = map[string]bool{"dir": true, "examples": true, "serve": true, "server": true, "needs": true, "expect": true}

// shellBlocks returns a Markdown file's shell blocks and its blocks
// marked file, in order.
func shellBlocks(t *testing.T, root, file string) []docBlock {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(root, file)
	var blocks []docBlock
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		fence := strings.TrimSpace(lines[i])
		if !strings.HasPrefix(fence, "```") {
			continue
		}
		info := strings.TrimPrefix(fence, "```")
		end := i + 1
		for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
			end++
		}
		blk := docBlock{file: rel, line: i + 1, text: strings.Join(lines[i+1:min(end, len(lines))], "\n")}
		for j := i - 1; j >= 0 && j >= i-2; j-- {
			if m := markerRE.FindStringSubmatch(strings.TrimSpace(lines[j])); m != nil {
				if !parseMarker(m[1], &blk) {
					blk.mode, blk.reason = "bad", m[1]
				}
				break
			}
		}
		shell := info == "sh" || info == "bash" || info == "shell"
		if shell && blk.mode == "file" || !shell && blk.mode != "file" && blk.mode != "" {
			blk.mode, blk.reason = "bad", "a file marker goes before a source block, run and check-only before a shell block"
		}
		if shell || blk.mode != "" {
			blocks = append(blocks, blk)
		}
		i = end
	}
	return blocks
}

// commands splits a shell block into its simple commands: a backslash at
// a line's end joins it to the next, comments are dropped, and commands
// end at a newline, &&, ||, ; or | outside quotes (a quote may span lines).
func commands(text string) [][]string {
	var parts []string
	var cur strings.Builder
	var q byte
	flush := func() { parts = append(parts, cur.String()); cur.Reset() }
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			}
			cur.WriteByte(c)
		case c == '\\' && i+1 < len(text) && text[i+1] == '\n':
			cur.WriteByte(' ')
			i++
		case c == '\'' || c == '"':
			q = c
			cur.WriteByte(c)
		case c == '#' && (cur.Len() == 0 || strings.HasSuffix(cur.String(), " ") || strings.HasSuffix(cur.String(), "\t")):
			for i+1 < len(text) && text[i+1] != '\n' {
				i++
			}
		case c == '\n' || c == ';':
			flush()
		case c == '|' || c == '&' && i+1 < len(text) && text[i+1] == '&':
			flush()
			if i+1 < len(text) && (text[i+1] == '|' || text[i+1] == '&') {
				i++
			}
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	var out [][]string
	for _, part := range parts {
		f := shellWords(strings.ReplaceAll(part, "\n", " "))
		// Leading VAR=value assignments and a subshell's parenthesis.
		for len(f) > 0 && (regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`).MatchString(f[0]) || f[0] == "(") {
			f = f[1:]
		}
		if len(f) > 0 {
			f[0] = strings.TrimPrefix(f[0], "(")
			out = append(out, f)
		}
	}
	return out
}

// shellWords splits on blanks outside quotes and drops the quotes.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	var q byte
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case q != 0:
			if c == q {
				q = 0
			} else {
				cur.WriteByte(c)
			}
		case c == '\'' || c == '"':
			q, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

func TestDocCommandBlocks(t *testing.T) {
	root, err := guestbuild.FindModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	reasons := map[string]int{}
	var pages [][]docBlock
	for _, f := range docFiles(t, root) {
		var page []docBlock
		for _, b := range shellBlocks(t, root, f) {
			counts[b.mode]++
			switch b.mode {
			case "":
				t.Errorf("%s: a shell block needs <!-- doc-test: run --> or <!-- doc-test: check-only: WHY --> before it", b.name())
				continue
			case "bad":
				t.Errorf("%s: a doc-test marker it cannot read: %s", b.name(), b.reason)
				continue
			case "check-only":
				if b.reason == "" {
					t.Errorf("%s: a check-only block must say why", b.name())
				}
				reasons[b.reason]++
			case "run":
				for k := range b.opts {
					if !runOptions[k] {
						t.Errorf("%s: no run option %q", b.name(), k)
					}
				}
			}
			if b.mode != "file" {
				for _, c := range commands(b.text) {
					// A script a run block runs may be one it made (./build.sh).
					if problem := checkCommand(t, root, c); problem != "" && !(b.mode == "run" && problem == "no such script") {
						t.Errorf("%s: %s: %s", b.name(), strings.Join(c, " "), problem)
					}
				}
			}
			page = append(page, b)
		}
		if len(page) > 0 {
			pages = append(pages, page)
		}
	}
	t.Logf("shell blocks: %d run, %d check-only, %d without a marker; %d source blocks written as files",
		counts["run"], counts["check-only"], counts[""], counts["file"])
	var why []string
	for r, n := range reasons {
		why = append(why, fmt.Sprintf("%d × %s", n, r))
	}
	sort.Strings(why)
	t.Logf("check-only because:\n\t%s", strings.Join(why, "\n\t"))
	if counts["run"] == 0 {
		t.Fatal("no block is run: the README's registry story at least must be")
	}
	if testing.Short() || t.Failed() {
		return
	}
	runDocPages(t, root, pages)
}

var (
	helpCache = map[string]string{}
	testNames = map[string]bool{} // every Test*/Benchmark*/Fuzz* function name in the repository
)

// checkCommand holds one command against the repository; "" when it holds.
func checkCommand(t *testing.T, root string, c []string) string {
	switch c[0] {
	case "wasmcp":
		if len(c) < 2 {
			return ""
		}
		sub := c[1]
		if strings.HasPrefix(sub, "-") {
			return ""
		}
		help, ok := helpCache[sub]
		if !ok {
			out, err := exec.Command(wasmcpBin, sub, "--help").CombinedOutput()
			if err != nil {
				help = "\x00" + fmt.Sprintf("wasmcp %s --help: %v: %s", sub, err, out)
			} else {
				help = string(out)
			}
			helpCache[sub] = help
		}
		if strings.HasPrefix(help, "\x00") {
			return "no such command (" + help[1:] + ")"
		}
		for _, a := range c[2:] {
			if !strings.HasPrefix(a, "-") || a == "-" || a == "--" {
				continue
			}
			flag := strings.SplitN(strings.TrimLeft(a, "-"), "=", 2)[0]
			if !regexp.MustCompile(`(?m)^\s+--?` + regexp.QuoteMeta(flag) + `\b`).MatchString(help) {
				return fmt.Sprintf("wasmcp %s has no flag --%s", sub, flag)
			}
		}
	case "go":
		if len(c) < 2 {
			return ""
		}
		switch c[1] {
		case "test", "run", "build", "generate", "vet", "install":
		default:
			return ""
		}
		for i, a := range c[2:] {
			if strings.HasPrefix(a, "./") || a == "." {
				p := strings.TrimSuffix(a, "/...")
				if _, err := os.Stat(filepath.Join(root, p)); err != nil {
					// Relative to a directory the block cd'ed into: try
					// the nested modules.
					if !existsBelow(root, p) {
						return "no such package " + a
					}
				}
			}
			if (a == "-run" || a == "-bench" || a == "-fuzz") && i+3 < len(c) {
				if p := namesProblem(t, root, c[i+3]); p != "" {
					return p
				}
			}
		}
	default:
		if strings.Contains(c[0], "/") && !strings.HasPrefix(c[0], "~") && !strings.HasPrefix(c[0], "$") && !strings.HasPrefix(c[0], "/") {
			p := filepath.Join(root, c[0])
			fi, err := os.Stat(p)
			if err != nil {
				if existsBelow(root, c[0]) {
					return ""
				}
				return "no such script"
			}
			if fi.Mode()&0o111 == 0 {
				return "not executable"
			}
		}
	}
	return ""
}

// existsBelow reports whether rel exists below one of the repository's
// directories that a block may cd into (a nested module: bench, an SDK).
func existsBelow(root, rel string) bool {
	for _, d := range []string{"bench", "guest-sdk/go", "abi", "tests", "examples/wasm"} {
		if _, err := os.Stat(filepath.Join(root, d, rel)); err == nil {
			return true
		}
	}
	return false
}

// namesProblem checks a -run/-bench/-fuzz pattern: each top-level
// alternative that is a plain name (anchors and a subtest path aside)
// must name a function of the repository.
func namesProblem(t *testing.T, root, pattern string) string {
	if len(testNames) == 0 {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && p != root {
				return filepath.SkipDir
			}
			if strings.HasSuffix(p, "_test.go") {
				b, _ := os.ReadFile(p)
				for _, m := range regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz|Example)\w*)\(`).FindAllSubmatch(b, -1) {
					testNames[string(m[1])] = true
				}
			}
			return nil
		})
	}
	if pattern == "^$" || pattern == "." {
		return ""
	}
	top := strings.SplitN(pattern, "/", 2)[0]
	top = strings.Trim(top, "^$'\"()")
	for _, alt := range strings.Split(top, "|") {
		alt = strings.Trim(alt, "^$()")
		if alt == "" || !regexp.MustCompile(`^\w+$`).MatchString(alt) {
			continue
		}
		found := false
		for n := range testNames {
			if strings.HasPrefix(n, alt) || strings.Contains(n, alt) {
				found = true
				break
			}
		}
		if !found {
			return "no test or benchmark matches " + alt
		}
	}
	return ""
}

// TestReadmeFirstCommand runs the README's first set-up command as written,
// from a fresh clone of this checkout's HEAD (the Go build cache is the
// user's, warm from building wasmcp): it must answer tools/list.
func TestReadmeFirstCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every example from a fresh clone")
	}
	root, err := guestbuild.FindModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var first string
	for _, b := range shellBlocks(t, root, filepath.Join(root, "README.md")) {
		for _, l := range strings.Split(b.text, "\n") {
			if strings.HasPrefix(l, "go run") && strings.Contains(l, "./examples/wasm/build &&") {
				first = l
				break
			}
		}
		if first != "" {
			break
		}
	}
	if first == "" {
		t.Fatalf("README.md has no first command (go run ./examples/wasm/build …):\n%.400s", readme)
	}
	clone := filepath.Join(t.TempDir(), "wasmcp")
	if out, err := exec.Command("git", "clone", "-q", root, clone).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	// A clean build of the examples and of wasmcp: minutes on a quiet
	// machine, far more beside other test packages.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-c", first)
	cmd.Dir = clone
	// GOCACHE stays the user's: XDG_CACHE_HOME alone would move it to an
	// empty directory, and a cold build of everything is bench/firstrun's
	// measure, not this test's (beside the other packages under -race in
	// CI it took most of the package's hour).
	cmd.Env = append(os.Environ(), "GOCACHE="+goCache(t), "XDG_CACHE_HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir())
	// go run starts wasmcp as its own child: the command runs in a
	// process group of its own, and the whole group is killed at the end
	// (killing bash alone would leave wasmcp holding the pipes, and Wait
	// waiting on them).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cancel(); cmd.Wait() }()
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"doc","version":"1"}}}`)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var printed []string
	id := 2
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,`, id)):
			// The first list holds what loaded within --ready-wait (2 s),
			// on a loaded machine possibly nothing; the rest follow with
			// list_changed, and a client lists again, as this one does.
			if strings.Contains(l, `"result":{"tools":[{`) {
				return
			}
			if !strings.Contains(l, `"result":{"tools":[]`) {
				t.Fatalf("the README's first command answered tools/list with: %.600s", l)
			}
			t.Logf("tools/list (id %d) answered before any module loaded; waiting for list_changed", id)
		case strings.Contains(l, `"method":"notifications/tools/list_changed"`):
			id++
			fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`+"\n", id)
		default:
			// A stdio client reads only JSON-RPC messages on stdout: the
			// build's progress belongs on stderr.
			if !strings.HasPrefix(l, `{"jsonrpc":"2.0",`) {
				t.Errorf("the README's first command wrote to stdout, where a stdio client reads only messages: %q", l)
			}
			printed = append(printed, l)
		}
	}
	t.Fatalf("the README's first command ended without listing a tool (%v)\n--- stdout\n%s\n--- stderr\n%s",
		ctx.Err(), strings.Join(printed, "\n"), stderr.String())
}

// goCache is the Go build cache in use, named explicitly so a test that
// moves XDG_CACHE_HOME keeps it warm.
func goCache(t *testing.T) string {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		t.Fatalf("go env GOCACHE: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// TestDocBlockCheckerCatchesMistakes: the checks of TestDocCommandBlocks
// refuse what a stale doc would say.
func TestDocBlockCheckerCatchesMistakes(t *testing.T) {
	root, err := guestbuild.FindModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range []string{
		"wasmcp pull registry.example/x:1 --no-such-flag",
		"wasmcp no-such-command",
		"go test ./no/such/package",
		"go test ./tests -run TestNoSuchTestAnywhere",
		"bench/no-such-script.sh",
	} {
		cmds := commands(block)
		if len(cmds) != 1 {
			t.Fatalf("%q split into %v", block, cmds)
		}
		if checkCommand(t, root, cmds[0]) == "" {
			t.Errorf("%q passed the check", block)
		}
	}
	got := commands("a 'x | y' && b \\\n  --c # d\ne \"f\n g\"; h")
	want := [][]string{{"a", "x | y"}, {"b", "--c"}, {"e", "f  g"}, {"h"}} // a quoted newline is a blank to the check
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("commands: %q, want %q", got, want)
	}
}

// TestDocMarkers: what each doc-test marker says is read as such, and a
// block without one, or with one the test cannot read, is told apart.
func TestDocMarkers(t *testing.T) {
	dir := t.TempDir()
	md := "<!-- doc-test: run, dir=repo, needs=clang-14, expect=Hello, Ada! -->\n```sh\na\n```\n" +
		"<!-- doc-test: check-only: needs a desktop client -->\n\n```sh\nb\n```\n" +
		"```sh\nc\n```\n" +
		"<!-- doc-test: runs -->\n```sh\nd\n```\n" +
		"<!-- doc-test: file main.go -->\n```go\npackage main\n```\n" +
		"<!-- doc-test: file x.sh -->\n```sh\ne\n```\n" +
		"```go\nnot a shell block\n```\n"
	if err := os.WriteFile(filepath.Join(dir, "p.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range shellBlocks(t, dir, filepath.Join(dir, "p.md")) {
		got = append(got, fmt.Sprintf("%s|%s|%v|%s", b.mode, b.reason, b.opts, b.text))
	}
	want := []string{
		"run||map[dir:repo expect:Hello, Ada! needs:clang-14]|a",
		"check-only|needs a desktop client|map[]|b",
		"||map[]|c",
		"bad|runs|map[]|d",
		"file|main.go|map[]|package main",
		"bad|a file marker goes before a source block, run and check-only before a shell block|map[]|e",
	}
	if !slices.Equal(got, want) {
		t.Errorf("blocks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
