package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
)

// Resolve resolves ref (a tag, or a digest) to the digest of its manifest,
// "sha256:<hex>". This is the one place a tag is read; everything after
// goes by digest.
func (c *Client) Resolve(ctx context.Context, ref Ref) (string, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	repo, err := c.repo(ref)
	if err != nil {
		return "", err
	}
	if ref.Reference.Reference == "" {
		return "", fmt.Errorf("reference %s names no tag or digest", ref)
	}
	desc, err := repo.Resolve(ctx, ref.Reference.Reference)
	if err != nil {
		return "", c.wrap(ctx, "resolve", ref, notFound(err))
	}
	if err := checkDigest(desc.Digest); err != nil {
		return "", fmt.Errorf("resolve %s: %w", ref, err)
	}
	if desc.MediaType != ocispec.MediaTypeImageManifest {
		return "", fmt.Errorf("resolve %s: media type %q is not an OCI image manifest (want %s)", ref, desc.MediaType, ocispec.MediaTypeImageManifest)
	}
	return desc.Digest.String(), nil
}

func notFound(err error) error {
	if errors.Is(err, errdef.ErrNotFound) {
		return fmt.Errorf("not found in the registry: %w", err)
	}
	return err
}

// checkDigest accepts sha256 digests only.
func checkDigest(d digest.Digest) error {
	if err := d.Validate(); err != nil {
		return fmt.Errorf("digest %q: %w", d, err)
	}
	if d.Algorithm() != digest.SHA256 {
		return fmt.Errorf("digest %q: only sha256 is accepted", d)
	}
	return nil
}

// ParseDigest checks a "sha256:<hex>" digest.
func ParseDigest(s string) (digest.Digest, error) {
	d := digest.Digest(s)
	return d, checkDigest(d)
}

// Layout is a module manifest's parts, checked: the module layer, the
// policy layer when there is one, and the config.
type Layout struct {
	Config ocispec.Descriptor
	Module ocispec.Descriptor
	Policy *ocispec.Descriptor
	// Legacy is set for the older layout (application/vnd.wasm.content.layer.v1+wasm).
	Legacy bool
}

// ParseManifest checks a manifest as a module's: an OCI image manifest
// holding exactly one module layer (application/wasm, or the older
// application/vnd.wasm.content.layer.v1+wasm), at most one policy layer,
// nothing else, and sizes within the caps (maxModule for the module).
// The working group's layout must have its config media type; the older
// layout may have any config, which is not read.
func ParseManifest(data []byte, maxModule int64) (*Layout, error) {
	var m ocispec.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	if m.MediaType != ocispec.MediaTypeImageManifest {
		return nil, fmt.Errorf("manifest media type %q is not an OCI image manifest (want %s)", m.MediaType, ocispec.MediaTypeImageManifest)
	}
	if m.SchemaVersion != 2 {
		return nil, fmt.Errorf("manifest schemaVersion %d: want 2", m.SchemaVersion)
	}
	var l Layout
	var mods int
	for i, d := range m.Layers {
		if err := checkDigest(d.Digest); err != nil {
			return nil, fmt.Errorf("layer %d: %w", i+1, err)
		}
		switch d.MediaType {
		case MediaTypeWasm, MediaTypeWasmLegacy:
			mods++
			l.Module, l.Legacy = d, d.MediaType == MediaTypeWasmLegacy
		case MediaTypePolicy:
			if l.Policy != nil {
				return nil, errors.New("manifest: two policy layers")
			}
			p := d
			l.Policy = &p
		default:
			return nil, fmt.Errorf("layer %d has media type %q: not a WebAssembly module (want %s or %s) nor a policy (%s)", i+1, d.MediaType, MediaTypeWasm, MediaTypeWasmLegacy, MediaTypePolicy)
		}
	}
	if mods != 1 {
		return nil, fmt.Errorf("manifest holds %d WebAssembly module layers: want exactly one", mods)
	}
	if err := checkDigest(m.Config.Digest); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if m.Config.MediaType != MediaTypeWasmConfig && !l.Legacy {
		return nil, fmt.Errorf("config media type %q: want %s", m.Config.MediaType, MediaTypeWasmConfig)
	}
	l.Config = m.Config
	if err := checkSize("module layer", l.Module, maxModule); err != nil {
		return nil, err
	}
	if l.Policy != nil {
		if err := checkSize("policy layer", *l.Policy, MaxPolicy); err != nil {
			return nil, err
		}
	}
	if l.Config.MediaType == MediaTypeWasmConfig {
		if err := checkSize("config", l.Config, MaxConfig); err != nil {
			return nil, err
		}
	}
	return &l, nil
}

// SizeError is a blob refused by its declared size before it is fetched.
type SizeError struct {
	What      string
	Size, Cap int64
}

func (e *SizeError) Error() string {
	if e.Size < 0 {
		return fmt.Sprintf("%s declares a negative size (%d)", e.What, e.Size)
	}
	return fmt.Sprintf("%s declares %d bytes, over the cap of %d: refused before download", e.What, e.Size, e.Cap)
}

func checkSize(what string, d ocispec.Descriptor, limit int64) error {
	if d.Size < 0 || d.Size > limit {
		return &SizeError{What: what, Size: d.Size, Cap: limit}
	}
	return nil
}

