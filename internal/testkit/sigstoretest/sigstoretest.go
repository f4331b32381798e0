// Package sigstoretest is an offline Sigstore for tests: sigstore-go's
// virtual Sigstore (pkg/testing/ca: a Fulcio CA, a Rekor log key, a
// timestamping authority, all generated in memory) written out as the
// trusted_root.json an operator gives wasmcp, and keyless Sigstore bundles
// (v0.3, JSON) signed by it over a manifest digest, good or broken in one
// named way each: another identity or issuer, no transparency-log entry, a
// certificate from another CA, a log time outside the certificate's
// validity.
package sigstoretest

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	"github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/root"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"github.com/sigstore/sigstore/pkg/signature"
	sigdsse "github.com/sigstore/sigstore/pkg/signature/dsse"
	"google.golang.org/protobuf/proto"
)

// Sigstore is one virtual Sigstore.
type Sigstore struct{ vs *ca.VirtualSigstore }

// New makes a virtual Sigstore; its CA is valid from 5 hours ago to an
// hour from now.
func New() (*Sigstore, error) {
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		return nil, err
	}
	return &Sigstore{vs: vs}, nil
}

// TrustedRoot is its trusted_root.json.
func (s *Sigstore) TrustedRoot() ([]byte, error) {
	// The virtual Sigstore keys its logs by the hex log ID and keeps that
	// hex text as the ID; a trusted root holds the ID's bytes.
	logs := map[string]*root.TransparencyLog{}
	for id, l := range s.vs.RekorLogs() {
		raw, err := hex.DecodeString(id)
		if err != nil {
			return nil, err
		}
		c := *l
		c.ID = raw
		logs[id] = &c
	}
	tr, err := root.NewTrustedRoot(root.TrustedRootMediaType01, s.vs.FulcioCertificateAuthorities(), nil, s.vs.TimestampingAuthorities(), logs)
	if err != nil {
		return nil, err
	}
	return tr.MarshalJSON()
}

// PredicateSign is the in-toto predicate type of a signature statement.
const PredicateSign = "https://sigstore.dev/cosign/sign/v1"

// Options say what to sign and how.
type Options struct {
	Identity, Issuer string // the certificate's SAN (an e-mail address) and OIDC issuer
	Digest           string // sha256:<hex>, the statement's subject
	// PredicateType defaults to PredicateSign.
	PredicateType string
	// LogTime is the transparency log's integrated time; zero is 5 minutes
	// from now (inside the certificate's validity, the 10 minutes from its
	// issue). The log itself is trusted until an hour after New: a later
	// time makes the entry unverifiable rather than the certificate expired.
	LogTime time.Time
	// CertFrom issues the certificate from another Sigstore's CA (the log
	// entry and the timestamp stay this one's).
	CertFrom *Sigstore
	// NoTlog leaves the transparency-log entry out; NoTimestamp the
	// timestamping authority's signed timestamp.
	NoTlog, NoTimestamp bool
}

