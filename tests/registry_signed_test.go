package tests

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/wasmcp/wasmcp/pull/oci"
)

// TestRegistrySigned: push --sign, pull --key, serve; then refused: the
// signature's blob swapped in the registry's storage, a signature by
// another key, and a genuine signature of another digest attached to this
// one.
func TestRegistrySigned(t *testing.T) {
	t.Parallel()
	e := newRegEnv(t, false)
	keys := t.TempDir()
	if out, err := runWasmcp("keygen", "--out", filepath.Join(keys, "me")); err != nil {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	if out, err := runWasmcp("keygen", "--out", filepath.Join(keys, "other")); err != nil {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	d1 := e.push(t, "v1", "", "tools/reload:v1", "--sign", filepath.Join(keys, "me.key"))
	pub := filepath.Join(keys, "me.pub")
	out := e.run(t, true, "pull", e.reg.Addr+"/tools/reload:v1", "-o", e.tools, "--key", pub, "--cache-dir", e.cache)
	if !strings.Contains(out, d1) || !strings.Contains(out, "signer") {
		t.Fatalf("pull: %s", out)
	}
	s := e.serve(t)
	c := newStdioClient(t, s)
	if got := callVersion(t, c); !strings.Contains(got, "version v1") {
		t.Fatalf("served: %s", got)
	}
	s.Stdin.Close()
	<-s.Done()

	// An Ed25519 key (keygen --algorithm ed25519): push --sign writes a
	// DSSE statement naming the digest; pull --key verifies it; the
	// ECDSA key does not.
	if out, err := runWasmcp("keygen", "--algorithm", "ed25519", "--out", filepath.Join(keys, "ed")); err != nil {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	ed := e.push(t, "v2", "", "tools/reload:ed", "--sign", filepath.Join(keys, "ed.key"))
	out = e.run(t, true, "pull", e.reg.Addr+"/tools/reload:ed", "-o", t.TempDir(), "--key", filepath.Join(keys, "ed.pub"), "--cache-dir", t.TempDir())
	if !strings.Contains(out, ed) || !strings.Contains(out, "signer  key sha256:") {
		t.Fatalf("pull of the Ed25519-signed module: %s", out)
	}
	if out := e.run(t, false, "pull", e.reg.Addr+"/tools/reload:ed", "-o", t.TempDir(), "--key", pub, "--cache-dir", t.TempDir()); !strings.Contains(out, "signature check failed") {
		t.Fatalf("the Ed25519 signature checked against the ECDSA key: %s", out)
	}

	pullFresh := func() string {
		return e.run(t, false, "pull", e.reg.Addr+"/tools/reload:v1", "-o", t.TempDir(), "--key", pub, "--cache-dir", t.TempDir())
	}
	// Signed by another key: refused.
	e.push(t, "v2", "", "tools/reload:other", "--sign", filepath.Join(keys, "other.key"))
	if out := e.run(t, false, "pull", e.reg.Addr+"/tools/reload:other", "-o", t.TempDir(), "--key", pub, "--cache-dir", t.TempDir()); !strings.Contains(out, "signature check failed") {
		t.Fatalf("another key: %s", out)
	}
	// A genuine signature of another digest attached to v2's manifest.
	c2, err := oci.New(oci.Options{DockerConfig: e.dockerCfg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d2 := e.push(t, "v2", "", "tools/reload:v2")
	ref, _ := oci.ParseRef(e.reg.Addr + "/tools/reload:v2")
	sigs, err := c2.Signatures(ctx, ref, d1)
	if err != nil || len(sigs) == 0 {
		t.Fatalf("signatures of v1: %v %v", sigs, err)
	}
	dd, _ := oci.ParseDigest(d2)
	man, err := c2.FetchManifest(ctx, ref, d2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c2.PushSignature(ctx, ref, ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: dd, Size: int64(len(man))}, sigs[0].Bundle); err != nil {
		t.Fatal(err)
	}
	if out := e.run(t, false, "pull", e.reg.Addr+"/tools/reload:v2", "-o", t.TempDir(), "--key", pub, "--cache-dir", t.TempDir()); !strings.Contains(out, "signature check failed") {
		t.Fatalf("a signature of another digest: %s", out)
	}
	// The signature's blob swapped in storage (one byte): refused.
	bundle := e.reg.BlobPath(digestOf(sigs[0].Bundle))
	b, err := os.ReadFile(bundle)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0x01
	if err := os.WriteFile(bundle, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if out := pullFresh(); !strings.Contains(out, "check failed") {
		t.Fatalf("a tampered signature: %s", out)
	}
}

// TestRegistryKeyRevokedExpired: the key of a served tool listed in the
// lock's revoked_keys stops it being served at the next SIGHUP (logged
// check=signature, "revoked"); a key past its key_not_after is refused at
// pull ("expired"), one before its key_not_before too ("not yet valid").
func TestRegistryKeyRevokedExpired(t *testing.T) {
	t.Parallel()
	e := newRegEnv(t, false)
	keys := t.TempDir()
	if out, err := runWasmcp("keygen", "--out", filepath.Join(keys, "me")); err != nil {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	e.push(t, "v1", "", "tools/reload:v1", "--sign", filepath.Join(keys, "me.key"))
	pub := filepath.Join(keys, "me.pub")
	e.run(t, true, "pull", e.reg.Addr+"/tools/reload:v1", "-o", e.tools, "--key", pub, "--cache-dir", e.cache)
	lockPath := filepath.Join(e.tools, "wasmcp.lock")
	lock, err := os.ReadFile(lockPath)
	if err != nil {
		t.Fatal(err)
	}
	fp := regexp.MustCompile(`signer = "key (sha256:[0-9a-f]{64})"`).FindSubmatch(lock)
	if fp == nil {
		t.Fatalf("no signer in the lock:\n%s", lock)
	}
	s := e.serve(t)
	c := newStdioClient(t, s)
	if got := callVersion(t, c); !strings.Contains(got, "version v1") {
		t.Fatalf("served: %s", got)
	}
	// Revoked: the running tool stops being served on SIGHUP.
	if err := os.WriteFile(lockPath, append([]byte(fmt.Sprintf("revoked_keys = [%q]\n", fp[1])), lock...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.Cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitNote(t, c, "notifications/tools/list_changed", 30*time.Second)
	if got := callVersion(t, c); !strings.Contains(got, "-32602") {
		t.Fatalf("a tool signed by a revoked key is still served: %s", got)
	}
	logs := s.Stderr.String()
	if !strings.Contains(logs, "pulled tool refused; not served") || !strings.Contains(logs, "check=signature") || !strings.Contains(logs, "signature refused (revoked)") || !strings.Contains(logs, string(fp[1])) {
		t.Fatalf("the revocation is not logged as such:\n%s", logs)
	}
	if out := e.run(t, false, "pull", e.reg.Addr+"/tools/reload:v1", "-o", e.tools, "--cache-dir", e.cache); !strings.Contains(out, "signature refused (revoked)") {
		t.Fatalf("pull with the key revoked: %s", out)
	}
	// Expired, and not yet valid: refused at pull, each saying which.
	for _, c := range []struct{ key, when, want string }{
		{"key_not_after", "2020-01-01T00:00:00Z", "signature refused (expired): the key " + string(fp[1]) + " expired at 2020-01-01T00:00:00Z"},
		{"key_not_before", "2999-01-01T00:00:00Z", "signature refused (not yet valid)"},
	} {
		dir := t.TempDir()
		writeLock(t, dir, "reload", e.reg.Addr+"/tools/reload:v1", "sha256:"+strings.Repeat("0", 64), fmt.Sprintf("key = %q\n%s = %q\n", pub, c.key, c.when))
		if out := e.run(t, false, "pull", e.reg.Addr+"/tools/reload:v1", "-o", dir, "--cache-dir", t.TempDir()); !strings.Contains(out, c.want) {
			t.Fatalf("%s: %s", c.key, out)
		}
	}
}
