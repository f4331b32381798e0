package pull

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/pull/oci"
	"github.com/wasmcp/wasmcp/pull/signing"
)

// signerPolicy is what t expects of its signer, with the files it names
// read (relative to dir).
func signerPolicy(t *Tool, dir string) (signing.Policy, error) {
	p := signing.Policy{Identity: t.Identity, IdentityRegexp: t.IdentityRegexp, Issuer: t.Issuer, RevokedKeys: t.RevokedKeys}
	ref, err := oci.ParseRef(t.Reference)
	if err != nil {
		return p, err
	}
	p.Repository = ref.Registry + "/" + ref.Repository // what is signed must name it
	if err := t.checkTimes(); err != nil {
		return p, err
	}
	if t.KeyNotBefore != "" {
		p.KeyNotBefore, _ = time.Parse(time.RFC3339, t.KeyNotBefore)
	}
	if t.KeyNotAfter != "" {
		p.KeyNotAfter, _ = time.Parse(time.RFC3339, t.KeyNotAfter)
	}
	read := func(key, path string) ([]byte, error) {
		if !filepath.IsAbs(path) {
			path = filepath.Join(dir, path)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", key, err)
		}
		return b, nil
	}
	if t.Key != "" {
		if p.PublicKey, err = read("key", t.Key); err != nil {
			return p, err
		}
	}
	if t.TrustedRoot != "" {
		if p.TrustedRoot, err = read("trusted_root", t.TrustedRoot); err != nil {
			return p, err
		}
	}
	return p, nil
}

// Verify checks the signatures of the manifest dgst against t's expected
// signer: a Sigstore bundle (from a referrer) or a cosign simple-signing
// signature (from the sha256-<hex>.sig tag); one that verifies is enough.
// It returns the signer, or an error saying why none verified.
func Verify(ctx context.Context, sigs []oci.Signature, dgst string, t *Tool, dir string) (string, error) {
	p, err := signerPolicy(t, dir)
	if err != nil {
		return "", err
	}
	if len(sigs) == 0 {
		return "", fmt.Errorf("unsigned: no signature is attached to %s (set signed = false for %s in %s to serve it unsigned)", dgst, t.Name, LockName)
	}
	var why []string
	for _, s := range sigs {
		var res *signing.Result
		var err error
		switch {
		case s.Skipped != "":
			err = errors.New("skipped: " + s.Skipped)
		case s.Bundle != nil:
			res, err = signing.Verify(ctx, s.Bundle, dgst, p)
		case s.Payload != nil:
			res, err = signing.VerifySimpleSigning(s.Payload, s.Sig, dgst, p)
		default:
			err = errors.New("empty signature")
		}
		if err == nil {
			return res.Signer, nil
		}
		why = append(why, s.Source+": "+err.Error())
	}
	return "", fmt.Errorf("no signature of %s verifies for the expected signer: %s", dgst, strings.Join(why, "; "))
}
