package oci_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/wasmcp/wasmcp/internal/oci"
	"github.com/wasmcp/wasmcp/internal/testkit/registrytest"
)

// TestCosignSigTag: a signature stored the way cosign stores it for
// registries without referrers (a manifest tagged sha256-<hex>.sig whose
// simple-signing layers carry the signature in an annotation) is found
// beside the referrers.
func TestCosignSigTag(t *testing.T) {
	reg := registrytest.Start(t, false)
	c, err := oci.New(oci.Options{DockerConfig: emptyDockerConfig(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ref, _ := oci.ParseRef(reg.Addr + "/tools/echo:v1")
	desc, err := c.Push(ctx, ref, "echo", wasmHeader, nil)
	if err != nil {
		t.Fatal(err)
	}
	repo, err := remote.NewRepository(reg.Addr + "/tools/echo")
	if err != nil {
		t.Fatal(err)
	}
	repo.PlainHTTP = true
	payload := []byte(`{"critical":{"identity":{"docker-reference":"` + reg.Addr + `/tools/echo"},"image":{"docker-manifest-digest":"` + desc.Digest.String() + `"},"type":"cosign container image signature"},"optional":null}`)
	pd := ocispec.Descriptor{MediaType: oci.MediaTypeCosignSimpleSigning, Digest: digest.FromBytes(payload), Size: int64(len(payload)),
		Annotations: map[string]string{"dev.cosignproject.cosign/signature": "MEUCIQDfake=="}}
	cfg := []byte(`{}`)
	cd := ocispec.Descriptor{MediaType: "application/vnd.oci.image.config.v1+json", Digest: digest.FromBytes(cfg), Size: int64(len(cfg))}
	for _, b := range []struct {
		d ocispec.Descriptor
		b []byte
	}{{pd, payload}, {cd, cfg}} {
		if err := repo.Push(ctx, b.d, bytes.NewReader(b.b)); err != nil {
			t.Fatal(err)
		}
	}
	m, _ := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest, Config: cd, Layers: []ocispec.Descriptor{pd}})
	md := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(m), Size: int64(len(m))}
	tag := "sha256-" + desc.Digest.Encoded() + ".sig"
	if err := repo.PushReference(ctx, md, bytes.NewReader(m), tag); err != nil {
		t.Fatal(err)
	}
	sigs, err := c.Signatures(ctx, ref, desc.Digest.String())
	if err != nil {
		t.Fatal(err)
	}
	if len(sigs) != 1 || !bytes.Equal(sigs[0].Payload, payload) || sigs[0].Sig != "MEUCIQDfake==" || !strings.Contains(sigs[0].Source, tag) {
		t.Fatalf("signatures: %+v", sigs)
	}
}
