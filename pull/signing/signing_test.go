package signing

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"google.golang.org/protobuf/encoding/protojson"
)

func digestOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(h[:])
}

func reason(t *testing.T, err error) Reason {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want *Error, got %v", err)
	}
	return e.Reason
}

func TestSignVerify(t *testing.T) {
	priv, pub, err := GenerateKey("")
	if err != nil {
		t.Fatal(err)
	}
	_, otherPub, _ := GenerateKey("")
	d := digestOf("manifest one")
	b, err := Sign(d, priv)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "application/vnd.dev.sigstore.bundle.v0.3+json") {
		t.Fatalf("not a v0.3 bundle: %s", b)
	}
	ctx := context.Background()
	res, err := Verify(ctx, b, d, Policy{PublicKey: pub})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Signer, "key sha256:") {
		t.Fatalf("signer %q", res.Signer)
	}

	// A signature of another manifest is refused as such.
	if _, err := Verify(ctx, b, digestOf("manifest two"), Policy{PublicKey: pub}); reason(t, err) != ReasonWrongDigest {
		t.Fatalf("other digest: %v", err)
	}
	// Another key.
	if _, err := Verify(ctx, b, d, Policy{PublicKey: otherPub}); err == nil {
		t.Fatal("another key accepted")
	} else if r := reason(t, err); r == ReasonMalformed || r == ReasonPolicy {
		t.Fatalf("another key: %v", err)
	}
	// The message digest rewritten to the other manifest, signature kept.
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	ms := m["messageSignature"].(map[string]any)
	other := sha256.Sum256([]byte("manifest two"))
	ms["messageDigest"].(map[string]any)["digest"] = base64.StdEncoding.EncodeToString(other[:])
	forged, _ := json.Marshal(m)
	if _, err := Verify(ctx, forged, digestOf("manifest two"), Policy{PublicKey: pub}); err == nil {
		t.Fatal("a signature moved to another digest was accepted")
	}
	// A flipped signature byte.
	json.Unmarshal(b, &m)
	ms = m["messageSignature"].(map[string]any)
	sig, _ := base64.StdEncoding.DecodeString(ms["signature"].(string))
	sig[len(sig)-3] ^= 1
	ms["signature"] = base64.StdEncoding.EncodeToString(sig)
	tampered, _ := json.Marshal(m)
	if _, err := Verify(ctx, tampered, d, Policy{PublicKey: pub}); err == nil {
		t.Fatal("a tampered signature was accepted")
	}
	// Malformed input.
	for _, bad := range []string{"", "{", "[]", `{"mediaType":"x"}`} {
		if _, err := Verify(ctx, []byte(bad), d, Policy{PublicKey: pub}); reason(t, err) != ReasonMalformed {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := Verify(ctx, b, "sha256:zz", Policy{PublicKey: pub}); reason(t, err) != ReasonMalformed {
		t.Errorf("bad digest: %v", err)
	}
	// No signer named.
	if _, err := Verify(ctx, b, d, Policy{}); reason(t, err) != ReasonPolicy {
		t.Errorf("no signer: %v", err)
	}
}

func TestSignRefusesOtherKeys(t *testing.T) {
	for _, k := range [][]byte{nil, []byte("not pem"), pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{1}})} {
		if _, err := Sign(digestOf("m"), k); err == nil {
			t.Errorf("%q accepted", k)
		}
	}
}

func TestSimpleSigning(t *testing.T) {
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	pub := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	d := digestOf("manifest")
	payload := []byte(`{"critical":{"identity":{"docker-reference":"r/x"},"image":{"docker-manifest-digest":"` + d + `"},"type":"cosign container image signature"},"optional":null}`)
	h := sha256.Sum256(payload)
	sig, _ := ecdsa.SignASN1(rand.Reader, k, h[:])
	s64 := base64.StdEncoding.EncodeToString(sig)
	if _, err := VerifySimpleSigning(payload, s64, d, Policy{PublicKey: pub}); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifySimpleSigning(payload, s64, digestOf("other"), Policy{PublicKey: pub}); reason(t, err) != ReasonWrongDigest {
		t.Fatalf("other digest: %v", err)
	}
	sig[5] ^= 1
	if _, err := VerifySimpleSigning(payload, base64.StdEncoding.EncodeToString(sig), d, Policy{PublicKey: pub}); reason(t, err) != ReasonBadSignature {
		t.Fatalf("tampered: %v", err)
	}
	if _, err := VerifySimpleSigning(payload, s64, d, Policy{}); reason(t, err) != ReasonPolicy {
		t.Fatalf("no key: %v", err)
	}
	// A payload without cosign's type is not a simple-signing signature,
	// even if the key signed its bytes (they could be a manifest whose
	// digest a bundle's message signature covers).
	untyped := []byte(`{"critical":{"image":{"docker-manifest-digest":"` + d + `"}}}`)
	uh := sha256.Sum256(untyped)
	usig, err := ecdsa.SignASN1(rand.Reader, k, uh[:])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := VerifySimpleSigning(untyped, base64.StdEncoding.EncodeToString(usig), d, Policy{PublicKey: pub}); reason(t, err) != ReasonMalformed {
		t.Fatalf("an untyped payload: %v", err)
	}
}

