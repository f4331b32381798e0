package pull

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/wasmcp/wasmcp/pull/oci"
	"github.com/wasmcp/wasmcp/pull/signing"
)

// Publication is one wasmcp push: a module, the policy it ships and the
// key it is signed with.
type Publication struct {
	Module string // the module file
	Name   string // the module's name (its layer's title)
	// Policy is the policy file shipped with it; a missing file is no
	// policy when PolicyOptional (the default NAME.policy.toml beside the
	// module), an error otherwise.
	Policy         string
	PolicyOptional bool
	SignKey        string // a PEM private key file; "" pushes unsigned
}

// Published is what Push pushed.
type Published struct {
	Digest     string // the manifest's
	ModuleSize int
	Policy     bool   // a policy layer was pushed
	Signature  string // the signature referrer's digest; "" unsigned
}

// Push checks p's module and policy (the policy must read as a request,
// see Grants), pushes them to ref as the WebAssembly OCI artifact and, with
// a key, signs the manifest's digest bound to ref's repository
// (signing.SignFor) and attaches the bundle as a referrer.
func Push(ctx context.Context, c *oci.Client, ref oci.Ref, p Publication) (*Published, error) {
	wasm, err := os.ReadFile(p.Module)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(wasm, []byte("\x00asm")) {
		return nil, fmt.Errorf("%s is not a WebAssembly module (no \\0asm header)", p.Module)
	}
	var policy []byte
	if p.Policy != "" {
		policy, err = os.ReadFile(p.Policy)
		switch {
		case errors.Is(err, fs.ErrNotExist) && p.PolicyOptional:
			policy = nil
		case err != nil:
			return nil, fmt.Errorf("policy: %w", err)
		default:
			if _, err := Grants(policy); err != nil {
				return nil, fmt.Errorf("policy %s: %w", p.Policy, err)
			}
		}
	}
	var key []byte
	if p.SignKey != "" {
		if key, err = os.ReadFile(p.SignKey); err != nil {
			return nil, fmt.Errorf("--sign: %w", err)
		}
	}
	desc, err := c.Push(ctx, ref, p.Name, wasm, policy)
	if err != nil {
		return nil, err
	}
	out := &Published{Digest: desc.Digest.String(), ModuleSize: len(wasm), Policy: policy != nil}
	if key == nil {
		return out, nil
	}
	bundle, err := signing.SignFor(desc.Digest.String(), ref.Registry+"/"+ref.Repository, key)
	if err != nil {
		return out, fmt.Errorf("--sign: %w", err)
	}
	sd, err := c.PushSignature(ctx, ref, desc, bundle)
	if err != nil {
		return out, err
	}
	out.Signature = sd.Digest.String()
	return out, nil
}
