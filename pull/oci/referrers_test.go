package oci_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/wasmcp/wasmcp/internal/testkit/registrytest"
	"github.com/wasmcp/wasmcp/pull/oci"
)

// countingTransport records the paths of the GET requests it carries.
type countingTransport struct {
	mu   sync.Mutex
	gets []string
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet {
		c.mu.Lock()
		c.gets = append(c.gets, r.URL.Path)
		c.mu.Unlock()
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (c *countingTransport) fetched(d digest.Digest) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.gets {
		if strings.HasSuffix(p, "/blobs/"+d.String()) {
			return true
		}
	}
	return false
}

// TestSignatureReferrersJunk: beside a good signature, referrers that are
// not signatures cannot block it and are not taken for one. An attestation
// (another artifact type) is not listed at all; a referrer with two
// layers, one whose bundle declares more than the 1 MiB cap (refused
// before any byte of it is fetched) and 20 more referrers (past the 16
// signatures that used to fail the whole listing) are each skipped with a
// reason, as is a cosign .sig tag whose payload is over the cap, and the
// good bundle is still returned.
func TestSignatureReferrersJunk(t *testing.T) {
	reg := registrytest.Start(t, false)
	ct := &countingTransport{}
	c, err := oci.New(oci.Options{DockerConfig: emptyDockerConfig(t), Transport: ct})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r := pushRaw(t, reg, c)
	ref, desc, repo := r.ref, r.desc, r.repo
	subject := ocispec.Descriptor{MediaType: desc.MediaType, Digest: desc.Digest, Size: desc.Size}
	blob := func(mediaType string, b []byte) ocispec.Descriptor { return r.blob(mediaType, b, nil) }
	empty := blob(ocispec.MediaTypeEmptyJSON, []byte("{}"))
	referrer := func(artifactType string, layers ...ocispec.Descriptor) digest.Digest {
		m, _ := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
			ArtifactType: artifactType, Config: empty, Layers: layers, Subject: &subject})
		md := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(m), Size: int64(len(m))}
		if err := repo.Push(ctx, md, bytes.NewReader(m)); err != nil {
			t.Fatal(err)
		}
		return md.Digest
	}
	good := []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json","good":true}`)
	if _, err := c.PushSignature(ctx, ref, desc, good); err != nil {
		t.Fatal(err)
	}
	att := referrer("application/vnd.in-toto+json", blob("application/vnd.in-toto+json", []byte(`{"_type":"https://in-toto.io/Statement/v1"}`)))
	twoLayers := referrer(oci.MediaTypeSigstoreBundle, blob(oci.MediaTypeSigstoreBundle, []byte(`{"a":1}`)), blob(oci.MediaTypeSigstoreBundle, []byte(`{"b":2}`)))
	hugeBlob := blob(oci.MediaTypeSigstoreBundle, bytes.Repeat([]byte{' '}, oci.MaxSignature+1))
	huge := referrer(oci.MediaTypeSigstoreBundle, hugeBlob)
	for i := range 20 {
		referrer(oci.MediaTypeSigstoreBundle, blob(oci.MediaTypeSigstoreBundle, fmt.Appendf(nil, `{"junk":%d}`, i)))
	}
	// A cosign .sig tag whose simple-signing layer declares more than the
	// cap: skipped too, not a failure hiding the referrers.
	hugePayload := blob(oci.MediaTypeCosignSimpleSigning, bytes.Repeat([]byte{' '}, oci.MaxSignature+2))
	hugePayload.Annotations = map[string]string{"dev.cosignproject.cosign/signature": "MEUCIQDfake=="}
	sm, _ := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest, Config: empty, Layers: []ocispec.Descriptor{hugePayload}})
	smd := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromBytes(sm), Size: int64(len(sm))}
	if err := repo.PushReference(ctx, smd, bytes.NewReader(sm), "sha256-"+desc.Digest.Encoded()+".sig"); err != nil {
		t.Fatal(err)
	}
	sigs, err := c.Signatures(ctx, ref, desc.Digest.String())
	if err != nil {
		t.Fatalf("the listing failed: %v", err)
	}
	var sawGood bool
	skipped := map[string]string{}
	for _, s := range sigs {
		if bytes.Equal(s.Bundle, good) {
			sawGood = true
		}
		if s.Skipped != "" {
			skipped[strings.TrimPrefix(s.Source, "referrer ")] = s.Skipped
		}
		if strings.Contains(s.Source, att.String()) {
			t.Errorf("the attestation was listed: %+v", s)
		}
	}
	if !sawGood {
		t.Fatalf("the good signature is not among the %d listed", len(sigs))
	}
	if len(sigs) != 24 {
		t.Errorf("%d listed, want 24 (the good one, two skipped, 20 more, the .sig tag skipped)", len(sigs))
	}
	if r := skipped["tag sha256-"+desc.Digest.Encoded()+".sig"]; !strings.Contains(r, "refused before download") {
		t.Errorf("the .sig tag: %q", r)
	}
	if ct.fetched(hugePayload.Digest) {
		t.Error("the payload over the cap was fetched")
	}
	if r := skipped[twoLayers.String()]; !strings.Contains(r, "want one layer") {
		t.Errorf("two layers: %q", r)
	}
	if r := skipped[huge.String()]; !strings.Contains(r, "over the cap of 1048576: refused before download") {
		t.Errorf("over the cap: %q", r)
	}
	if ct.fetched(hugeBlob.Digest) {
		t.Error("the bundle over the cap was fetched")
	}
}
