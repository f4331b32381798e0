package cexamples

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

func engine(t *testing.T) *host.Engine {
	t.Helper()
	e, err := host.NewEngine(host.Config{CacheDir: "-", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

func load(t *testing.T, e *host.Engine, path string) *host.Module {
	t.Helper()
	wasm, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, err := e.Load(context.Background(), "wordcount", wasm, host.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// wordCount calls word_count and returns the raw result.
func wordCount(t *testing.T, m *host.Module, args string) json.RawMessage {
	t.Helper()
	r, err := m.Call(context.Background(), abi.MethodToolsCall, []byte(`{"name":"word_count","arguments":`+args+`}`), nil)
	if err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	if r.Error != nil {
		t.Fatalf("%s: %v", args, r.Error)
	}
	return r.Result
}

type counts struct{ Words, Lines, Bytes int }

var cases = []struct {
	text string
	want counts
}{
	{"", counts{}},
	{"one", counts{1, 0, 3}},
	{"  two  words\n", counts{2, 1, 13}},
	{"a\tb\vc\fd\re\nf", counts{6, 1, 11}},
	{"héllo wörld 😀\n\n", counts{3, 2, 20}},
	{"quote \" backslash \\ nul \x00 end", counts{7, 0, 29}},
	{strings.Repeat("lorem ipsum dolor\n", 1000), counts{3000, 1000, 18000}},
}

// TestWordCount loads the committed C module through the host and checks
// its answers.
func TestWordCount(t *testing.T) {
	m := load(t, engine(t), filepath.Join("wordcount", "wordcount.wasm"))
	d := m.Description()
	if d.Name != "wordcount" || len(d.Tools) != 1 || d.Tools[0].Name != "word_count" || d.Tools[0].OutputSchema == nil {
		t.Fatalf("description %+v", d)
	}
	for _, c := range cases {
		args, _ := json.Marshal(map[string]string{"text": c.text})
		var res struct {
			Content    []struct{ Type, Text string }
			Structured counts `json:"structuredContent"`
		}
		raw := wordCount(t, m, string(args))
		if err := json.Unmarshal(raw, &res); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if res.Structured != c.want || len(res.Content) != 1 || res.Content[0].Type != "text" {
			t.Errorf("word_count(%.40q) = %s, want %+v", c.text, raw, c.want)
		}
		var fromText counts
		if err := json.Unmarshal([]byte(res.Content[0].Text), &fromText); err != nil || fromText != c.want {
			t.Errorf("text block %q does not carry the counts", res.Content[0].Text)
		}
	}
	raw := wordCount(t, m, `{"text":7}`)
	if !bytes.Contains(raw, []byte(`"isError":true`)) {
		t.Errorf("non-string text: %s, want a tool error", raw)
	}
}

// TestSameAsGo builds the Go twin (examples/wasm/wordcount) and checks that
// the two modules describe themselves identically and give identical
// answers, so that comparing them measures the language, not the work.
func TestSameAsGo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go guest")
	}
	out := filepath.Join(t.TempDir(), "wordcount.wasm")
	if err := guestbuild.Build(context.Background(), filepath.Join("..", "wasm", "wordcount"), out); err != nil {
		t.Fatal(err)
	}
	e := engine(t)
	cm := load(t, e, filepath.Join("wordcount", "wordcount.wasm"))
	gm := load(t, e, out)
	cd, _ := json.Marshal(cm.Description())
	gd, _ := json.Marshal(gm.Description())
	if !jsonEqual(cd, gd) {
		t.Errorf("descriptions differ:\nC  %s\nGo %s", cd, gd)
	}
	for _, c := range cases {
		args, _ := json.Marshal(map[string]string{"text": c.text})
		if cr, gr := wordCount(t, cm, string(args)), wordCount(t, gm, string(args)); !jsonEqual(cr, gr) {
			t.Errorf("word_count(%.40q): C %s, Go %s", c.text, cr, gr)
		}
	}
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// TestCommittedBinaryIsCurrent rebuilds each example with build.sh when
// clang-14 and wasi-libc are installed and checks that the committed .wasm
// is byte for byte what the source builds (the build is reproducible: no
// debug information, no timestamps, no paths).
func TestCommittedBinaryIsCurrent(t *testing.T) {
	if _, err := exec.LookPath("clang-14"); err != nil {
		t.Skip("clang-14 is not installed (apt-get install clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32)")
	}
	if _, err := os.Stat("/usr/lib/wasm32-wasi/libc.a"); err != nil {
		t.Skip("wasi-libc is not installed (apt-get install wasi-libc)")
	}
	for _, name := range []string{"wordcount"} {
		out := filepath.Join(t.TempDir(), name+".wasm")
		cmd := exec.Command("sh", filepath.Join(name, "build.sh"), out)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s/build.sh: %v\n%s", name, err, b)
		}
		built, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(filepath.Join(name, name+".wasm"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(built, committed) {
			t.Errorf("examples/c/%s/%s.wasm is not what its source builds (%d bytes built, %d committed): run examples/c/%s/build.sh and commit the result",
				name, name, len(built), len(committed), name)
		}
	}
}
