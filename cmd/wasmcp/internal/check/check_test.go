package check

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

// rulesWasm is testdata/guests/rules, built once: a guest that keeps the
// ABI unless its policy's BREAK variable names the rule to break.
var rulesWasm []byte

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "check-test")
	if err != nil {
		panic(err)
	}
	out := filepath.Join(dir, "rules.wasm")
	if err := guestbuild.Build(context.Background(), "testdata/guests/rules", out); err != nil {
		fmt.Fprintln(os.Stderr, "building the rules guest:", err)
		os.Exit(1)
	}
	if rulesWasm, err = os.ReadFile(out); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testCache is shared with the other packages' tests, so the guest is
// compiled once per machine.
var testCache = filepath.Join(os.TempDir(), "wasmcp-test-cache")

// checkRules loads the rules guest breaking rule mode (none when "") and
// checks it.
func checkRules(t *testing.T, mode string) *Report {
	t.Helper()
	e, err := host.NewEngine(host.Config{CacheDir: testCache, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	pol := host.Policy{Limits: host.Limits{Timeout: 5 * time.Second}}
	if mode != "" {
		pol.Env = []host.EnvVar{{Name: "BREAK", Value: mode}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	m, err := e.Load(ctx, "rules", rulesWasm, pol)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	r := Run(ctx, m, Options{File: "rules.wasm"})
	var text bytes.Buffer
	_ = r.WriteText(&text)
	t.Logf("BREAK=%q\n%s", mode, text.String())
	return r
}

// line finds the check named check in r.
func line(t *testing.T, r *Report, check string) Line {
	t.Helper()
	for _, l := range r.Lines {
		if l.Check == check {
			return l
		}
	}
	t.Fatalf("no check %q in the report", check)
	return Line{}
}

// A guest that keeps the rules passes; what cannot be generated is a skip.
func TestCheckConforming(t *testing.T) {
	r := checkRules(t, "")
	if r.Failed() {
		t.Fatal("a conforming guest failed the check")
	}
	want := map[string]Status{
		"load":                                 OK,
		"description":                          OK,
		"tools/list":                           OK,
		"tool echo: answers":                   OK,
		"tool echo: result":                    OK,
		"tool echo: nothing after the answer":  OK,
		"tool echo: notifications":             OK,
		"tool echo: invalid arguments refused": OK,
		"tool confirm: answers":                OK,
		"tool confirm: requests to the client": OK,
		"tool pattern: answers":                Skip,
		"tool later: answers":                  Skip,
		"resource rules://doc: read":           OK,
		"prompt hello: get":                    OK,
		"prompt hello: completion of who":      OK,
		"ids echoed":                           OK,
		"closed stdin":                         OK,
		"limits":                               OK,
	}
	for check, status := range want {
		if got := line(t, r, check); got.Status != status {
			t.Errorf("%s: %s (%s), want %s", check, got.Status, got.Detail, status)
		}
	}
	if d := line(t, r, "tool pattern: answers").Detail; !strings.Contains(d, "cannot generate") {
		t.Errorf("the skip says %q, want it to say it cannot generate", d)
	}
	if d := line(t, r, "prompt hello: get").Detail; !strings.Contains(d, `{"who":"Ada"}`) {
		t.Errorf("prompt get %q did not use the first completion", d)
	}
	if d := line(t, r, "tool confirm: invalid arguments refused").Detail; !strings.Contains(d, "guest never ran") {
		t.Errorf("refusal detail %q", d)
	}
	var js bytes.Buffer
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var decoded struct {
		Passed bool   `json:"passed"`
		Checks []Line `json:"checks"`
	}
	if err := json.Unmarshal(js.Bytes(), &decoded); err != nil || !decoded.Passed || len(decoded.Checks) != len(r.Lines) {
		t.Errorf("JSON report %s (%v)", js.String(), err)
	}
}

// Each broken rule fails its check, and only the checks it concerns.
func TestCheckBrokenRules(t *testing.T) {
	cases := []struct {
		mode   string
		checks []string // the checks that must fail
		detail string   // in the first one's detail
	}{
		{"after", []string{"tool echo: nothing after the answer", "tool confirm: nothing after the answer",
			"resource rules://doc: read", "prompt hello: get"}, "after its answer"},
		{"wrongid", []string{"tool echo: answers", "ids echoed", "tool confirm: answers", "tool confirm: requests to the client"}, "answered with id 424242"},
		{"badresult", []string{"tool echo: result"}, "content is not an array"},
		{"badoutput", []string{"tool echo: result"}, "does not match the outputSchema"},
		{"badnote", []string{"tool echo: notifications", "tool confirm: notifications"}, "progress is not a number"},
		{"hang", []string{"closed stdin"}, "did not end"},
		{"crashdecline", []string{"tool confirm: answers", "tool confirm: requests to the client"}, "exited with code 2"},
		{"badresource", []string{"resource rules://doc: read"}, "no contents"},
		{"badprompt", []string{"prompt hello: get"}, `role "system"`},
		{"badcomplete", []string{"prompt hello: completion of who"}, "not {completion: {values"},
	}
	for _, tc := range cases {
		t.Run(tc.mode, func(t *testing.T) {
			r := checkRules(t, tc.mode)
			if !r.Failed() {
				t.Fatal("the check passed")
			}
			must := map[string]bool{}
			for _, c := range tc.checks {
				must[c] = true
				if l := line(t, r, c); l.Status != Fail {
					t.Errorf("%s: %s, want FAIL", c, l.Status)
				}
			}
			if d := line(t, r, tc.checks[0]).Detail; !strings.Contains(d, tc.detail) {
				t.Errorf("%s says %q, want %q in it", tc.checks[0], d, tc.detail)
			}
			for _, l := range r.Lines {
				if l.Status == Fail && !must[l.Check] {
					t.Errorf("%s also failed: %s", l.Check, l.Detail)
				}
			}
		})
	}
}