func TestKeyless(t *testing.T) {
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	artifact := []byte("a manifest")
	sum := sha256.Sum256(artifact)
	entity, err := vs.Sign("dev@example.com", "https://issuer.example", artifact)
	if err != nil {
		t.Fatal(err)
	}
	ok := Policy{Identity: "dev@example.com", Issuer: "https://issuer.example"}
	res, err := verifyKeyless(entity, vs, sum[:], ok)
	if err != nil {
		t.Fatal(err)
	}
	if res.Signer != "dev@example.com" || res.Issuer != "https://issuer.example" || res.SignedAt.IsZero() {
		t.Fatalf("result %+v", res)
	}
	if _, err := verifyKeyless(entity, vs, sum[:], Policy{IdentityRegexp: `^dev@example\.com$`, Issuer: ok.Issuer}); err != nil {
		t.Fatalf("regexp: %v", err)
	}
	if _, err := verifyKeyless(entity, vs, sum[:], Policy{Identity: "eve@example.com", Issuer: ok.Issuer}); err == nil {
		t.Fatal("wrong identity accepted")
	}
	if _, err := verifyKeyless(entity, vs, sum[:], Policy{Identity: ok.Identity, Issuer: "https://evil.example"}); err == nil {
		t.Fatal("wrong issuer accepted")
	}
	other := sha256.Sum256([]byte("another manifest"))
	if _, err := verifyKeyless(entity, vs, other[:], ok); err == nil {
		t.Fatal("another digest accepted")
	}
	// A certificate from another CA.
	vs2, _ := ca.NewVirtualSigstore()
	if _, err := verifyKeyless(entity, vs2, sum[:], ok); err == nil {
		t.Fatal("another CA accepted")
	}
	if _, err := verifyKeyless(entity, vs, sum[:], Policy{Identity: ok.Identity}); reason(t, err) != ReasonPolicy {
		t.Fatalf("no issuer: %v", err)
	}
}

func BenchmarkVerifyKey(b *testing.B) {
	priv, pub, _ := GenerateKey("")
	d := digestOf("m")
	bundle, _ := Sign(d, priv)
	p := Policy{PublicKey: pub}
	for b.Loop() {
		if _, err := Verify(context.Background(), bundle, d, p); err != nil {
			b.Fatal(err)
		}
	}
}

