package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/pull"
)

// TestApproveDigest: wasmcp pull printed version A and what it asks for;
// before the operator runs the approve it suggested, a running serve
// re-pulled the tag, found version B asking for more, and recorded B as
// pending. The approve the operator typed must not grant B's requests,
// which they never saw: with --digest (as pull prints it) it is refused
// and the lock is unchanged; with B's digest it approves B.
func TestApproveDigest(t *testing.T) {
	dir := t.TempDir()
	a := "sha256:" + strings.Repeat("a", 64)
	b := "sha256:" + strings.Repeat("b", 64)
	no := false
	lock := &pull.Lock{Tools: []pull.Tool{{Name: "echo", Reference: "127.0.0.1:5000/tools/echo:v1", Digest: a, Signed: &no,
		Pending: []string{`mount {"guest":"/","host":"/","mode":"rw"}`, `timeout = "20s"`}, PendingDigest: b}}}
	if err := pull.WriteLock(dir, lock); err != nil {
		t.Fatal(err)
	}
	err := cmdApprove(context.Background(), []string{"echo", "-o", dir, "--digest", a}, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), b) || !strings.Contains(err.Error(), `mount {"guest":"/"`) {
		t.Fatalf("approve --digest of the version pull showed, after serve recorded another: %v", err)
	}
	got, err := pull.ReadLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tl := got.Find("echo"); tl.Approved != nil || tl.Digest != a || tl.PendingDigest != b {
		t.Fatalf("a refused approve changed the lock: %+v", tl)
	}
	if err := cmdApprove(context.Background(), []string{"echo", "-o", dir, "--digest", b}, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	got, _ = pull.ReadLock(dir)
	if tl := got.Find("echo"); tl.Approved == nil || len(*tl.Approved) != 2 || tl.Digest != b || tl.PendingDigest != "" {
		t.Fatalf("approve --digest of the pending version: %+v", tl)
	}
}

// TestApproveListsNames: approve lists the names the approved version
// declares, escaped (a name is the publisher's text), marking the ones
// not approved before; the lock then holds them as approved.
func TestApproveListsNames(t *testing.T) {
	dir := t.TempDir()
	a := "sha256:" + strings.Repeat("a", 64)
	b := "sha256:" + strings.Repeat("b", 64)
	no := false
	approved := []string{"tool echo"}
	pending := []string{"prompt \x1b[8mhide", "tool echo"}
	lock := &pull.Lock{Tools: []pull.Tool{{Name: "echo", Reference: "127.0.0.1:5000/tools/echo:v1", Digest: a, Signed: &no,
		Approved: &[]string{}, Names: &approved, PendingDigest: b, Pending: []string{}, PendingNames: &pending}}}
	if err := pull.WriteLock(dir, lock); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := cmdApprove(context.Background(), []string{"echo", "-o", dir}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	want := "with the names it declares:\n  prompt:   \\x1b[8mhide   NEW: not approved before\n  tool:     echo\n"
	if !strings.Contains(out.String(), want) {
		t.Errorf("approve output:\n%s\nwant it to hold:\n%s", out.String(), want)
	}
	got, _ := pull.ReadLock(dir)
	if tl := got.Find("echo"); tl.Names == nil || len(*tl.Names) != 2 || tl.PendingNames != nil || tl.Digest != b {
		t.Errorf("lock after approve: %+v", tl)
	}
}
