package signing

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"
	"time"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"
)

// Policy names who must have signed an artifact: PublicKey for a
// key-based signer, or TrustedRoot with Issuer and Identity (or
// IdentityRegexp) for a keyless one.
type Policy struct {
	PublicKey      []byte // PEM public key (ECDSA P-256 or P-384)
	TrustedRoot    []byte // contents of a Sigstore trusted_root.json
	Identity       string // keyless: the certificate's SAN, exactly
	IdentityRegexp string // keyless: or a regular expression the SAN matches
	Issuer         string // keyless: the OIDC issuer, exactly
}

// Result says who signed.
type Result struct {
	Signer   string    // "key sha256:<fingerprint>" or the certificate's SAN
	Issuer   string    // keyless: the certificate's OIDC issuer
	SignedAt time.Time // keyless: when the transparency log saw it; zero for a key
}

// Reason names the check a signature failed.
type Reason string

// The reasons a signature is refused.
const (
	ReasonMalformed     Reason = "malformed"      // not a bundle, not PEM, not a digest
	ReasonPolicy        Reason = "policy"         // the policy names no usable signer
	ReasonWrongDigest   Reason = "wrong digest"   // it signs another artifact
	ReasonBadSignature  Reason = "bad signature"  // the signature does not verify
	ReasonUntrustedKey  Reason = "untrusted key"  // signed by another key or CA
	ReasonWrongIdentity Reason = "wrong identity" // the certificate names another signer
	ReasonWrongIssuer   Reason = "wrong issuer"   // the certificate names another OIDC issuer
	ReasonNoTlogProof   Reason = "no tlog proof"  // keyless without a transparency-log entry
	ReasonExpired       Reason = "expired"        // signed outside the certificate's validity
)

// Error is a refused signature.
type Error struct {
	Reason Reason
	Err    error
}

func (e *Error) Error() string {
	return "signature refused (" + string(e.Reason) + "): " + e.Err.Error()
}
func (e *Error) Unwrap() error { return e.Err }

func refuse(r Reason, format string, a ...any) error {
	return &Error{Reason: r, Err: fmt.Errorf(format, a...)}
}

// parseDigest reads "sha256:<64 hex>".
func parseDigest(d string) ([]byte, error) {
	h, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(h) != 64 {
		return nil, refuse(ReasonMalformed, "digest %q is not sha256:<64 hex digits>", d)
	}
	b, err := hex.DecodeString(h)
	if err != nil {
		return nil, refuse(ReasonMalformed, "digest %q is not sha256:<64 hex digits>", d)
	}
	return b, nil
}

// publicKey reads an ECDSA P-256/P-384 public key in PEM.
func publicKey(pemBytes []byte) (*ecdsa.PublicKey, error) {
	k, err := cryptoutils.UnmarshalPEMToPublicKey(pemBytes)
	if err != nil {
		return nil, refuse(ReasonPolicy, "the public key is not a PEM public key: %v", err)
	}
	ec, ok := k.(*ecdsa.PublicKey)
	if !ok || (ec.Curve != elliptic.P256() && ec.Curve != elliptic.P384()) {
		return nil, refuse(ReasonPolicy, "the public key is %T; want ECDSA P-256 or P-384", k)
	}
	return ec, nil
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

// Verify checks a Sigstore bundle (JSON, media types v0.1 to v0.3) over
// the artifact whose digest is digest ("sha256:<hex>", the OCI manifest
// digest). It succeeds only if the bundle's signature covers exactly that
// digest and the signer satisfies p. Nothing is fetched.
func Verify(ctx context.Context, bundleJSON []byte, digest string, p Policy) (res *Result, err error) {
	// A bundle is input from a registry: whatever sigstore-go does with a
	// malformed one, it is a refusal, never a crash of the server.
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, refuse(ReasonMalformed, "the bundle could not be read: %v", r)
		}
	}()
	want, err := parseDigest(digest)
	if err != nil {
		return nil, err
	}
	var b bundle.Bundle
	if err := b.UnmarshalJSON(bundleJSON); err != nil {
		return nil, refuse(ReasonMalformed, "not a Sigstore bundle: %v", err)
	}
	// The bundle's own statement of what it signs is checked first, so a
	// signature of another manifest says so rather than "bad signature".
	if ms := b.GetMessageSignature(); ms != nil && ms.GetMessageDigest() != nil {
		if got := ms.GetMessageDigest().GetDigest(); !bytes.Equal(got, want) {
			return nil, refuse(ReasonWrongDigest, "the bundle signs sha256:%x, not %s", got, digest)
		}
	}
	switch {
	case len(p.PublicKey) > 0:
		return verifyKey(&b, want, p)
	case len(p.TrustedRoot) > 0:
		tr, err := root.NewTrustedRootFromJSON(p.TrustedRoot)
		if err != nil {
			return nil, refuse(ReasonPolicy, "the trusted root does not parse: %v", err)
		}
		return verifyKeyless(&b, tr, want, p)
	default:
		return nil, refuse(ReasonPolicy, "the policy names no signer (a public key, or a trusted root with an identity and issuer)")
	}
}

