package oci_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/wasmcp/wasmcp/pull/oci"
)

// TestSignatureReferrersPages: a registry whose referrers API pages its
// answer, the signature on the first page and then page after page of
// referrers of another artifact type (attestations, SBOMs: anyone who can
// push to the repository can add them, and the registry picks the page
// size). oras-go stops after ReferrerListMaxPages with an error, which
// used to fail the whole listing - the tool refused, with its good
// signature already in hand. The referrers read so far are used; the
// page count stays bounded.
func TestSignatureReferrersPages(t *testing.T) {
	subject := digest.FromString("the module's manifest")
	bundle := []byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`)
	sigMan, _ := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		ArtifactType: oci.MediaTypeSigstoreBundle, Config: ocispec.DescriptorEmptyJSON,
		Layers:  []ocispec.Descriptor{{MediaType: oci.MediaTypeSigstoreBundle, Digest: digest.FromBytes(bundle), Size: int64(len(bundle))}},
		Subject: &ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: subject, Size: 1}})
	var pages atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch {
		case p == "/v2/":
		case strings.HasPrefix(p, "/v2/tools/echo/referrers/"):
			n := pages.Add(1)
			idx := ocispec.Index{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageIndex}
			if n == 1 {
				idx.Manifests = append(idx.Manifests, ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest,
					ArtifactType: oci.MediaTypeSigstoreBundle, Digest: digest.FromBytes(sigMan), Size: int64(len(sigMan))})
			}
			for i := range 10 {
				idx.Manifests = append(idx.Manifests, ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest,
					ArtifactType: "application/vnd.in-toto+json", Digest: digest.FromString(fmt.Sprint(n, i)), Size: 100})
			}
			w.Header().Set("Content-Type", ocispec.MediaTypeImageIndex)
			w.Header().Set("Link", fmt.Sprintf(`</v2/tools/echo/referrers/%s?page=%d>; rel="next"`, subject, n+1))
			json.NewEncoder(w).Encode(idx)
		case p == "/v2/tools/echo/manifests/"+digest.FromBytes(sigMan).String():
			w.Header().Set("Content-Type", ocispec.MediaTypeImageManifest)
			w.Header().Set("Docker-Content-Digest", digest.FromBytes(sigMan).String())
			w.Write(sigMan)
		case p == "/v2/tools/echo/blobs/"+digest.FromBytes(bundle).String():
			w.Write(bundle)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c, err := oci.New(oci.Options{DockerConfig: emptyDockerConfig(t)})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := oci.ParseRef(strings.TrimPrefix(srv.URL, "http://") + "/tools/echo:v1")
	if err != nil {
		t.Fatal(err)
	}
	sigs, err := c.Signatures(context.Background(), ref, subject.String())
	if err != nil {
		t.Fatalf("the listing failed with the signature in hand: %v", err)
	}
	var good, noted bool
	for _, s := range sigs {
		good = good || string(s.Bundle) == string(bundle)
		noted = noted || strings.Contains(s.Skipped, "the rest not read")
	}
	if !good || !noted || len(sigs) != 2 {
		t.Fatalf("signatures %+v", sigs)
	}
	if n := pages.Load(); n > 4 {
		t.Fatalf("%d pages read: the listing is not bounded", n)
	}
}
