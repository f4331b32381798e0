package oci_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"oras.land/oras-go/v2/registry/remote/auth"

	"github.com/wasmcp/wasmcp/internal/testkit/registrytest"
	"github.com/wasmcp/wasmcp/pull/oci"
)

// wasmHeader is the smallest valid module: a module needs no more to be a
// layer (this package never compiles it).
var wasmHeader = []byte("\x00asm\x01\x00\x00\x00")

func TestPushPullSignaturesRealRegistry(t *testing.T) {
	for _, withAuth := range []bool{false, true} {
		name := "open"
		if withAuth {
			name = "htpasswd"
		}
		t.Run(name, func(t *testing.T) {
			reg := registrytest.Start(t, withAuth)
			opts := oci.Options{DockerConfig: emptyDockerConfig(t)}
			if withAuth {
				opts.Credential = auth.StaticCredential(reg.Addr, auth.Credential{Username: reg.User, Password: reg.Password})
			}
			c, err := oci.New(opts)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			ref, err := oci.ParseRef(reg.Addr + "/tools/echo:v1")
			if err != nil {
				t.Fatal(err)
			}
			policy := []byte("timeout = \"5s\"\n")
			desc, err := c.Push(ctx, ref, "echo", wasmHeader, policy)
			if err != nil {
				t.Fatal(err)
			}
			dgst, err := c.Resolve(ctx, ref)
			if err != nil {
				t.Fatal(err)
			}
			if dgst != desc.Digest.String() {
				t.Fatalf("resolved %s, pushed %s", dgst, desc.Digest)
			}
			a, err := c.Pull(ctx, ref, dgst)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Module, wasmHeader) || !bytes.Equal(a.Policy, policy) {
				t.Fatalf("pulled %q, %q", a.Module, a.Policy)
			}
			sigs, err := c.Signatures(ctx, ref, dgst)
			if err != nil || len(sigs) != 0 {
				t.Fatalf("signatures of an unsigned module: %v, %v", sigs, err)
			}
			bundle := []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`)
			if _, err := c.PushSignature(ctx, ref, desc, bundle); err != nil {
				t.Fatal(err)
			}
			sigs, err = c.Signatures(ctx, ref, dgst)
			if err != nil || len(sigs) != 1 || !bytes.Equal(sigs[0].Bundle, bundle) {
				t.Fatalf("signatures: %+v, %v", sigs, err)
			}
			// distribution 2.8 has no referrers API: oras-go kept the index
			// under the referrers tag schema's tag.
			if _, err := os.Stat(reg.TagLink("tools/echo", "sha256-"+strings.TrimPrefix(dgst, "sha256:"))); err != nil {
				t.Fatalf("no referrers tag: %v", err)
			}
		})
	}
}

func TestAuthRequired(t *testing.T) {
	reg := registrytest.Start(t, true)
	c, err := oci.New(oci.Options{DockerConfig: emptyDockerConfig(t)})
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := oci.ParseRef(reg.Addr + "/tools/echo:v1")
	_, err = c.Push(context.Background(), ref, "echo", wasmHeader, nil)
	if err == nil || !strings.Contains(err.Error(), "docker login "+reg.Addr) {
		t.Fatalf("push without credentials: %v", err)
	}
}

// TestDockerConfigCredentials reads the credentials from a Docker
// configuration file, as docker login writes it, and never shows them.
func TestDockerConfigCredentials(t *testing.T) {
	reg := registrytest.Start(t, true)
	cfg := writeDockerConfig(t, reg.Addr, reg.User, reg.Password)
	c, err := oci.New(oci.Options{DockerConfig: cfg})
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := oci.ParseRef(reg.Addr + "/tools/echo:v1")
	if _, err := c.Push(context.Background(), ref, "echo", wasmHeader, nil); err != nil {
		t.Fatal(err)
	}
	// A wrong password: the error must not carry it.
	bad := writeDockerConfig(t, reg.Addr, reg.User, "hunter2-wrong-password")
	c, _ = oci.New(oci.Options{DockerConfig: bad})
	_, err = c.Resolve(context.Background(), ref)
	if err == nil {
		t.Fatal("a wrong password was accepted")
	}
	if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), reg.Password) {
		t.Fatalf("the error shows a password: %v", err)
	}
}
