// Package signing signs and verifies the signatures of tools pulled from
// an OCI registry, in process, with sigstore-go (no external program).
//
// What is signed is the digest of the tool's OCI manifest: the manifest
// names the module's and the policy's blobs by digest, so a signature over
// it covers every byte the host runs, and the digest verified is the
// digest pulled (the host never verifies one reference and runs another).
//
// Two kinds of signer are accepted:
//
//   - a public key (PEM: ECDSA P-256 or P-384, or Ed25519): a Sigstore
//     bundle whose message signature is over the manifest digest (as Sign
//     writes it with an ECDSA key), or whose DSSE envelope holds an
//     in-toto statement of predicate type PredicateSign naming the
//     manifest digest as subject (as Sign writes it with an Ed25519 key,
//     and cosign v3 signs images), or cosign's older simple-signing
//     payload (VerifySimpleSigning). Ed25519 signs messages, not digests:
//     sigstore-go v1.3.0 refuses to verify an Ed25519 message signature
//     against a digest alone, so the Ed25519 signature covers a statement,
//     and the statement names the digest. Key-based bundles need no
//     transparency log or timestamp; the key is the trust.
//   - keyless: a bundle whose Fulcio certificate chains to the operator's
//     trusted root (a Sigstore trusted_root.json, read from a file: nothing
//     is fetched), whose subject alternative name and OIDC issuer match the
//     lock's expectation, with a transparency-log entry (inclusion proof)
//     that dates the signature inside the certificate's validity.
//
// A DSSE statement of another predicate type (an attestation: provenance,
// an SBOM) is never taken for a signature (ReasonNotSignature).
//
// With Policy.Repository, a signature must name the repository it is
// pulled from (a statement's subject name, cosign's docker-reference):
// SignFor writes it, so a signature copied with its artifact to another
// tool's tag is refused (ReasonWrongRepository).
//
// Every refusal is an *Error whose Reason says which check failed.
//
// verify.go checks signatures (Verify, VerifySimpleSigning), sign.go makes
// them (Sign), keys.go reads, generates and fingerprints keys and checks a
// key's window and revocation.
package signing
