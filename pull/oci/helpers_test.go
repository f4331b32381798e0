package oci_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/wasmcp/wasmcp/internal/testkit/registrytest"
	"github.com/wasmcp/wasmcp/pull/oci"
)

// emptyDockerConfig is a Docker configuration with no credentials, so a
// test never reads the user's own.
func emptyDockerConfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(p, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeDockerConfig writes a configuration as docker login does.
func writeDockerConfig(t *testing.T, host, user, password string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.json")
	a := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	if err := os.WriteFile(p, fmt.Appendf(nil, `{"auths":{%q:{"auth":%q}}}`, host, a), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// rawRepo is the test registry's tools/echo repository with a module
// pushed by c, opened with oras-go directly so a test can write what
// wasmcp never would: junk referrers, cosign's .sig tags.
type rawRepo struct {
	t    *testing.T
	repo *remote.Repository
	ref  oci.Ref
	desc ocispec.Descriptor // the module's manifest
}

func pushRaw(t *testing.T, reg *registrytest.Server, c *oci.Client) *rawRepo {
	t.Helper()
	ref, _ := oci.ParseRef(reg.Addr + "/tools/echo:v1")
	desc, err := c.Push(context.Background(), ref, "echo", wasmHeader, nil)
	if err != nil {
		t.Fatal(err)
	}
	repo, err := remote.NewRepository(reg.Addr + "/tools/echo")
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	return &rawRepo{t: t, repo: repo, ref: ref, desc: desc}
}

// blob pushes b as a blob of mediaType (again is fine) and describes it.
func (r *rawRepo) blob(mediaType string, b []byte, annotations map[string]string) ocispec.Descriptor {
	r.t.Helper()
	d := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(b), Size: int64(len(b)), Annotations: annotations}
	if err := r.repo.Push(context.Background(), d, bytes.NewReader(b)); err != nil && !strings.Contains(err.Error(), "exists") {
		r.t.Fatal(err)
	}
	return d
}
