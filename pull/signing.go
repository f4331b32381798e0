package pull

import (
	"context"

	"github.com/wasmcp/wasmcp/pull/signing"
)

// VerifyBundle verifies a Sigstore bundle over the manifest digest dgst
// against p and returns the signer.
func VerifyBundle(ctx context.Context, bundle []byte, dgst string, p SignerPolicy) (string, error) {
	res, err := signing.Verify(ctx, bundle, dgst, signing.Policy(p))
	if err != nil {
		return "", err
	}
	return res.Signer, nil
}

// VerifySimple verifies a cosign simple-signing signature of dgst against
// p and returns the signer.
func VerifySimple(payload []byte, sig string, dgst string, p SignerPolicy) (string, error) {
	res, err := signing.VerifySimpleSigning(payload, sig, dgst, signing.Policy(p))
	if err != nil {
		return "", err
	}
	return res.Signer, nil
}

// Sign signs a manifest digest with a PEM private key and returns a
// Sigstore bundle (JSON).
func Sign(dgst string, privateKeyPEM []byte) ([]byte, error) {
	return signing.Sign(dgst, privateKeyPEM)
}

// GenerateKey makes a signing key pair (PEM) of the algorithm alg
// ("ecdsa-p256", the default, or "ed25519").
func GenerateKey(alg string) (privatePEM, publicPEM []byte, err error) {
	return signing.GenerateKey(alg)
}
