package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/opencontainers/go-digest"
	specs "github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/registry/remote"
)

// wasmConfig is the config blob of the working group's layout. It holds
// no time, so pushing the same module twice gives the same digest.
type wasmConfig struct {
	Architecture string   `json:"architecture"`
	OS           string   `json:"os"`
	LayerDigests []string `json:"layerDigests"`
}

// Push pushes a module (and its policy file, when policy is not nil) to
// ref's repository as the working group's layout, tags it with ref's tag
// when it has one, and returns the manifest's descriptor. name titles the
// layers (NAME.wasm, NAME.policy.toml).
func (c *Client) Push(ctx context.Context, ref Ref, name string, wasm, policy []byte) (ocispec.Descriptor, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	repo, err := c.repo(ref)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	if int64(len(wasm)) > c.opts.MaxModule {
		return ocispec.Descriptor{}, fmt.Errorf("the module is %d bytes, over the cap of %d", len(wasm), c.opts.MaxModule)
	}
	if int64(len(policy)) > MaxPolicy {
		return ocispec.Descriptor{}, fmt.Errorf("the policy file is %d bytes, over the cap of %d", len(policy), MaxPolicy)
	}
	wasmDesc := describe(MediaTypeWasm, wasm, name+".wasm")
	layers := []ocispec.Descriptor{wasmDesc}
	digests := []string{wasmDesc.Digest.String()}
	blobs := [][]byte{wasm}
	if policy != nil {
		pd := describe(MediaTypePolicy, policy, name+".policy.toml")
		layers = append(layers, pd)
		digests = append(digests, pd.Digest.String())
		blobs = append(blobs, policy)
	}
	cfg, err := json.Marshal(wasmConfig{Architecture: "wasm", OS: "wasip1", LayerDigests: digests})
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	cfgDesc := describe(MediaTypeWasmConfig, cfg, "")
	for i, b := range append(blobs, cfg) {
		d := cfgDesc
		if i < len(layers) {
			d = layers[i]
		}
		if err := pushBlob(ctx, repo, d, b); err != nil {
			return ocispec.Descriptor{}, c.wrap(ctx, "push", ref, err)
		}
	}
	m := ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		Config: cfgDesc, Layers: layers}
	return c.pushManifest(ctx, repo, ref, m)
}

// PushSignature attaches a Sigstore bundle to the manifest subject as a
// referrer (an OCI 1.1 manifest of artifact type MediaTypeSigstoreBundle
// whose subject is that manifest). On a registry without the referrers API
// oras-go keeps the referrers index under the tag sha256-<hex>.
func (c *Client) PushSignature(ctx context.Context, ref Ref, subject ocispec.Descriptor, bundle []byte) (ocispec.Descriptor, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	repo, err := c.repo(ref)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	layer := describe(MediaTypeSigstoreBundle, bundle, "")
	if err := pushBlob(ctx, repo, layer, bundle); err != nil {
		return ocispec.Descriptor{}, c.wrap(ctx, "push signature", ref, err)
	}
	empty := ocispec.DescriptorEmptyJSON
	if err := pushBlob(ctx, repo, empty, empty.Data); err != nil {
		return ocispec.Descriptor{}, c.wrap(ctx, "push signature", ref, err)
	}
	subj := ocispec.Descriptor{MediaType: subject.MediaType, Digest: subject.Digest, Size: subject.Size}
	m := ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		ArtifactType: MediaTypeSigstoreBundle, Config: ocispec.Descriptor{MediaType: empty.MediaType, Digest: empty.Digest, Size: empty.Size},
		Layers: []ocispec.Descriptor{layer}, Subject: &subj}
	return c.pushManifest(ctx, repo, ref.WithDigest(""), m)
}

// pushManifest pushes m, tagged with ref's tag when it has one.
func (c *Client) pushManifest(ctx context.Context, repo *remote.Repository, ref Ref, m ocispec.Manifest) (ocispec.Descriptor, error) {
	data, err := json.Marshal(m)
	if err != nil {
		return ocispec.Descriptor{}, err
	}
	desc := describe(ocispec.MediaTypeImageManifest, data, "")
	desc.Annotations = nil
	if tag := ref.Reference.Reference; tag != "" && ref.ValidateReferenceAsDigest() != nil {
		err = repo.PushReference(ctx, desc, bytes.NewReader(data), tag)
	} else {
		err = repo.Push(ctx, desc, bytes.NewReader(data))
	}
	if err != nil {
		return ocispec.Descriptor{}, c.wrap(ctx, "push", ref, err)
	}
	return desc, nil
}

func pushBlob(ctx context.Context, repo *remote.Repository, d ocispec.Descriptor, data []byte) error {
	ok, err := repo.Exists(ctx, d)
	if err != nil {
		return err
	}
	if ok {
		return nil
	}
	return repo.Push(ctx, d, bytes.NewReader(data))
}

func describe(mediaType string, data []byte, title string) ocispec.Descriptor {
	d := ocispec.Descriptor{MediaType: mediaType, Digest: digest.FromBytes(data), Size: int64(len(data))}
	if title != "" {
		d.Annotations = map[string]string{ocispec.AnnotationTitle: title}
	}
	return d
}