func verifyKey(b verify.SignedEntity, want []byte, p Policy) (*Result, error) {
	pub, err := publicKey(p.PublicKey)
	if err != nil {
		return nil, err
	}
	vc, err := b.VerificationContent()
	if err != nil {
		return nil, refuse(ReasonMalformed, "the bundle has no verification material: %v", err)
	}
	if vc.Certificate() != nil {
		return nil, refuse(ReasonUntrustedKey, "the bundle is signed with a certificate; the lock expects a key")
	}
	verifier, err := signature.LoadVerifier(pub, crypto.SHA256)
	if err != nil {
		return nil, refuse(ReasonPolicy, "the public key: %v", err)
	}
	// Whatever hint the bundle gives, the one key trusted is the policy's.
	material := root.NewTrustedPublicKeyMaterial(func(string) (root.TimeConstrainedVerifier, error) {
		return root.NewExpiringKey(verifier, time.Time{}, time.Time{}), nil
	})
	v, err := verify.NewVerifier(material, verify.WithNoObserverTimestamps())
	if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	if _, err := v.Verify(b, verify.NewPolicy(verify.WithArtifactDigest("sha256", want), verify.WithKey())); err != nil {
		return nil, classify(err)
	}
	fp, err := Fingerprint(pub)
	if err != nil {
		return nil, refuse(ReasonPolicy, "the public key: %v", err)
	}
	return &Result{Signer: fp}, nil
}

func verifyKeyless(b verify.SignedEntity, material root.TrustedMaterial, want []byte, p Policy) (*Result, error) {
	if p.Issuer == "" || (p.Identity == "" && p.IdentityRegexp == "") {
		return nil, refuse(ReasonPolicy, "a keyless signer needs an issuer and an identity (or identity regexp)")
	}
	id, err := verify.NewShortCertificateIdentity(p.Issuer, "", p.Identity, p.IdentityRegexp)
	if err != nil {
		return nil, refuse(ReasonPolicy, "the identity: %v", err)
	}
	v, err := verify.NewVerifier(material, verify.WithTransparencyLog(1), verify.WithObserverTimestamps(1))
	if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	res, err := v.Verify(b, verify.NewPolicy(verify.WithArtifactDigest("sha256", want), verify.WithCertificateIdentity(id)))
	if err != nil {
		return nil, classify(err)
	}
	r := &Result{}
	if res.Signature != nil && res.Signature.Certificate != nil {
		r.Signer = res.Signature.Certificate.SubjectAlternativeName
		r.Issuer = res.Signature.Certificate.Issuer
	}
	for _, ts := range res.VerifiedTimestamps {
		if r.SignedAt.IsZero() || ts.Timestamp.Before(r.SignedAt) {
			r.SignedAt = ts.Timestamp
		}
	}
	return r, nil
}

// classify maps a sigstore-go verification error to a Reason.
func classify(err error) error {
	msg := err.Error()
	var reason Reason
	switch {
	case strings.Contains(msg, "SAN") || strings.Contains(msg, "subject alternative name") || strings.Contains(msg, "no matching CertificateIdentity") && !strings.Contains(msg, "issuer"):
		reason = ReasonWrongIdentity
	case strings.Contains(msg, "issuer") || strings.Contains(msg, "Issuer"):
		reason = ReasonWrongIssuer
	case strings.Contains(msg, "transparency log") || strings.Contains(msg, "tlog"):
		reason = ReasonNoTlogProof
	case strings.Contains(msg, "expired") || strings.Contains(msg, "not yet valid") || strings.Contains(msg, "validity"):
		reason = ReasonExpired
	case strings.Contains(msg, "certificate") || strings.Contains(msg, "chain"):
		reason = ReasonUntrustedKey
	case strings.Contains(msg, "digest"):
		reason = ReasonWrongDigest
	default:
		reason = ReasonBadSignature
	}
	return &Error{Reason: reason, Err: err}
}

