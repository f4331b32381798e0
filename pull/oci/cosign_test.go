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

	"github.com/wasmcp/wasmcp/internal/testkit/registrytest"
	"github.com/wasmcp/wasmcp/pull/oci"
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
	r := pushRaw(t, reg, c)
	ref, desc, repo := r.ref, r.desc, r.repo
	payload := []byte(`{"critical":{"identity":{"docker-reference":"` + reg.Addr + `/tools/echo"},"image":{"docker-manifest-digest":"` + desc.Digest.String() + `"},"type":"cosign container image signature"},"optional":null}`)
	pd := r.blob(oci.MediaTypeCosignSimpleSigning, payload, map[string]string{"dev.cosignproject.cosign/signature": "MEUCIQDfake=="})
	cd := r.blob("application/vnd.oci.image.config.v1+json", []byte(`{}`), nil)
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
