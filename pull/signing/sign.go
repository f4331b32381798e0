package signing

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	"github.com/sigstore/sigstore-go/pkg/bundle"
)

// bundleMediaType is the media type of the bundles Sign writes.
const bundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// Sign makes a Sigstore bundle (v0.3, the key's fingerprint as hint) over
// the artifact with that digest, using a PEM private key (PKCS#8, or EC
// PRIVATE KEY): with an ECDSA P-256 or P-384 key, a message signature over
// the digest; with an Ed25519 key, a DSSE envelope holding an in-toto
// statement of predicate type PredicateSign whose one subject is the
// digest (Ed25519 signs messages, not digests: the statement is the
// message, and it names the digest).
//
// The bundle is built here with the protobuf-specs types, with the same
// fields sigstore-go's sign.Bundle writes for a key (no certificate,
// transparency log or timestamp): importing that package would link its
// Fulcio, Rekor and timestamp-authority clients, which a key signature
// never uses (docs/dependencies.md, "Build cost").
func Sign(digest string, privateKeyPEM []byte) ([]byte, error) {
	d, err := parseDigest(digest)
	if err != nil {
		return nil, err
	}
	key, err := privateKey(privateKeyPEM)
	if err != nil {
		return nil, err
	}
	var pb *protobundle.Bundle
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		pb, err = ecdsaBundle(k, d)
	case ed25519.PrivateKey:
		st, merr := json.Marshal(statement{Type: "https://in-toto.io/Statement/v1", PredicateType: PredicateSign,
			Subject: []subject{{Digest: map[string]string{"sha256": hex.EncodeToString(d)}}}, Predicate: map[string]any{}})
		if merr != nil {
			return nil, merr
		}
		pb, err = ed25519Bundle(k, st)
	default:
		return nil, fmt.Errorf("signing: the private key is %T", key)
	}
	if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	b, err := bundle.NewBundle(pb)
	if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	return b.MarshalJSON()
}

// ecdsaBundle is a bundle holding k's signature over the SHA-256 digest d.
func ecdsaBundle(k *ecdsa.PrivateKey, d []byte) (*protobundle.Bundle, error) {
	sig, err := ecdsa.SignASN1(rand.Reader, k, d)
	if err != nil {
		return nil, err
	}
	return keyBundle(&k.PublicKey, &protobundle.Bundle{Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
		MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: d},
		Signature:     sig}}})
}

// ed25519Bundle is a bundle holding payload, an in-toto statement, in a
// DSSE envelope signed by k: pure Ed25519 over the envelope's
// pre-authentication encoding, as DSSE verifiers expect.
func ed25519Bundle(k ed25519.PrivateKey, payload []byte) (*protobundle.Bundle, error) {
	sig := ed25519.Sign(k, dsse.PAE(payloadTypeInToto, payload))
	return keyBundle(k.Public(), &protobundle.Bundle{Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{
		Payload: payload, PayloadType: payloadTypeInToto, Signatures: []*protodsse.Signature{{Sig: sig}}}}})
}

// keyBundle completes b, which holds its content, into a v0.3 bundle
// whose verification material is pub's fingerprint (the hint a verifier
// with the key matches).
func keyBundle(pub crypto.PublicKey, b *protobundle.Bundle) (*protobundle.Bundle, error) {
	fp, err := Fingerprint(pub)
	if err != nil {
		return nil, err
	}
	b.MediaType = bundleMediaType
	b.VerificationMaterial = &protobundle.VerificationMaterial{Content: &protobundle.VerificationMaterial_PublicKey{
		PublicKey: &protocommon.PublicKeyIdentifier{Hint: strings.TrimPrefix(fp, "key sha256:")}}}
	return b, nil
}
