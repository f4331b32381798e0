package wasmcp_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxTrackedSize is the largest file the repository tracks without listing
// it in deliberateBinaries: built programs (the cause of the rule — a 3 MB
// build and an 18 MB mcpload were once committed at the root) are larger,
// and no source file comes near it.
const maxTrackedSize = 1 << 20

// deliberateBinaries lists, by name, the tracked files that are binaries on
// purpose, with the reason each is committed. Every one is a WebAssembly
// module that a test or a benchmark reads as it is, built from a source that
// sits beside it, and none is a native executable. Adding a file here is a
// decision to review, not a way to quiet the test.
var deliberateBinaries = map[string]string{
	// The C example guest, committed so the Go tests and benchmarks can
	// serve it without a C tool chain; examples/c checks it is what
	// wordcount.c builds (build.sh beside it).
	"examples/c/wordcount/wordcount.wasm": "C example, built by examples/c/wordcount/build.sh",
	"guest-sdk/js/quickjs/runner.wasm":    "the JavaScript runner, built by guest-sdk/js/quickjs/build.sh",
	// Hand-written guests for the hostile battery (tests/hostile): each is
	// wat2wasm of the .wat beside it.
	"tests/hostile/guests/gated.wasm":       "wat2wasm gated.wat",
	"tests/hostile/guests/hostile.wasm":     "wat2wasm hostile.wat",
	"tests/hostile/guests/unstoppable.wasm": "wat2wasm unstoppable.wat",
	// Small hand-written guests for the end-to-end tests, the registry's
	// watcher test and the abuse battery: wat2wasm of the .wat beside each.
	"tests/testdata/slowstart/slowstart.wasm": "wat2wasm slowstart.wat",
	"tests/testdata/small/small.wasm":         "wat2wasm small.wat",
}

// nativeMagic holds the first bytes of the executable formats a Go or C
// build writes: ELF, Mach-O (32- and 64-bit, both byte orders, and the
// universal binary), and PE (the MZ of its DOS stub).
var nativeMagic = [][]byte{
	{0x7f, 'E', 'L', 'F'},
	{0xfe, 0xed, 0xfa, 0xce}, {0xce, 0xfa, 0xed, 0xfe},
	{0xfe, 0xed, 0xfa, 0xcf}, {0xcf, 0xfa, 0xed, 0xfe},
	{0xca, 0xfe, 0xba, 0xbe},
	{'M', 'Z'},
}

// wasmMagic opens every WebAssembly binary module.
var wasmMagic = []byte{0x00, 'a', 's', 'm'}

// TestRepoTracksNoBuiltFiles fails when git tracks a built file: a native
// executable (by its magic bytes), a file with the executable bit that is
// not a script (no #! line), a WebAssembly module or any file larger than
// 1 MiB — unless it is listed by name in deliberateBinaries. It reads the
// index (git ls-files -s) for the modes and the working tree for the bytes,
// and skips outside a git checkout.
func TestRepoTracksNoBuiltFiles(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("the git command is not available")
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skip("not inside a git checkout")
	}
	root := strings.TrimSpace(string(top))
	// The module root must be the top of the checkout, so the paths git
	// prints are the paths deliberateBinaries names.
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if same, err := sameDir(root, wd); err != nil || !same {
		t.Skipf("the module root %s is not the top of the git checkout %s", wd, root)
	}
	out, err := exec.Command("git", "ls-files", "-s", "-z").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	seen := map[string]bool{}
	n := 0
	for _, rec := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		// "<mode> <object> <stage>\t<path>"
		meta, path, ok := strings.Cut(rec, "\t")
		if !ok {
			t.Fatalf("git ls-files -s printed %q", rec)
		}
		mode := strings.Fields(meta)[0]
		if mode == "120000" || mode == "160000" { // symbolic link, submodule
			continue
		}
		n++
		problems, err := builtFileProblems(filepath.Join(root, filepath.FromSlash(path)), mode == "100755")
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the working tree, not yet in the index
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if _, ok := deliberateBinaries[path]; ok {
			seen[path] = true
			continue
		}
		if len(problems) > 0 {
			t.Errorf("%s is tracked but is %s: untrack it (git rm --cached) and ignore it in .gitignore, or list it in deliberateBinaries with the reason", path, strings.Join(problems, ", "))
		}
	}
	if n == 0 {
		t.Fatal("git ls-files listed no file")
	}
	for path := range deliberateBinaries {
		if !seen[path] {
			t.Errorf("deliberateBinaries lists %s, which git does not track: drop it from the list", path)
		}
	}
}

// builtFileProblems says why the file at path looks built: its size, its
// magic bytes, or an executable bit on a file with no #! line.
func builtFileProblems(path string, executable bool) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	var problems []string
	if st.Size() > maxTrackedSize {
		problems = append(problems, "larger than 1 MiB")
	}
	head := make([]byte, 4)
	k, err := io.ReadFull(bufio.NewReader(f), head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return nil, err
	}
	head = head[:k]
	for _, m := range nativeMagic {
		if bytes.HasPrefix(head, m) {
			problems = append(problems, "a native executable")
			break
		}
	}
	if bytes.HasPrefix(head, wasmMagic) {
		problems = append(problems, "a WebAssembly module")
	}
	if executable && !bytes.HasPrefix(head, []byte("#!")) {
		problems = append(problems, "executable with no #! line")
	}
	return problems, nil
}

// sameDir reports whether a and b name one directory.
func sameDir(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(sa, sb), nil
}
