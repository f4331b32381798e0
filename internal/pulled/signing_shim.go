package pulled

import (
	"context"
	"errors"
)

// Until internal/signing lands these refuse every signature.

// VerifyBundle verifies a Sigstore bundle over the manifest digest.
var VerifyBundle = func(ctx context.Context, bundle []byte, dgst string, p SignerPolicy) (string, error) {
	return "", errors.New("signature verification is not available in this build")
}

// VerifySimple verifies a cosign simple-signing signature.
var VerifySimple = func(payload []byte, sig string, dgst string, p SignerPolicy) (string, error) {
	return "", errors.New("signature verification is not available in this build")
}

// Sign signs a manifest digest with a PEM private key and returns a
// Sigstore bundle (JSON).
var Sign = func(dgst string, privateKeyPEM []byte) ([]byte, error) {
	return nil, errors.New("signing is not available in this build")
}

// GenerateKey makes a signing key pair (PEM).
var GenerateKey = func() (privatePEM, publicPEM []byte, err error) {
	return nil, nil, errors.New("signing is not available in this build")
}
