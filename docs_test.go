package wasmcp_test

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The shape of docs/security.md: one table row per attack, each cell a
// line rather than a paragraph, and the page small enough to read.
const (
	maxSecurityPage = 40 << 10 // bytes
	maxSecurityCell = 200      // characters (runes) in one cell
)

// testRef is a test a document names in a code span: pkg.TestName (pkg
// the last elements of the test's directory, cmd/wasmcp.TestX), and
// optionally a subtest after a slash.
var testRef = regexp.MustCompile("`(?:([a-z0-9_/]+)\\.)?((?:Test|Benchmark|Fuzz)[A-Za-z0-9_]+)(?:/[^`]*)?`")

// testFuncs returns the Test, Benchmark and Fuzz functions declared in
// the repository's _test.go files, each with the directories declaring it.
func testFuncs(t *testing.T) map[string][]string {
	t.Helper()
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)[A-Za-z0-9_]*)\(`)
	names := map[string][]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllSubmatch(src, -1) {
			names[string(m[1])] = append(names[string(m[1])], filepath.ToSlash(filepath.Dir(path)))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// tableCells splits a Markdown table row into its cells; ok is false for a
// line that is not a row. A | inside a code span does not split.
func tableCells(line string) (cells []string, ok bool) {
	line = strings.TrimSpace(line)
	if !strings.HasPrefix(line, "|") || !strings.HasSuffix(line, "|") || len(line) < 2 {
		return nil, false
	}
	var cur strings.Builder
	inCode := false
	for _, r := range line[1 : len(line)-1] {
		switch {
		case r == '`':
			inCode = !inCode
		case r == '|' && !inCode:
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
			continue
		}
		cur.WriteRune(r)
	}
	return append(cells, strings.TrimSpace(cur.String())), true
}

// testRefProblem says what is wrong with a test a document names as
// pkg.name: no _test.go declares it, or none in a directory pkg names.
func testRefProblem(funcs map[string][]string, pkg, name string) string {
	dirs := funcs[name]
	if len(dirs) == 0 {
		return fmt.Sprintf("names %s, which no _test.go declares", name)
	}
	if pkg == "" {
		return ""
	}
	for _, d := range dirs {
		if d == pkg || strings.HasSuffix(d, "/"+pkg) {
			return ""
		}
	}
	return fmt.Sprintf("names %s.%s, but %s is declared in %s", pkg, name, name, strings.Join(dirs, ", "))
}

// TestRepoSecurityPage checks docs/security.md's shape: at most 40 KB; every
// table is Attack | What holds | Test; no cell over 200 characters; the Test
// cell holds only test names in code spans (or — for a stated limit); and
// every test the page names is declared in the package it is named with.
func TestRepoSecurityPage(t *testing.T) {
	const page = "docs/security.md"
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > maxSecurityPage {
		t.Errorf("%s is %d bytes, over %d: state each attack in one short row", page, len(raw), maxSecurityPage)
	}
	funcs := testFuncs(t)
	onlyNames := regexp.MustCompile("^(?:`[^`]+`(?:, )?)+$")
	rows := 0
	for i, line := range strings.Split(string(raw), "\n") {
		cells, ok := tableCells(line)
		if !ok {
			continue
		}
		at := func(format string, args ...any) {
			t.Errorf("%s:%d: "+format, append([]any{page, i + 1}, args...)...)
		}
		if len(cells) != 3 {
			at("a row has %d cells, want 3 (Attack | What holds | Test)", len(cells))
			continue
		}
		if cells[0] == "Attack" {
			if cells[1] != "What holds" || cells[2] != "Test" {
				at("the header is %q, want Attack | What holds | Test", line)
			}
			continue
		}
		if strings.HasPrefix(cells[0], "---") {
			continue
		}
		rows++
		for _, c := range cells {
			if n := len([]rune(c)); n > maxSecurityCell {
				at("a cell of %d characters (at most %d): %.60s…", n, maxSecurityCell, c)
			}
		}
		if cells[2] != "—" && !onlyNames.MatchString(cells[2]) {
			at("the Test cell holds more than test names: %q", cells[2])
		}
		for _, m := range testRef.FindAllStringSubmatch(cells[2], -1) {
			if problem := testRefProblem(funcs, m[1], m[2]); problem != "" {
				at("%s", problem)
			}
		}
		if cells[2] != "—" && len(testRef.FindAllString(cells[2], -1)) != strings.Count(cells[2], "`")/2 {
			at("the Test cell names something that is not a test: %q", cells[2])
		}
	}
	if rows < 50 {
		t.Errorf("%s has %d attack rows; the page lost its tables?", page, rows)
	}
}

// maxPerformancePage is the size of docs/performance.md: the current
// figures with their commands, not their history.
const maxPerformancePage = 20 << 10

