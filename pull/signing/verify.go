package signing

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/verify"
	"github.com/sigstore/sigstore/pkg/signature"
)

// Policy names who must have signed an artifact: PublicKey for a
// key-based signer, or TrustedRoot with Issuer and Identity (or
// IdentityRegexp) for a keyless one.
//
// A key may be given a validity window and may be revoked. A key-based
// signature carries no trusted time (no transparency log, no timestamping
// authority: any time in it is the signer's word, and a thief of the key
// could backdate), so the window is checked at Now, the time of
// verification: past KeyNotAfter, no signature by that key is accepted,
// however old. A keyless signature's time is the transparency log's (and
// the timestamping authority's), and its certificate must be valid then.
type Policy struct {
	PublicKey      []byte // PEM public key (ECDSA P-256 or P-384, or Ed25519)
	TrustedRoot    []byte // contents of a Sigstore trusted_root.json
	Identity       string // keyless: the certificate's SAN, exactly
	IdentityRegexp string // keyless: or a regular expression the whole SAN matches (anchored at both ends)
	Issuer         string // keyless: the OIDC issuer, exactly
	// KeyNotBefore and KeyNotAfter bound when PublicKey is trusted (zero:
	// unbounded), checked at Now.
	KeyNotBefore, KeyNotAfter time.Time
	// RevokedKeys are fingerprints ("sha256:<hex>" of the key's DER, as
	// Fingerprint gives them, with or without its "key " prefix) of keys
	// no longer trusted: a signature by one is refused as revoked.
	RevokedKeys []string
	// Now is the time a key's window is checked at; zero is time.Now().
	Now time.Time
	// Repository, when set, is REGISTRY/REPOSITORY the artifact is pulled
	// from: a signature naming another repository (cosign's
	// docker-reference, a DSSE statement's subject name) is refused, so a
	// signature cannot be copied with its artifact to another tool's tag.
	// A key-based signature must name it (a bare message signature or an
	// unnamed statement binds no repository); a keyless one naming none
	// is accepted, bound by its identity only.
	Repository string
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
	ReasonMalformed       Reason = "malformed"        // not a bundle, not PEM, not a digest
	ReasonPolicy          Reason = "policy"           // the policy names no usable signer
	ReasonWrongDigest     Reason = "wrong digest"     // it signs another artifact
	ReasonBadSignature    Reason = "bad signature"    // the signature does not verify
	ReasonUntrustedKey    Reason = "untrusted key"    // signed by another key or CA
	ReasonWrongIdentity   Reason = "wrong identity"   // the certificate names another signer
	ReasonWrongIssuer     Reason = "wrong issuer"     // the certificate names another OIDC issuer
	ReasonNoTlogProof     Reason = "no tlog proof"    // keyless without a transparency-log entry
	ReasonExpired         Reason = "expired"          // signed outside the certificate's validity, or the key is past its not_after
	ReasonNotYetValid     Reason = "not yet valid"    // the key's not_before is still to come
	ReasonRevoked         Reason = "revoked"          // the key is listed as revoked
	ReasonNotSignature    Reason = "not a signature"  // an attestation (another in-toto predicate type)
	ReasonWrongRepository Reason = "wrong repository" // it names another repository, or none where one is required
)

// PredicateSign is the in-toto predicate type of a signature statement:
// a DSSE envelope whose statement has this predicate type and the
// manifest's digest as subject signs that manifest (cosign v3's image
// signature). Any other predicate type is an attestation about the
// artifact (provenance, an SBOM), never taken for a signature.
const PredicateSign = "https://sigstore.dev/cosign/sign/v1"