// TestEd25519: an Ed25519 key signs a DSSE statement naming the manifest
// digest (Ed25519 signs messages, not digests); it verifies against the
// public key and only for that digest; an attestation of another
// predicate type by the same key is not a signature; a bare message
// signature cannot claim an Ed25519 key.
func TestEd25519(t *testing.T) {
	priv, pub, err := GenerateKey(AlgorithmEd25519)
	if err != nil {
		t.Fatal(err)
	}
	_, otherPub, _ := GenerateKey(AlgorithmEd25519)
	_, ecPub, _ := GenerateKey(AlgorithmECDSAP256)
	ctx := context.Background()
	d := digestOf("manifest one")
	b, err := Sign(d, priv)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "dsseEnvelope") {
		t.Fatalf("not a DSSE bundle: %s", b)
	}
	res, err := Verify(ctx, b, d, Policy{PublicKey: pub})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(res.Signer, "key sha256:") {
		t.Fatalf("signer %q", res.Signer)
	}
	if _, err := Verify(ctx, b, digestOf("manifest two"), Policy{PublicKey: pub}); reason(t, err) != ReasonWrongDigest {
		t.Fatalf("another digest: %v", err)
	}
	for _, k := range [][]byte{otherPub, ecPub} {
		if _, err := Verify(ctx, b, d, Policy{PublicKey: k}); err == nil {
			t.Fatal("another key accepted")
		} else if r := reason(t, err); r == ReasonMalformed || r == ReasonPolicy {
			t.Fatalf("another key: %v", err)
		}
	}
	// The statement rewritten to name another digest, signature kept.
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	env := m["dsseEnvelope"].(map[string]any)
	payload, _ := base64.StdEncoding.DecodeString(env["payload"].(string))
	moved := strings.Replace(string(payload), strings.TrimPrefix(d, "sha256:"), strings.TrimPrefix(digestOf("manifest two"), "sha256:"), 1)
	env["payload"] = base64.StdEncoding.EncodeToString([]byte(moved))
	forged, _ := json.Marshal(m)
	if _, err := Verify(ctx, forged, digestOf("manifest two"), Policy{PublicKey: pub}); err == nil {
		t.Fatal("a statement moved to another digest was accepted")
	}
	// An attestation (another predicate type) signed by the same key.
	att := strings.Replace(string(payload), PredicateSign, "https://slsa.dev/provenance/v1", 1)
	k, _ := privateKey(priv)
	pb, err := dsseBundle(k.(ed25519.PrivateKey), []byte(att))
	if err != nil {
		t.Fatal(err)
	}
	ab, _ := protojson.Marshal(pb)
	if _, err := Verify(ctx, ab, d, Policy{PublicKey: pub}); reason(t, err) != ReasonNotSignature {
		t.Fatalf("an attestation: %v", err)
	}
	// A bare message signature over the digest checked against an Ed25519
	// key: refused as such, before sigstore-go (which would only say it
	// cannot verify an Ed25519 signature of a digest).
	ecPriv, _, _ := GenerateKey(AlgorithmECDSAP256)
	mb, err := Sign(d, ecPriv)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(ctx, mb, d, Policy{PublicKey: pub}); reason(t, err) != ReasonBadSignature || !strings.Contains(err.Error(), "DSSE") {
		t.Fatalf("a bare message signature with an Ed25519 key: %v", err)
	}
	// cosign's simple signing with an Ed25519 key signs the payload itself.
	sp := []byte(`{"critical":{"identity":{"docker-reference":"r/x"},"image":{"docker-manifest-digest":"` + d + `"},"type":"cosign container image signature"},"optional":null}`)
	sig := ed25519.Sign(k.(ed25519.PrivateKey), sp)
	if _, err := VerifySimpleSigning(sp, base64.StdEncoding.EncodeToString(sig), d, Policy{PublicKey: pub}); err != nil {
		t.Fatalf("simple signing: %v", err)
	}
	sig[0] ^= 1
	if _, err := VerifySimpleSigning(sp, base64.StdEncoding.EncodeToString(sig), d, Policy{PublicKey: pub}); reason(t, err) != ReasonBadSignature {
		t.Fatalf("simple signing, tampered: %v", err)
	}
	if _, _, err := GenerateKey("rsa"); err == nil {
		t.Fatal("GenerateKey(rsa) accepted")
	}
}

