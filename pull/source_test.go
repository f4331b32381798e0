package pull_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/wasmcp/wasmcp/pull"
	"github.com/wasmcp/wasmcp/pull/oci"
	"github.com/wasmcp/wasmcp/pull/signing"
)

// memSource is a registry in memory (a pull.Source): tags, manifests and
// blobs by digest, signatures by manifest digest. The tests publish to it
// what a registry, honest or not, would serve.
type memSource struct {
	tags  map[string]string // tag → manifest digest
	blobs map[digest.Digest][]byte
	sigs  map[string][]oci.Signature
}

func newMemSource() *memSource {
	return &memSource{tags: map[string]string{}, blobs: map[digest.Digest][]byte{}, sigs: map[string][]oci.Signature{}}
}

func (m *memSource) Resolve(_ context.Context, ref oci.Ref) (string, error) {
	if _, err := digest.Parse(ref.Reference.Reference); err == nil {
		return ref.Reference.Reference, nil
	}
	d, ok := m.tags[ref.Reference.Reference]
	if !ok {
		return "", fmt.Errorf("tag %q not found", ref.Reference.Reference)
	}
	return d, nil
}

func (m *memSource) FetchManifest(_ context.Context, _ oci.Ref, dgst string) ([]byte, error) {
	b, ok := m.blobs[digest.Digest(dgst)]
	if !ok {
		return nil, fmt.Errorf("manifest %s not found", dgst)
	}
	return b, nil
}

func (m *memSource) FetchBlob(_ context.Context, _ oci.Ref, what string, d ocispec.Descriptor, _ int64) ([]byte, error) {
	b, ok := m.blobs[d.Digest]
	if !ok {
		return nil, fmt.Errorf("%s %s not found", what, d.Digest)
	}
	return b, nil
}

func (m *memSource) Signatures(_ context.Context, _ oci.Ref, dgst string) ([]oci.Signature, error) {
	return m.sigs[dgst], nil
}

func (m *memSource) MaxModule() int64 { return oci.DefaultMaxModule }

// publish stores a module (its bytes made distinct by version) with
// policy under tag and returns the manifest digest; with a private key,
// the digest is signed as wasmcp push --sign signs it.
func (m *memSource) publish(t *testing.T, tag, version, policy string, key []byte) string {
	t.Helper()
	mod := append([]byte("\x00asm\x01\x00\x00\x00"), version...)
	cfg := []byte(`{"architecture":"wasm","os":"wasip1"}`)
	layers := []ocispec.Descriptor{{MediaType: oci.MediaTypeWasm, Digest: digest.FromBytes(mod), Size: int64(len(mod))}}
	m.blobs[digest.FromBytes(mod)], m.blobs[digest.FromBytes(cfg)] = mod, cfg
	if policy != "" {
		p := []byte(policy)
		m.blobs[digest.FromBytes(p)] = p
		layers = append(layers, ocispec.Descriptor{MediaType: oci.MediaTypePolicy, Digest: digest.FromBytes(p), Size: int64(len(p))})
	}
	man, err := json.Marshal(ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		Config: ocispec.Descriptor{MediaType: oci.MediaTypeWasmConfig, Digest: digest.FromBytes(cfg), Size: int64(len(cfg))}, Layers: layers})
	if err != nil {
		t.Fatal(err)
	}
	d := digest.FromBytes(man)
	m.blobs[d] = man
	m.tags[tag] = d.String()
	if key != nil {
		b, err := signing.SignFor(d.String(), "r.example/tools/echo", key)
		if err != nil {
			t.Fatal(err)
		}
		m.sigs[d.String()] = append(m.sigs[d.String()], oci.Signature{Bundle: b, Source: "referrer"})
	}
	return d.String()
}

// keyPair writes a new key pair as PREFIX.key and PREFIX.pub and returns
// the private key.
func keyPair(t *testing.T, prefix string) []byte {
	t.Helper()
	if err := signing.WriteKeyPair(prefix, ""); err != nil {
		t.Fatal(err)
	}
	priv, err := os.ReadFile(prefix + ".key")
	if err != nil {
		t.Fatal(err)
	}
	return priv
}

// pullReq is a pull of r.example/tools/echo:TAG from src into dir.
func pullReq(t *testing.T, src *memSource, dir, tag string, sg pull.Signer) pull.Request {
	t.Helper()
	ref, err := oci.ParseRef("r.example/tools/echo:" + tag)
	if err != nil {
		t.Fatal(err)
	}
	cache, err := pull.OpenCache(filepath.Join(t.TempDir(), "oci"), 0)
	if err != nil {
		t.Fatal(err)
	}
	return pull.Request{Dir: dir, Ref: ref, Source: src, Cache: cache, Signer: sg}
}
