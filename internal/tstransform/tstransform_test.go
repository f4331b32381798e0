package tstransform

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func TestTransformTypeScript(t *testing.T) {
	src, err := os.ReadFile("../../examples/reference/typescript/reference.ts")
	if err != nil {
		t.Fatal(err)
	}
	js, err := Transform(context.Background(), "reference.ts", src)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), "require(\"wasmcp\")") || strings.Contains(string(js), ": string") {
		t.Fatalf("not CommonJS without types:\n%s", js)
	}
	js, err = Transform(context.Background(), "plain.js", []byte("export const a = 1;\n"))
	if err != nil || !strings.Contains(string(js), "module.exports") {
		t.Fatalf("a .js module: %q, %v", js, err)
	}
}

func TestTransformSyntaxError(t *testing.T) {
	_, err := Transform(context.Background(), "dir/bad.ts", []byte("const a: number = 1;\nconst b = ;\n"))
	var te *Error
	if !errors.As(err, &te) || len(te.Lines) != 1 || !strings.HasPrefix(te.Lines[0], "bad.ts:2:11: ") {
		t.Fatalf("err = %v, want one line bad.ts:2:11: …", err)
	}
}

// Nesting deep enough to overflow the parser's stack ends the child, not
// this process (a Go stack overflow is fatal: in process, this test
// binary would die here).
func TestTransformDeepNestingContained(t *testing.T) {
	for name, src := range map[string]string{
		"parens": strings.Repeat("(", 1<<20) + "1" + strings.Repeat(")", 1<<20),
		"not":    "x = " + strings.Repeat("!", 2<<20) + "1",
	} {
		_, err := Transform(context.Background(), name+".ts", []byte(src))
		if err == nil || !strings.Contains(err.Error(), "nesting is too deep") {
			t.Fatalf("%s: err = %v, want the nesting refused", name, err)
		}
	}
}

// A transform that uses more CPU time than its limit is ended by the
// kernel and reported as such.
func TestTransformCPULimit(t *testing.T) {
	defer func(s uint64) { cpuSeconds = s }(cpuSeconds)
	cpuSeconds = 1
	src := "x = " + strings.Repeat("1+", 2<<20) + "1"
	_, err := Transform(context.Background(), "long.ts", []byte(src))
	if err == nil {
		t.Skip("this machine transformed it within 1 s of CPU")
	}
	if !strings.Contains(err.Error(), "more than 1 s of CPU") {
		t.Fatalf("err = %v, want the CPU limit named", err)
	}
}

func BenchmarkTransformReference(b *testing.B) {
	src, err := os.ReadFile("../../examples/reference/typescript/reference.ts")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Transform(context.Background(), "reference.ts", src); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTransformInProcess(b *testing.B) {
	src, err := os.ReadFile("../../examples/reference/typescript/reference.ts")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, errs := transform("reference.ts", string(src)); errs != nil {
			b.Fatal(errs)
		}
	}
}

// TestTransformLoweringGrowsHonestCode: lowering optional chains to
// ES2017 makes an honest 450 KB script's answer about ten times its
// source; it transforms (a bound of four times cut the child's answer:
// "signal: broken pipe"), and an answer past the bound says so.
func TestTransformLoweringGrowsHonestCode(t *testing.T) {
	src := "declare const a: any;\n" + strings.Repeat("a?.b?.c?.d?.e;\n", 30000)
	js, err := Transform(context.Background(), "chains.ts", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(js) < 4*len(src) {
		t.Fatalf("%d bytes of source became %d: not the growth this test needs", len(src), len(js))
	}
	var out bytes.Buffer
	l := &limited{w: &out, left: 10}
	if _, err := l.Write(make([]byte, 11)); err == nil || !l.over {
		t.Fatalf("a write past the bound: err %v, over %v", err, l.over)
	}
}

// TestTransformCutByTheCeilingIsBusy: a transform the wall ceiling cuts —
// a busy machine, not the source — says so with ErrBusy, so that the
// registry loads the file again later instead of refusing it for good.
func TestTransformCutByTheCeilingIsBusy(t *testing.T) {
	defer SetWallCeilingForTest(time.Nanosecond)()
	_, err := Transform(context.Background(), "honest.ts", []byte("const x: number = 1;\n"))
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("a transform cut by the ceiling: %v, want ErrBusy", err)
	}
	// The caller's own end is not the machine's business.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Transform(ctx, "honest.ts", []byte("const x = 1;\n")); err == nil || errors.Is(err, ErrBusy) {
		t.Fatalf("a transform whose caller left: %v, want an error that is not ErrBusy", err)
	}
}
