package signing

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
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
	return SignFor(digest, "", privateKeyPEM)
}

// SignFor is Sign binding the signature to repository (REGISTRY/REPOSITORY,
// what wasmcp push pushed to): with either kind of key, the bundle is a
// DSSE envelope whose in-toto statement (predicate type PredicateSign)
// names the repository and the digest as its one subject, so a verifier
// expecting that repository (Policy.Repository) refuses the signature
// copied to another tool. With repository "", it is Sign.
func SignFor(digest, repository string, privateKeyPEM []byte) ([]byte, error) {
	d, err := parseDigest(digest)
	if err != nil {
		return nil, err
	}
	key, err := privateKey(privateKeyPEM)
	if err != nil {
		return nil, err
	}
	statementOf := func() ([]byte, error) {
		return json.Marshal(statement{Type: "https://in-toto.io/Statement/v1", PredicateType: PredicateSign,
			Subject: []subject{{Name: repository, Digest: map[string]string{"sha256": hex.EncodeToString(d)}}}, Predicate: map[string]any{}})
	}
	var pb *protobundle.Bundle
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		if repository == "" {
			pb, err = ecdsaBundle(k, d)
			break
		}
		st, merr := statementOf()
		if merr != nil {
			return nil, merr
		}
		pb, err = dsseBundle(k, st)
	case ed25519.PrivateKey:
		st, merr := statementOf()
		if merr != nil {
			return nil, merr
		}
		pb, err = dsseBundle(k, st)
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

// dsseBundle is a bundle holding payload, an in-toto statement, in a DSSE
// envelope signed by k over the envelope's pre-authentication encoding, as
// DSSE verifiers expect: pure Ed25519, or ECDSA over its SHA-256.
func dsseBundle(k crypto.Signer, payload []byte) (*protobundle.Bundle, error) {
	pae := dsse.PAE(payloadTypeInToto, payload)
	var sig []byte
	switch k := k.(type) {
	case ed25519.PrivateKey:
		sig = ed25519.Sign(k, pae)
	case *ecdsa.PrivateKey:
		h := sha256.Sum256(pae)
		var err error
		if sig, err = ecdsa.SignASN1(rand.Reader, k, h[:]); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("a DSSE signature with a %T key", k)
	}
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
