package signing

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testkit/sigstoretest"
)

// TestKeylessBundle: keyless bundles (DSSE statements, cosign v3's
// shape) checked offline against a trusted_root.json file's contents,
// through Verify as serve calls it: a good one verifies and names its
// signer; each broken one is refused with its own reason.
func TestKeylessBundle(t *testing.T) {
	ss, trusted, other := sigstoretest.Pair(t)
	const id, iss = "dev@example.com", "https://issuer.example"
	d := digestOf("a manifest")
	p := Policy{TrustedRoot: trusted, Identity: id, Issuer: iss}
	sign := func(o sigstoretest.Options) []byte {
		t.Helper()
		return ss.MustBundle(t, o, id, iss, d)
	}
	ctx := context.Background()
	good := sign(sigstoretest.Options{})
	res, err := Verify(ctx, good, d, p)
	if err != nil {
		t.Fatal(err)
	}
	if res.Signer != id || res.Issuer != iss || res.SignedAt.IsZero() {
		t.Fatalf("result %+v", res)
	}
	cases := []struct {
		name   string
		bundle []byte
		digest string
		policy Policy
		want   Reason
		text   string
	}{
		{"wrong_identity", good, d, Policy{TrustedRoot: trusted, Identity: "eve@example.com", Issuer: iss}, ReasonWrongIdentity, "eve@example.com"},
		{"wrong_issuer", good, d, Policy{TrustedRoot: trusted, Identity: id, Issuer: "https://evil.example"}, ReasonWrongIssuer, "evil.example"},
		{"other_digest", good, digestOf("another manifest"), p, ReasonWrongDigest, "not sha256:"},
		{"no_tlog_entry", sign(sigstoretest.Options{NoTlog: true}), d, p, ReasonNoTlogProof, "transparency log"},
		{"untrusted_ca", sign(sigstoretest.Options{CertFrom: other}), d, p, ReasonUntrustedKey, "certificate"},
		{"expired_certificate", sign(sigstoretest.Options{LogTime: time.Now().Add(30 * time.Minute), NoTimestamp: true}), d, p, ReasonExpired, "expired"},
		// An identity regexp matches the whole SAN: unanchored, as
		// sigstore-go applies it, ".*@dev\.example" would take an address
		// at another domain ending the SAN, and a prefix would take more.
		{"identity_regexp_other_domain", sign(sigstoretest.Options{Identity: "eve@example.com.evil.example"}), d, Policy{TrustedRoot: trusted, IdentityRegexp: `.*@example\.com`, Issuer: iss}, ReasonWrongIdentity, "eve@example.com.evil.example"},
		{"identity_regexp_prefix", good, d, Policy{TrustedRoot: trusted, IdentityRegexp: `dev@example\.co`, Issuer: iss}, ReasonWrongIdentity, "dev@example.com"},
		{"attestation", sign(sigstoretest.Options{PredicateType: "https://slsa.dev/provenance/v1"}), d, p, ReasonNotSignature, "slsa.dev"},
	}
	if _, err := Verify(ctx, good, d, Policy{TrustedRoot: trusted, IdentityRegexp: `.*@example\.com`, Issuer: iss}); err != nil {
		t.Fatalf("an identity regexp matching the whole SAN: %v", err)
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Verify(ctx, c.bundle, c.digest, c.policy)
			if err == nil {
				t.Fatal("accepted")
			}
			if r := reason(t, err); r != c.want || !strings.Contains(err.Error(), c.text) {
				t.Fatalf("got %v\nwant reason %q, mentioning %q", err, c.want, c.text)
			}
			t.Logf("%v", err)
		})
	}
}
