package check

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Status is a check's outcome.
type Status string

// The outcomes of a check.
const (
	OK   Status = "ok"
	Fail Status = "FAIL"
	Skip Status = "skip"
)

// Line is one check and its outcome.
type Line struct {
	Status Status `json:"status"`
	// Check names what was checked, e.g. "tool echo: answers".
	Check string `json:"check"`
	// Detail says what was seen: the arguments used, why it failed or
	// why it was skipped.
	Detail string `json:"detail,omitempty"`
}

// Report is the outcome of checking one module.
type Report struct {
	// File is the module file checked.
	File string `json:"file"`
	// Module is the module's name ("" when it did not load).
	Module string `json:"module,omitempty"`
	// Lines are the checks in the order they ran.
	Lines []Line `json:"checks"`
}

func (r *Report) add(s Status, check, format string, a ...any) {
	r.Lines = append(r.Lines, Line{Status: s, Check: check, Detail: fmt.Sprintf(format, a...)})
}

// Failed reports whether any check failed.
func (r *Report) Failed() bool {
	_, failed, _ := r.Counts()
	return failed > 0
}

// Counts returns how many checks passed, failed and were skipped.
func (r *Report) Counts() (ok, failed, skipped int) {
	for _, l := range r.Lines {
		switch l.Status {
		case OK:
			ok++
		case Fail:
			failed++
		case Skip:
			skipped++
		}
	}
	return
}

// WriteText writes the report for a reader: a heading, one line per check
// (status, check, detail) and a summary.
func (r *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	if r.Module != "" {
		fmt.Fprintf(&b, "wasmcp check %s (module %s)\n", r.File, r.Module)
	} else {
		fmt.Fprintf(&b, "wasmcp check %s\n", r.File)
	}
	for _, l := range r.Lines {
		fmt.Fprintf(&b, "%-4s  %s", l.Status, l.Check)
		if l.Detail != "" {
			fmt.Fprintf(&b, ": %s", oneLine(l.Detail))
		}
		b.WriteByte('\n')
	}
	ok, failed, skipped := r.Counts()
	verdict := "passed"
	if failed > 0 {
		verdict = "FAILED"
	}
	fmt.Fprintf(&b, "%s: %d ok, %d failed, %d skipped\n", verdict, ok, failed, skipped)
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteJSON writes the report as one JSON object: file, module, passed,
// the counts and the checks.
func (r *Report) WriteJSON(w io.Writer) error {
	ok, failed, skipped := r.Counts()
	out := struct {
		*Report
		Passed  bool `json:"passed"`
		OK      int  `json:"ok"`
		Failed  int  `json:"failed"`
		Skipped int  `json:"skipped"`
	}{r, failed == 0, ok, failed, skipped}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

// LoadFailed is the report of a module file that could not be loaded as
// serve would load it.
func LoadFailed(file string, err error) *Report {
	r := &Report{File: file}
	r.add(Fail, "load", "%v", err)
	return r
}

// oneLine keeps a detail on its line.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}
