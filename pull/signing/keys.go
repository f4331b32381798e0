package signing

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

// publicKey reads an ECDSA P-256/P-384 or Ed25519 public key in PEM.
func publicKey(pemBytes []byte) (crypto.PublicKey, error) {
	k, err := cryptoutils.UnmarshalPEMToPublicKey(pemBytes)
	if err != nil {
		return nil, refuse(ReasonPolicy, "the public key is not a PEM public key: %v", err)
	}
	switch pk := k.(type) {
	case *ecdsa.PublicKey:
		if pk.Curve == elliptic.P256() || pk.Curve == elliptic.P384() {
			return pk, nil
		}
	case ed25519.PublicKey:
		return pk, nil
	}
	return nil, refuse(ReasonPolicy, "the public key is %T; want ECDSA P-256 or P-384, or Ed25519", k)
}

// checkKey refuses a key that is revoked or outside its window at p.Now.
func checkKey(pub crypto.PublicKey, p Policy) (fingerprint string, err error) {
	fp, err := Fingerprint(pub)
	if err != nil {
		return "", refuse(ReasonPolicy, "the public key: %v", err)
	}
	bare := strings.TrimPrefix(fp, "key ")
	for _, r := range p.RevokedKeys {
		if subtle.ConstantTimeCompare([]byte(strings.ToLower(strings.TrimPrefix(r, "key "))), []byte(bare)) == 1 {
			return "", refuse(ReasonRevoked, "the key %s is revoked (listed in revoked_keys)", bare)
		}
	}
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	if !p.KeyNotAfter.IsZero() && now.After(p.KeyNotAfter) {
		return "", refuse(ReasonExpired, "the key %s expired at %s (key_not_after; checked at the time of verification, %s: a key-based signature carries no trusted time)",
			bare, p.KeyNotAfter.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	if !p.KeyNotBefore.IsZero() && now.Before(p.KeyNotBefore) {
		return "", refuse(ReasonNotYetValid, "the key %s is not valid before %s (key_not_before; now %s)",
			bare, p.KeyNotBefore.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return fp, nil
}

// Fingerprint is the SHA-256 of a public key's DER encoding, as Result
// and the lock name a key-based signer.
func Fingerprint(pub crypto.PublicKey) (string, error) {
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(der)
	return "key sha256:" + hex.EncodeToString(sum[:]), nil
}

func privateKey(pemBytes []byte) (crypto.Signer, error) {
	blk, _ := pem.Decode(pemBytes)
	if blk == nil {
		return nil, errors.New("signing: the key is not PEM")
	}
	if strings.Contains(blk.Type, "ENCRYPTED") {
		return nil, errors.New("signing: the key is encrypted; wasmcp reads unencrypted PEM keys (wasmcp keygen writes one)")
	}
	var k any
	var err error
	switch blk.Type {
	case "EC PRIVATE KEY":
		k, err = x509.ParseECPrivateKey(blk.Bytes)
	case "PRIVATE KEY":
		k, err = x509.ParsePKCS8PrivateKey(blk.Bytes)
	default:
		return nil, fmt.Errorf("signing: a PEM block of type %q is not a private key", blk.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("signing: the private key: %w", err)
	}
	switch pk := k.(type) {
	case *ecdsa.PrivateKey:
		if pk.Curve == elliptic.P256() || pk.Curve == elliptic.P384() {
			return pk, nil
		}
	case ed25519.PrivateKey:
		return pk, nil
	}
	return nil, fmt.Errorf("signing: the private key is %T; want ECDSA P-256 or P-384, or Ed25519", k)
}

// Key algorithms GenerateKey makes.
const (
	AlgorithmECDSAP256 = "ecdsa-p256"
	AlgorithmEd25519   = "ed25519"
)

// GenerateKey returns a new key pair of the algorithm alg
// (AlgorithmECDSAP256, the default when alg is "", or AlgorithmEd25519)
// as PEM (PKCS#8 private key, PKIX public key).
func GenerateKey(alg string) (privatePEM, publicPEM []byte, err error) {
	var priv crypto.Signer
	switch alg {
	case "", AlgorithmECDSAP256:
		priv, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case AlgorithmEd25519:
		_, priv, err = ed25519.GenerateKey(rand.Reader)
	default:
		return nil, nil, fmt.Errorf("signing: key algorithm %q: want %s or %s", alg, AlgorithmECDSAP256, AlgorithmEd25519)
	}
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return nil, nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(priv.Public())
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), nil
}

// WriteKeyPair writes a new key pair of the algorithm alg (see
// GenerateKey): PREFIX.key, the private key, mode 0600, and PREFIX.pub.
func WriteKeyPair(prefix, alg string) error {
	priv, pub, err := GenerateKey(alg)
	if err != nil {
		return err
	}
	if err := os.WriteFile(prefix+".key", priv, 0o600); err != nil {
		return err
	}
	return os.WriteFile(prefix+".pub", pub, 0o644)
}

// PublicKeyFingerprint is Fingerprint of a PEM public key (ECDSA P-256 or
// P-384, or Ed25519).
func PublicKeyFingerprint(pemBytes []byte) (string, error) {
	pub, err := publicKey(pemBytes)
	if err != nil {
		return "", err
	}
	return Fingerprint(pub)
}