// payloadTypeInToto is the DSSE payload type of an in-toto statement.
const payloadTypeInToto = "application/vnd.in-toto+json"

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
	var names []string // the repositories the signature names for this digest
	if env := b.GetDsseEnvelope(); env != nil {
		if names, err = checkStatement(env.GetPayloadType(), env.GetPayload(), want, digest); err != nil {
			return nil, err
		}
	}
	if err := checkRepository(names, p.Repository, len(p.PublicKey) > 0); err != nil {
		return nil, err
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
	fp, err := checkKey(pub, p)
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
	if _, ok := pub.(ed25519.PublicKey); ok {
		// sigstore-go verifies an Ed25519 message signature only over the
		// artifact's bytes, never over a digest: an Ed25519 signer signs a
		// DSSE statement naming the digest instead (as Sign does).
		if sc, err := b.SignatureContent(); err == nil && sc.EnvelopeContent() == nil {
			return nil, refuse(ReasonBadSignature, "an Ed25519 key signs a DSSE statement of predicate type %s naming the manifest digest; this bundle holds a bare message signature", PredicateSign)
		}
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
	return &Result{Signer: fp}, nil
}

func verifyKeyless(b verify.SignedEntity, material root.TrustedMaterial, want []byte, p Policy) (*Result, error) {
	if p.Issuer == "" || (p.Identity == "" && p.IdentityRegexp == "") {
		return nil, refuse(ReasonPolicy, "a keyless signer needs an issuer and an identity (or identity regexp)")
	}
	// sigstore-go matches a SAN regexp anywhere in the SAN (unanchored):
	// ".*@example\.com" would take "eve@example.com.evil.example", an
	// address at another domain. The lock's regexp must match the whole SAN.
	idRe := p.IdentityRegexp
	if idRe != "" {
		idRe = `^(?:` + idRe + `)$`
	}
	id, err := verify.NewShortCertificateIdentity(p.Issuer, "", p.Identity, idRe)
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
	case strings.Contains(msg, "expired") || strings.Contains(msg, "not yet valid") || strings.Contains(msg, "validity"):
		reason = ReasonExpired // checked first: "integrated time outside certificate validity" is a log time
	case strings.Contains(msg, "transparency log") || strings.Contains(msg, "tlog"):
		reason = ReasonNoTlogProof
	case strings.Contains(msg, "certificate") || strings.Contains(msg, "chain"):
		reason = ReasonUntrustedKey
	case strings.Contains(msg, "digest"):
		reason = ReasonWrongDigest
	default:
		reason = ReasonBadSignature
	}
	return &Error{Reason: reason, Err: err}
}

// simpleSigningType is critical.type of every cosign simple-signing
// payload.
const simpleSigningType = "cosign container image signature"

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
			Identity struct {
				Reference string `json:"docker-reference"`
			} `json:"identity"`
			Image struct {
				Digest string `json:"docker-manifest-digest"`
			} `json:"image"`
			Type string `json:"type"`
		} `json:"critical"`
	}
	if err := jsonStrict(payload, &ss); err != nil {
		return nil, refuse(ReasonMalformed, "simple-signing payload: %v", err)
	}
	// The type keeps the two formats apart: an ECDSA signature over
	// sha256(X) is also a bundle's message signature over the digest
	// sha256(X), so without it a signature made for one use could be
	// offered as the other (manifest bytes that parse as this payload).
	if ss.Critical.Type != simpleSigningType {
		return nil, refuse(ReasonMalformed, "simple-signing payload of type %q, not %q", ss.Critical.Type, simpleSigningType)
	}
	if ss.Critical.Image.Digest != digest {
		return nil, refuse(ReasonWrongDigest, "the payload signs %q, not %s", ss.Critical.Image.Digest, digest)
	}
	if err := checkRepository([]string{ss.Critical.Identity.Reference}, p.Repository, true); err != nil {
		return nil, err
	}
	pub, err := publicKey(p.PublicKey)
	if err != nil {
		return nil, err
	}
	fp, err := checkKey(pub, p)
	if err != nil {
		return nil, err
	}
	sig, err := decodeBase64(sigB64)
	if err != nil {
		return nil, refuse(ReasonMalformed, "the signature annotation is not base64")
	}
	var ok bool
	switch k := pub.(type) {
	case *ecdsa.PublicKey:
		h := sha256.Sum256(payload)
		ok = ecdsa.VerifyASN1(k, h[:], sig)
	case ed25519.PublicKey:
		ok = ed25519.Verify(k, payload, sig) // cosign signs the payload itself with an Ed25519 key
	}
	if !ok {
		return nil, refuse(ReasonBadSignature, "the signature does not verify with the lock's key")
	}
	return &Result{Signer: fp}, nil
}