// TestKeyRevokedExpired: a key listed as revoked, past its not_after or
// before its not_before is refused, each with its own reason, for a
// Sigstore bundle and a cosign simple-signing signature alike, checked at
// the time of verification; inside its window and not revoked it verifies.
func TestKeyRevokedExpired(t *testing.T) {
	for _, alg := range []string{AlgorithmECDSAP256, AlgorithmEd25519} {
		t.Run(alg, func(t *testing.T) {
			priv, pub, err := GenerateKey(alg)
			if err != nil {
				t.Fatal(err)
			}
			d := digestOf("manifest")
			b, err := Sign(d, priv)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			res, err := Verify(ctx, b, d, Policy{PublicKey: pub})
			if err != nil {
				t.Fatal(err)
			}
			fp := strings.TrimPrefix(res.Signer, "key ")
			now := time.Date(2027, 1, 15, 0, 0, 0, 0, time.UTC)
			_, otherPub, _ := GenerateKey(alg)
			other, _ := Verify(ctx, mustSign(t, d, alg, otherPub), d, Policy{PublicKey: otherPub})
			cases := []struct {
				name string
				p    Policy
				want Reason // "" verifies
			}{
				{"inside_window", Policy{KeyNotBefore: now.AddDate(0, -1, 0), KeyNotAfter: now.AddDate(0, 1, 0), Now: now}, ""},
				{"another_key_revoked", Policy{RevokedKeys: []string{strings.TrimPrefix(other.Signer, "key ")}}, ""},
				{"revoked", Policy{RevokedKeys: []string{fp}}, ReasonRevoked},
				{"revoked_as_signer_line", Policy{RevokedKeys: []string{res.Signer}}, ReasonRevoked},
				{"expired", Policy{KeyNotAfter: now.AddDate(0, 0, -1), Now: now}, ReasonExpired},
				{"not_yet_valid", Policy{KeyNotBefore: now.AddDate(0, 0, 1), Now: now}, ReasonNotYetValid},
			}
			for _, c := range cases {
				c.p.PublicKey = pub
				_, err := Verify(ctx, b, d, c.p)
				if c.want == "" {
					if err != nil {
						t.Errorf("%s: %v", c.name, err)
					}
					continue
				}
				if err == nil || reason(t, err) != c.want || !strings.Contains(err.Error(), string(c.want)) || !strings.Contains(err.Error(), fp) {
					t.Errorf("%s: got %v, want reason %q naming %s", c.name, err, c.want, fp)
				}
				if alg != AlgorithmECDSAP256 {
					continue
				}
				// The same for cosign's simple signing.
				payload := []byte(`{"critical":{"image":{"docker-manifest-digest":"` + d + `"},"type":"cosign container image signature"}}`)
				if _, err := VerifySimpleSigning(payload, "", d, c.p); err == nil || reason(t, err) != c.want {
					t.Errorf("%s, simple signing: %v", c.name, err)
				}
			}
		})
	}
}

// mustSign signs d with a new key of alg and rewrites *pub to its public key.
func mustSign(t *testing.T, d, alg string, pub []byte) []byte {
	t.Helper()
	priv, p, err := GenerateKey(alg)
	if err != nil {
		t.Fatal(err)
	}
	copy(pub, p)
	b, err := Sign(d, priv)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRepositoryBinding: with Policy.Repository, a signature naming
// another repository is refused — cosign's docker-reference, a DSSE
// statement's subject name, with an ECDSA or an Ed25519 key — and a key
// signature naming none is refused as unbound.
func TestRepositoryBinding(t *testing.T) {
	ctx := context.Background()
	d := digestOf("manifest")
	for _, alg := range []string{AlgorithmECDSAP256, AlgorithmEd25519} {
		priv, pub, err := GenerateKey(alg)
		if err != nil {
			t.Fatal(err)
		}
		b, err := SignFor(d, "r.example/tools/a", priv)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Verify(ctx, b, d, Policy{PublicKey: pub, Repository: "r.example/tools/a"}); err != nil {
			t.Errorf("%s: its own repository: %v", alg, err)
		}
		if _, err := Verify(ctx, b, d, Policy{PublicKey: pub, Repository: "r.example/tools/b"}); reason(t, err) != ReasonWrongRepository {
			t.Errorf("%s: another repository: %v", alg, err)
		}
		unbound, err := Sign(d, priv)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Verify(ctx, unbound, d, Policy{PublicKey: pub, Repository: "r.example/tools/a"}); reason(t, err) != ReasonWrongRepository {
			t.Errorf("%s: a signature naming no repository: %v", alg, err)
		}
	}
	k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	der, _ := x509.MarshalPKIXPublicKey(&k.PublicKey)
	pub := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	for ref, want := range map[string]Reason{`"r/x"`: "", `"r/y"`: ReasonWrongRepository, `""`: ReasonWrongRepository} {
		payload := []byte(`{"critical":{"identity":{"docker-reference":` + ref + `},"image":{"docker-manifest-digest":"` + d + `"},"type":"cosign container image signature"},"optional":null}`)
		h := sha256.Sum256(payload)
		sig, _ := ecdsa.SignASN1(rand.Reader, k, h[:])
		_, err := VerifySimpleSigning(payload, base64.StdEncoding.EncodeToString(sig), d, Policy{PublicKey: pub, Repository: "r/x"})
		if got := Reason(""); err != nil {
			got = reason(t, err)
			if got != want {
				t.Errorf("simple-signing docker-reference %s: %v, want %q", ref, err, want)
			}
		} else if want != "" {
			t.Errorf("simple-signing docker-reference %s accepted for r/x", ref)
		}
	}
}