// TestRepoPerformancePage checks docs/performance.md: at most 20 KB, and
// every section that states a figure gives a command to reproduce it (a
// sh code block, or a command in a code span beside the figure).
func TestRepoPerformancePage(t *testing.T) {
	const page = "docs/performance.md"
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > maxPerformancePage {
		t.Errorf("%s is %d bytes, over %d: keep the current figures; history belongs in git", page, len(raw), maxPerformancePage)
	}
	sections := strings.Split(string(raw), "\n## ")
	if len(sections) < 5 {
		t.Fatalf("%s has %d sections", page, len(sections)-1)
	}
	command := regexp.MustCompile("```sh\n|`(?:go (?:test|run)|cd bench|bench/)[^`]*`")
	for _, s := range sections[1:] {
		title, _, _ := strings.Cut(s, "\n")
		if !command.MatchString(s) {
			t.Errorf("%s, %q: no command reproduces its figures", page, title)
		}
	}
}

// mdLink is a Markdown inline link or image: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// headingSlug is GitHub's anchor for a heading: lower case, spaces to
// hyphens, punctuation other than - and _ dropped.
func headingSlug(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestRepoDocLinks checks every relative link of the repository's own
// Markdown (outside node_modules and testdata): its file or directory
// exists, and an #anchor into a Markdown file names one of its headings.
func TestRepoDocLinks(t *testing.T) {
	var pages []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]map[string]bool{}
	anchorsOf := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		a := map[string]bool{}
		raw, err := os.ReadFile(page)
		if err == nil {
			inFence := false
			for _, line := range strings.Split(string(raw), "\n") {
				if strings.HasPrefix(line, "```") {
					inFence = !inFence
				}
				if !inFence && strings.HasPrefix(line, "#") {
					a[headingSlug(strings.TrimLeft(line, "#"))] = true
				}
			}
		}
		anchors[page] = a
		return a
	}
	for _, page := range pages {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := regexp.MustCompile("(?s)```.*?```").ReplaceAllString(string(raw), "")
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s links to %s, which does not exist", page, target)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !anchorsOf(path)[anchor] {
				t.Errorf("%s links to %s: no heading has the anchor #%s", page, target, anchor)
			}
		}
	}
}

// The commit convention (CONTRIBUTING.md): a subject of at most 72
// characters. History before subjectCutoff (the last commit before the
// convention) has paragraph-long subjects and is not checked.
const (
	subjectCutoff     = "14f5c2373e0d5fdbff59b83cadbda0aaf10c5dcb"
	maxSubject        = 72
	subjectsChecked   = 30
	subjectExceptions = 3
)

// TestRepoCommitSubjects checks the last 30 commit subjects after
// subjectCutoff on the checked-out branch: at most three are over 72
// characters. It skips outside a git checkout or in a clone without the
// cut-off commit (a shallow one).
func TestRepoCommitSubjects(t *testing.T) {
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	if err := exec.Command(git, "cat-file", "-e", subjectCutoff+"^{commit}").Run(); err != nil {
		t.Skipf("not a git checkout holding %.7s (the cut-off of the subject rule)", subjectCutoff)
	}
	out, err := exec.Command(git, "log", "--format=%h %s", "-n", strconv.Itoa(subjectsChecked), subjectCutoff+"..HEAD").Output()
	if err != nil {
		t.Fatalf("git log: %v", err)
	}
	var long []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		hash, subject, _ := strings.Cut(line, " ")
		if n := len([]rune(subject)); n > maxSubject {
			long = append(long, fmt.Sprintf("%s (%d characters): %.72s…", hash, n, subject))
		}
	}
	if len(long) > subjectExceptions {
		t.Errorf("%d of the last %d commit subjects are over %d characters (at most %d may be); "+
			"move the detail to the body (CONTRIBUTING.md):\n%s",
			len(long), subjectsChecked, maxSubject, subjectExceptions, strings.Join(long, "\n"))
	}
}

// maxArchitecturePage is the size of ARCHITECTURE.md: the route of a call,
// the package table and the hop lists, without the story of each.
const maxArchitecturePage = 20 << 10

// TestRepoArchitecturePage checks that ARCHITECTURE.md stays at most 20 KB
// and opens with the route of a tools/call in ten numbered steps.
func TestRepoArchitecturePage(t *testing.T) {
	raw, err := os.ReadFile("ARCHITECTURE.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) > maxArchitecturePage {
		t.Errorf("ARCHITECTURE.md is %d bytes, over %d: shorten the prose, not the rules", len(raw), maxArchitecturePage)
	}
	sections := strings.Split(string(raw), "\n## ")
	if len(sections) < 2 || !strings.HasPrefix(sections[1], "A tools/call in ten steps\n") {
		t.Fatal(`ARCHITECTURE.md's first section is not "A tools/call in ten steps"`)
	}
	steps := regexp.MustCompile(`(?m)^\d+\. `).FindAllString(sections[1], -1)
	if len(steps) != 10 {
		t.Errorf("ARCHITECTURE.md's route has %d steps, want 10", len(steps))
	}
}
