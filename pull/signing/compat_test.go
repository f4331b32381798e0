package signing

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/sigstore/sigstore/pkg/cryptoutils"
)

// Sign writes the bundle sigstore-go's sign.Bundle writes for the same
// key and content (the binary builds it itself to leave pkg/sign's
// clients out): byte for byte with Ed25519, whose signatures are
// deterministic; every field but the signature with ECDSA.
func TestSignMatchesSigstoreGo(t *testing.T) {
	d := digestOf("manifest one")
	raw, _ := hex.DecodeString(strings.TrimPrefix(d, "sha256:"))
	marshal := func(pb *protobundle.Bundle) []byte {
		t.Helper()
		b, err := bundle.NewBundle(pb)
		if err != nil {
			t.Fatal(err)
		}
		j, err := b.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		return j
	}

	edPriv, _, err := GenerateKey(AlgorithmEd25519)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := Sign(d, edPriv)
	if err != nil {
		t.Fatal(err)
	}
	k, _ := privateKey(edPriv)
	st, _ := json.Marshal(statement{Type: "https://in-toto.io/Statement/v1", PredicateType: PredicateSign,
		Subject: []subject{{Digest: map[string]string{"sha256": hex.EncodeToString(raw)}}}, Predicate: map[string]any{}})
	pb, err := sign.Bundle(&sign.DSSEData{Data: st, PayloadType: payloadTypeInToto}, &ed25519Keypair{key: k.(ed25519.PrivateKey)}, sign.BundleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if theirs := marshal(pb); string(ours) != string(theirs) {
		t.Errorf("Ed25519:\nours   %s\ntheirs %s", ours, theirs)
	}

	ecPriv, _, err := GenerateKey(AlgorithmECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	ours, err = Sign(d, ecPriv)
	if err != nil {
		t.Fatal(err)
	}
	k, _ = privateKey(ecPriv)
	pb, err = sign.Bundle(&digestContent{raw}, &digestKeypair{key: k.(*ecdsa.PrivateKey)}, sign.BundleOptions{})
	if err != nil {
		t.Fatal(err)
	}
	withoutSig := func(b []byte) string {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		ms := m["messageSignature"].(map[string]any)
		if ms["signature"] == "" {
			t.Fatal("no signature")
		}
		delete(ms, "signature")
		out, _ := json.Marshal(m)
		return string(out)
	}
	if o, th := withoutSig(ours), withoutSig(marshal(pb)); o != th {
		t.Errorf("ECDSA:\nours   %s\ntheirs %s", o, th)
	}
}

// The keypairs and content sigstore-go's sign.Bundle takes, for the
// comparison above: the code Sign used before it built bundles itself.

type digestContent struct{ digest []byte }

func (c *digestContent) PreAuthEncoding() []byte { return c.digest }

func (c *digestContent) Bundle(b *protobundle.Bundle, sig, digest []byte, alg protocommon.HashAlgorithm) {
	(&sign.PlainData{}).Bundle(b, sig, digest, alg)
}

type digestKeypair struct{ key *ecdsa.PrivateKey }

func (k *digestKeypair) GetHashAlgorithm() protocommon.HashAlgorithm {
	return protocommon.HashAlgorithm_SHA2_256
}

func (k *digestKeypair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	if k.key.Curve == elliptic.P384() {
		return protocommon.PublicKeyDetails_PKIX_ECDSA_P384_SHA_384
	}
	return protocommon.PublicKeyDetails_PKIX_ECDSA_P256_SHA_256
}

func (k *digestKeypair) GetHint() []byte {
	fp, _ := Fingerprint(&k.key.PublicKey)
	return []byte(strings.TrimPrefix(fp, "key sha256:"))
}

func (k *digestKeypair) GetKeyAlgorithm() string        { return "ECDSA" }
func (k *digestKeypair) GetPublicKey() crypto.PublicKey { return &k.key.PublicKey }

func (k *digestKeypair) GetPublicKeyPem() (string, error) {
	b, err := cryptoutils.MarshalPublicKeyToPEM(&k.key.PublicKey)
	return string(b), err
}

func (k *digestKeypair) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	if len(data) != sha256.Size {
		return nil, nil, errors.New("want a SHA-256 digest")
	}
	sig, err := ecdsa.SignASN1(rand.Reader, k.key, data)
	return sig, data, err
}

type ed25519Keypair struct{ key ed25519.PrivateKey }

func (k *ed25519Keypair) GetHashAlgorithm() protocommon.HashAlgorithm {
	return protocommon.HashAlgorithm_SHA2_512
}

func (k *ed25519Keypair) GetSigningAlgorithm() protocommon.PublicKeyDetails {
	return protocommon.PublicKeyDetails_PKIX_ED25519
}

func (k *ed25519Keypair) GetHint() []byte {
	fp, _ := Fingerprint(k.key.Public())
	return []byte(strings.TrimPrefix(fp, "key sha256:"))
}

func (k *ed25519Keypair) GetKeyAlgorithm() string        { return "ED25519" }
func (k *ed25519Keypair) GetPublicKey() crypto.PublicKey { return k.key.Public() }

func (k *ed25519Keypair) GetPublicKeyPem() (string, error) {
	b, err := cryptoutils.MarshalPublicKeyToPEM(k.key.Public())
	return string(b), err
}

func (k *ed25519Keypair) SignData(_ context.Context, data []byte) ([]byte, []byte, error) {
	return ed25519.Sign(k.key, data), nil, nil
}