// DigestError is content that does not hash to the digest it was asked for.
type DigestError struct {
	What     string
	Want     string
	Got      string
	Size     int64
	WantSize int64
}

func (e *DigestError) Error() string {
	if e.Size != e.WantSize {
		return fmt.Sprintf("%s: %d bytes where %d were declared: refused", e.What, e.Size, e.WantSize)
	}
	return fmt.Sprintf("%s: content hashes to %s, not %s: refused", e.What, e.Got, e.Want)
}

// readVerified reads at most want.Size bytes (one more, to notice more)
// and checks size and digest.
func readVerified(what string, r io.Reader, want ocispec.Descriptor) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, want.Size+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if int64(len(data)) != want.Size {
		return nil, &DigestError{What: what, Size: int64(len(data)), WantSize: want.Size}
	}
	if got := digest.FromBytes(data); got != want.Digest {
		return nil, &DigestError{What: what, Want: want.Digest.String(), Got: got.String(), Size: want.Size, WantSize: want.Size}
	}
	return data, nil
}

// Verify checks that data is the blob d names (size and digest).
func Verify(what string, data []byte, d ocispec.Descriptor) error {
	_, err := readVerified(what, bytes.NewReader(data), d)
	return err
}

// FetchManifest fetches the manifest ref's repository holds at digest and
// checks that its bytes hash to it.
func (c *Client) FetchManifest(ctx context.Context, ref Ref, dgst string) ([]byte, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	d, err := ParseDigest(dgst)
	if err != nil {
		return nil, err
	}
	repo, err := c.repo(ref)
	if err != nil {
		return nil, err
	}
	data, err := fetchManifest(ctx, repo, d)
	return data, c.wrap(ctx, "fetch manifest of", ref, err)
}

func fetchManifest(ctx context.Context, repo *remote.Repository, d digest.Digest) ([]byte, error) {
	desc, rc, err := repo.Manifests().FetchReference(ctx, d.String())
	if err != nil {
		return nil, notFound(err)
	}
	defer rc.Close()
	if desc.Size > MaxManifest {
		return nil, &SizeError{What: "manifest", Size: desc.Size, Cap: MaxManifest}
	}
	data, err := io.ReadAll(io.LimitReader(rc, MaxManifest+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxManifest {
		return nil, &SizeError{What: "manifest", Size: int64(len(data)), Cap: MaxManifest}
	}
	if got := digest.FromBytes(data); got != d {
		return nil, &DigestError{What: "manifest", Want: d.String(), Got: got.String(), Size: int64(len(data)), WantSize: int64(len(data))}
	}
	return data, nil
}

// FetchBlob fetches the blob d of ref's repository, refusing it when its
// declared size is over limit and checking its size and digest while
// reading.
func (c *Client) FetchBlob(ctx context.Context, ref Ref, what string, d ocispec.Descriptor, limit int64) ([]byte, error) {
	if err := checkSize(what, d, limit); err != nil {
		return nil, err
	}
	if err := checkDigest(d.Digest); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	repo, err := c.repo(ref)
	if err != nil {
		return nil, err
	}
	rc, err := repo.Blobs().Fetch(ctx, d)
	if err != nil {
		return nil, c.wrap(ctx, "fetch "+what+" of", ref, notFound(err))
	}
	defer rc.Close()
	data, err := readVerified(what, rc, d)
	return data, c.wrap(ctx, "fetch "+what+" of", ref, err)
}

// MaxModule is the client's cap on a module layer.
func (c *Client) MaxModule() int64 { return c.opts.MaxModule }

// Artifact is a module pulled and verified: every byte in it hashed to
// the digest its manifest names, and the manifest to Digest.
type Artifact struct {
	Digest   string // the manifest's, sha256:<hex>
	Manifest []byte
	Layout   *Layout
	Config   []byte // nil for the older layout
	Module   []byte
	Policy   []byte // nil when the module ships none
}

// Pull fetches the module whose manifest has the given digest.
func (c *Client) Pull(ctx context.Context, ref Ref, dgst string) (*Artifact, error) {
	man, err := c.FetchManifest(ctx, ref, dgst)
	if err != nil {
		return nil, err
	}
	l, err := ParseManifest(man, c.opts.MaxModule)
	if err != nil {
		return nil, fmt.Errorf("%s@%s: %w", ref.Registry+"/"+ref.Repository, dgst, err)
	}
	a := &Artifact{Digest: dgst, Manifest: man, Layout: l}
	if l.Config.MediaType == MediaTypeWasmConfig {
		if a.Config, err = c.FetchBlob(ctx, ref, "config", l.Config, MaxConfig); err != nil {
			return nil, err
		}
		if !json.Valid(a.Config) {
			return nil, fmt.Errorf("%s@%s: the config is not JSON", ref.Registry+"/"+ref.Repository, dgst)
		}
	}
	if a.Module, err = c.FetchBlob(ctx, ref, "module layer", l.Module, c.opts.MaxModule); err != nil {
		return nil, err
	}
	if l.Policy != nil {
		if a.Policy, err = c.FetchBlob(ctx, ref, "policy layer", *l.Policy, MaxPolicy); err != nil {
			return nil, err
		}
	}
	return a, nil
}