// Bundle signs a DSSE in-toto statement naming o.Digest, keyless, and
// returns the Sigstore bundle (JSON).
func (s *Sigstore) Bundle(o Options) ([]byte, error) {
	certVS := s.vs
	if o.CertFrom != nil {
		certVS = o.CertFrom.vs
	}
	leaf, key, err := certVS.GenerateLeafCert(o.Identity, o.Issuer)
	if err != nil {
		return nil, err
	}
	pt := o.PredicateType
	if pt == "" {
		pt = PredicateSign
	}
	hexDigest, ok := strings.CutPrefix(o.Digest, "sha256:")
	if !ok {
		return nil, fmt.Errorf("digest %q: want sha256:<hex>", o.Digest)
	}
	if _, err := hex.DecodeString(hexDigest); err != nil {
		return nil, fmt.Errorf("digest %q: %w", o.Digest, err)
	}
	statement, err := json.Marshal(map[string]any{"_type": "https://in-toto.io/Statement/v1", "predicateType": pt, "predicate": map[string]any{},
		"subject": []any{map[string]any{"digest": map[string]string{"sha256": hexDigest}}}})
	if err != nil {
		return nil, err
	}
	signer, err := signature.LoadECDSASignerVerifier(key.(*ecdsa.PrivateKey), defaultHash)
	if err != nil {
		return nil, err
	}
	es, err := dsse.NewEnvelopeSigner(&sigdsse.SignerAdapter{SignatureSigner: signer, Pub: leaf.PublicKey.(*ecdsa.PublicKey)})
	if err != nil {
		return nil, err
	}
	const payloadType = "application/vnd.in-toto+json"
	env, err := es.SignPayload(context.Background(), payloadType, statement)
	if err != nil {
		return nil, err
	}
	sig, err := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	if err != nil {
		return nil, err
	}
	vm := &protobundle.VerificationMaterial{
		Content:                   &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: leaf.Raw}},
		TimestampVerificationData: &protobundle.TimestampVerificationData{},
	}
	if !o.NoTlog {
		at := o.LogTime
		if at.IsZero() {
			at = time.Now().Add(5 * time.Minute)
		}
		entry, err := s.vs.GenerateTlogEntry(leaf, env, sig, at.Unix(), true)
		if err != nil {
			return nil, err
		}
		// The entry as a bundle carries it: kind and version, and the log's
		// signed entry timestamp (the inclusion promise) over the body.
		tle := proto.Clone(entry.TransparencyLogEntry()).(*protorekor.TransparencyLogEntry)
		tle.KindVersion = &protorekor.KindVersion{Kind: "dsse", Version: "0.0.1"}
		set, err := s.vs.RekorSignPayload(tlog.RekorPayload{Body: base64.StdEncoding.EncodeToString(tle.CanonicalizedBody),
			IntegratedTime: tle.IntegratedTime, LogIndex: tle.LogIndex, LogID: hex.EncodeToString(tle.LogId.KeyId)})
		if err != nil {
			return nil, err
		}
		tle.InclusionPromise = &protorekor.InclusionPromise{SignedEntryTimestamp: set}
		vm.TlogEntries = []*protorekor.TransparencyLogEntry{tle}
	}
	if !o.NoTimestamp {
		tsr, err := s.vs.TimestampResponse(sig)
		if err != nil {
			return nil, err
		}
		vm.TimestampVerificationData.Rfc3161Timestamps = []*protocommon.RFC3161SignedTimestamp{{SignedTimestamp: tsr}}
	}
	pb := &protobundle.Bundle{MediaType: "application/vnd.dev.sigstore.bundle.v0.3+json", VerificationMaterial: vm,
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{Payload: statement, PayloadType: payloadType,
			Signatures: []*protodsse.Signature{{Sig: sig}}}}}
	b, err := bundle.NewBundle(pb)
	if err != nil {
		return nil, err
	}
	return b.MarshalJSON()
}

// defaultHash is the hash of the virtual Sigstore's P-256 signatures.
const defaultHash = crypto.SHA256

// Pair makes the Sigstore a test trusts, its trusted_root.json, and a
// second one whose certificates that root does not trust; it fails t on
// any error.
func Pair(t testing.TB) (trusted *Sigstore, trustedRoot []byte, other *Sigstore) {
	t.Helper()
	var err error
	if trusted, err = New(); err != nil {
		t.Fatal(err)
	}
	if other, err = New(); err != nil {
		t.Fatal(err)
	}
	if trustedRoot, err = trusted.TrustedRoot(); err != nil {
		t.Fatal(err)
	}
	return trusted, trustedRoot, other
}

// MustBundle is Bundle with o's identity, issuer and digest, where empty,
// taken from the arguments; it fails t on error.
func (s *Sigstore) MustBundle(t testing.TB, o Options, identity, issuer, digest string) []byte {
	t.Helper()
	if o.Identity == "" {
		o.Identity = identity
	}
	if o.Issuer == "" {
		o.Issuer = issuer
	}
	if o.Digest == "" {
		o.Digest = digest
	}
	b, err := s.Bundle(o)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