// statement is the part of an in-toto statement a signature needs.
type statement struct {
	Type          string         `json:"_type"`
	Subject       []subject      `json:"subject"`
	PredicateType string         `json:"predicateType"`
	Predicate     map[string]any `json:"predicate"`
}

type subject struct {
	Name   string            `json:"name,omitempty"`
	Digest map[string]string `json:"digest"`
}

// maxSubjects bounds the subjects of a statement read before verification.
const maxSubjects = 64

// checkStatement reads a DSSE envelope's statement before its signature is
// verified, to say plainly why it is refused: not an in-toto statement, an
// attestation rather than a signature, or a signature of another digest.
// sigstore-go checks the subject again once the signature verified.
func checkStatement(payloadType string, payload, want []byte, digest string) (names []string, err error) {
	if payloadType != payloadTypeInToto {
		return nil, refuse(ReasonNotSignature, "the DSSE envelope holds %q, not an in-toto statement (%s)", payloadType, payloadTypeInToto)
	}
	var st statement
	if err := json.Unmarshal(payload, &st); err != nil {
		return nil, refuse(ReasonMalformed, "the in-toto statement: %v", err)
	}
	if st.PredicateType != PredicateSign {
		return nil, refuse(ReasonNotSignature, "an attestation of predicate type %q, not a signature (%s)", st.PredicateType, PredicateSign)
	}
	if len(st.Subject) > maxSubjects {
		return nil, refuse(ReasonMalformed, "the statement names %d subjects, over %d", len(st.Subject), maxSubjects)
	}
	wantHex := hex.EncodeToString(want)
	var got []string
	found := false
	for _, s := range st.Subject {
		if h, ok := s.Digest["sha256"]; ok {
			if strings.EqualFold(h, wantHex) {
				found = true
				names = append(names, s.Name)
				continue
			}
			got = append(got, "sha256:"+h)
		}
	}
	if !found {
		return nil, refuse(ReasonWrongDigest, "the statement signs %v, not %s", got, digest)
	}
	return names, nil
}

// canonicalRepository is REGISTRY/REPOSITORY as one spelling of its
// registry: the host lowercase without a trailing dot, and Docker Hub's
// names (docker.io, index.docker.io — cosign's — registry-1.docker.io)
// one, its official images under library/. The repository path is kept
// as written: it is case-sensitive.
func canonicalRepository(s string) string {
	host, repo, ok := strings.Cut(s, "/")
	if !ok {
		return s
	}
	host = strings.ToLower(host)
	if h, port, hasPort := strings.Cut(host, ":"); hasPort {
		host = strings.TrimSuffix(h, ".") + ":" + port
	} else {
		host = strings.TrimSuffix(host, ".")
	}
	switch host {
	case "docker.io", "index.docker.io", "registry-1.docker.io":
		host = "docker.io"
		if !strings.Contains(repo, "/") {
			repo = "library/" + repo
		}
	}
	return host + "/" + repo
}

// checkRepository checks the repositories a signature names for the
// digest ("" for a subject without a name) against want: one must be
// want; naming only others is refused; naming none is refused when the
// signer is a key (keyless signatures are bound by their identity).
func checkRepository(names []string, want string, key bool) error {
	if want == "" {
		return nil
	}
	var others []string
	w := canonicalRepository(want)
	for _, n := range names {
		if n != "" && canonicalRepository(n) == w {
			return nil
		}
		if n != "" {
			others = append(others, n)
		}
	}
	if len(others) > 0 {
		return refuse(ReasonWrongRepository, "the signature is for %s, not %s (a signature copied from another tool?)", strings.Join(others, ", "), want)
	}
	if key {
		return refuse(ReasonWrongRepository, "the signature names no repository, so it could be copied from any tool signed by this key; sign again with wasmcp push --sign, which names %s", want)
	}
	return nil
}