// VerifySimpleSigning checks a cosign simple-signing signature (the
// sha256-<hex>.sig tag convention): payload is the layer's JSON, whose
// critical.image.docker-manifest-digest must be digest, and sigB64 the
// base64 signature over the payload from its
// dev.cosignproject.cosign/signature annotation. Key-based only.
func VerifySimpleSigning(payload []byte, sigB64 string, digest string, p Policy) (*Result, error) {
	if _, err := parseDigest(digest); err != nil {
		return nil, err
	}
	if len(p.PublicKey) == 0 {
		return nil, refuse(ReasonPolicy, "a cosign simple-signing signature is checked against a public key; the lock names none")
	}
	var ss struct {
		Critical struct {
			Image struct {
				Digest string `json:"docker-manifest-digest"`
			} `json:"image"`
			Type string `json:"type"`
		} `json:"critical"`
	}
	if err := jsonStrict(payload, &ss); err != nil {
		return nil, refuse(ReasonMalformed, "simple-signing payload: %v", err)
	}
	if ss.Critical.Image.Digest != digest {
		return nil, refuse(ReasonWrongDigest, "the payload signs %q, not %s", ss.Critical.Image.Digest, digest)
	}
	pub, err := publicKey(p.PublicKey)
	if err != nil {
		return nil, err
	}
	sig, err := decodeBase64(sigB64)
	if err != nil {
		return nil, refuse(ReasonMalformed, "the signature annotation is not base64")
	}
	h := sha256.Sum256(payload)
	if !ecdsa.VerifyASN1(pub, h[:], sig) {
		return nil, refuse(ReasonBadSignature, "the signature does not verify with the lock's key")
	}
	fp, err := Fingerprint(pub)
	if err != nil {
		return nil, refuse(ReasonPolicy, "the public key: %v", err)
	}
	return &Result{Signer: fp}, nil
}

// bundleMediaType is the media type of the bundles Sign writes.
const bundleMediaType = "application/vnd.dev.sigstore.bundle.v0.3+json"

// Sign makes a Sigstore bundle (v0.3, a message signature with the key's
// fingerprint as hint) over the artifact with that digest, using a PEM
// ECDSA P-256 or P-384 private key (PKCS#8 or EC PRIVATE KEY).
func Sign(digest string, privateKeyPEM []byte) ([]byte, error) {
	d, err := parseDigest(digest)
	if err != nil {
		return nil, err
	}
	key, err := privateKey(privateKeyPEM)
	if err != nil {
		return nil, err
	}
	// The digest is signed as it is (ECDSA over the SHA-256 manifest
	// digest), as sigstore-go's sign.Bundle does for a key: building the
	// bundle here keeps its Fulcio, Rekor and timestamp-authority clients
	// out of the binary (docs/dependencies.md).
	sig, err := ecdsa.SignASN1(rand.Reader, key, d)
	if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	fp, err := Fingerprint(&key.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	pb := &protobundle.Bundle{
		MediaType: bundleMediaType,
		VerificationMaterial: &protobundle.VerificationMaterial{Content: &protobundle.VerificationMaterial_PublicKey{
			PublicKey: &protocommon.PublicKeyIdentifier{Hint: strings.TrimPrefix(fp, "key sha256:")}}},
		Content: &protobundle.Bundle_MessageSignature{MessageSignature: &protocommon.MessageSignature{
			MessageDigest: &protocommon.HashOutput{Algorithm: protocommon.HashAlgorithm_SHA2_256, Digest: d},
			Signature:     sig}},
	}
	b, err := bundle.NewBundle(pb)
	if err != nil {
		return nil, fmt.Errorf("signing: %w", err)
	}
	return b.MarshalJSON()
}

func privateKey(pemBytes []byte) (*ecdsa.PrivateKey, error) {
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
	ec, ok := k.(*ecdsa.PrivateKey)
	if !ok || (ec.Curve != elliptic.P256() && ec.Curve != elliptic.P384()) {
		return nil, fmt.Errorf("signing: the private key is %T; want ECDSA P-256 or P-384", k)
	}
	return ec, nil
}

// GenerateKey returns a new ECDSA P-256 key pair as PEM (PKCS#8 private
// key, PKIX public key).
func GenerateKey() (privatePEM, publicPEM []byte, err error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), nil
}
