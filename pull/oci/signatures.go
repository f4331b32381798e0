package oci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"
)

// Signature is one signature found for a manifest, as fetched (verified
// against its own digest, not yet checked as a signature).
type Signature struct {
	// Bundle is a Sigstore bundle (JSON), from a referrer.
	Bundle []byte `json:"bundle,omitempty"`
	// Payload and Sig are a cosign simple-signing payload and its base64
	// signature, from the sha256-<hex>.sig tag.
	Payload []byte `json:"payload,omitempty"`
	Sig     string `json:"sig,omitempty"`
	// Source says where it was found: the referrer's digest, or the tag.
	Source string `json:"source"`
	// Skipped, when set, says why this referrer was not read as a
	// signature (malformed, over a cap, not fetched): it holds no
	// signature, is never cached, and the verifier only reports it.
	Skipped string `json:"skipped,omitempty"`
}

// errEnough stops a referrers listing at maxReferrers.
var errEnough = errors.New("enough referrers")

// Signatures lists the signatures attached to the manifest at dgst: the
// referrers of artifact type MediaTypeSigstoreBundle (through the
// referrers API, or oras-go's fall back to the sha256-<hex> tag of the
// referrers tag schema) and the layers of cosign's sha256-<hex>.sig tag.
// None found is no error; what they are worth is for the verifier.
//
// A referrer that cannot be read as a signature (a malformed manifest, a
// bundle over MaxSignature, one that fails to download) is skipped, not a
// failure of the listing: it comes back with Skipped saying why, so a
// pusher of junk referrers cannot block a good signature. At most
// maxReferrers referrers are looked at, from at most the repository's
// ReferrerListMaxPages pages of the listing, and at most
// maxSignatureBytes of bundles fetched in all; the rest are not read. Referrers of another
// artifact type (attestations, SBOMs) are not listed at all.
func (c *Client) Signatures(ctx context.Context, ref Ref, dgst string) ([]Signature, error) {
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
	var out []Signature
	subject := ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: d}
	var refs []ocispec.Descriptor
	err = repo.Referrers(ctx, subject, MediaTypeSigstoreBundle, func(rs []ocispec.Descriptor) error {
		for _, r := range rs {
			if len(refs) == maxReferrers {
				return errEnough
			}
			refs = append(refs, r)
		}
		return nil
	})
	var truncated string
	switch {
	case errors.Is(err, errdef.ErrTooManyPages):
		// The registry pages its answer past what is read (a repository
		// full of attestations, say): the referrers listed so far are
		// read, as at maxReferrers, not the whole listing failed.
		truncated = err.Error()
	case err != nil && !errors.Is(err, errdef.ErrNotFound) && !errors.Is(err, errEnough):
		return nil, c.wrap(ctx, "list signatures of", ref, err)
	}
	if truncated != "" {
		out = append(out, Signature{Source: "referrers of " + d.String(), Skipped: "the rest not read: " + truncated})
	}
	var budget int64 = maxSignatureBytes
	for _, r := range refs {
		s, err := c.bundleFrom(ctx, repo, r, &budget)
		if ctx.Err() != nil {
			return nil, c.wrap(ctx, "fetch signature of", ref, ctx.Err())
		}
		if err != nil {
			out = append(out, Signature{Source: "referrer " + r.Digest.String(), Skipped: err.Error()})
			continue
		}
		out = append(out, *s)
	}
	simple, err := c.cosignTag(ctx, repo, d)
	switch {
	case ctx.Err() != nil:
		return nil, c.wrap(ctx, "fetch cosign signature of", ref, ctx.Err())
	case err != nil:
		// A junk .sig tag, like a junk referrer, is skipped: it must not
		// hide the referrers.
		return append(out, Signature{Source: "tag sha256-" + d.Encoded() + ".sig", Skipped: err.Error()}), nil
	}
	return append(out, simple...), nil
}

// bundleFrom fetches the bundle layer of a referrer manifest, within
// what is left of budget (bytes), which it lowers.
func (c *Client) bundleFrom(ctx context.Context, repo *remote.Repository, r ocispec.Descriptor, budget *int64) (*Signature, error) {
	if err := checkDigest(r.Digest); err != nil {
		return nil, err
	}
	if err := checkSize("signature manifest", r, MaxManifest); err != nil {
		return nil, err
	}
	data, err := fetchManifest(ctx, repo, r.Digest)
	if err != nil {
		return nil, err
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("signature manifest %s: %w", r.Digest, err)
	}
	if len(m.Layers) != 1 || m.Layers[0].MediaType != MediaTypeSigstoreBundle {
		return nil, fmt.Errorf("signature manifest %s: want one layer of media type %s", r.Digest, MediaTypeSigstoreBundle)
	}
	if err := checkSize("signature bundle", m.Layers[0], MaxSignature); err != nil {
		return nil, err
	}
	if m.Layers[0].Size > *budget {
		return nil, fmt.Errorf("signature bundle: not read: the signatures of this manifest already took %d bytes", maxSignatureBytes-*budget)
	}
	*budget -= m.Layers[0].Size
	b, err := fetchBlob(ctx, repo, "signature bundle", m.Layers[0], MaxSignature)
	if err != nil {
		return nil, err
	}
	return &Signature{Bundle: b, Source: "referrer " + r.Digest.String()}, nil
}

// cosignTag reads cosign's legacy signature manifest, tagged
// sha256-<hex>.sig; none is no error.
func (c *Client) cosignTag(ctx context.Context, repo *remote.Repository, d digest.Digest) ([]Signature, error) {
	tag := "sha256-" + d.Encoded() + ".sig"
	desc, err := repo.Resolve(ctx, tag)
	if errors.Is(err, errdef.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if err := checkSize("cosign signature manifest", desc, MaxManifest); err != nil {
		return nil, err
	}
	if err := checkDigest(desc.Digest); err != nil {
		return nil, err
	}
	data, err := fetchManifest(ctx, repo, desc.Digest)
	if err != nil {
		return nil, err
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("cosign signature manifest: %w", err)
	}
	var out []Signature
	for _, l := range m.Layers {
		if l.MediaType != MediaTypeCosignSimpleSigning {
			continue
		}
		sig := l.Annotations[cosignSignatureAnnotation]
		if sig == "" {
			continue
		}
		if len(out) == maxSignatures {
			break
		}
		p, err := fetchBlob(ctx, repo, "cosign payload", l, MaxSignature)
		if err != nil {
			return nil, err
		}
		out = append(out, Signature{Payload: p, Sig: strings.TrimSpace(sig), Source: "tag " + tag})
	}
	return out, nil
}

func fetchBlob(ctx context.Context, repo *remote.Repository, what string, d ocispec.Descriptor, limit int64) ([]byte, error) {
	if err := checkSize(what, d, limit); err != nil {
		return nil, err
	}
	if err := checkDigest(d.Digest); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	rc, err := repo.Blobs().Fetch(ctx, d)
	if err != nil {
		return nil, notFound(err)
	}
	defer rc.Close()
	return readVerified(what, rc, d)
}
