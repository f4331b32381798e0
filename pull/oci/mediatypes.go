package oci

// Media types of the artifacts this package pushes and accepts.
const (
	// MediaTypeWasmConfig is the config of the WebAssembly OCI working
	// group's layout.
	MediaTypeWasmConfig = "application/vnd.wasm.config.v0+json"
	// MediaTypeWasm is the module layer of that layout.
	MediaTypeWasm = "application/wasm"
	// MediaTypeWasmLegacy is the module layer older tools (Spin, among
	// others) push; accepted at pull, never pushed.
	MediaTypeWasmLegacy = "application/vnd.wasm.content.layer.v1+wasm"
	// MediaTypePolicy is the layer holding the module's policy file
	// (docs/policy.md): what the module asks the operator to grant.
	MediaTypePolicy = "application/vnd.wasmcp.policy.v1+toml"
	// MediaTypeSigstoreBundle is the artifact type (and layer media type)
	// of a Sigstore bundle attached to a manifest as a referrer.
	MediaTypeSigstoreBundle = "application/vnd.dev.sigstore.bundle.v0.3+json"
	// MediaTypeCosignSimpleSigning is a layer of cosign's legacy
	// signature manifest, tagged sha256-<hex>.sig.
	MediaTypeCosignSimpleSigning = "application/vnd.dev.cosign.simplesigning.v1+json"
	// cosignSignatureAnnotation holds, on such a layer, the base64
	// signature of its payload.
	cosignSignatureAnnotation = "dev.cosignproject.cosign/signature"
)

// Caps on what a pull reads. A blob whose declared size is over its cap is
// refused before any byte of it is fetched.
const (
	// DefaultMaxModule is the default cap on a module layer.
	DefaultMaxModule = 256 << 20
	// MaxManifest caps a manifest (and a referrers index).
	MaxManifest = 1 << 20
	// MaxPolicy caps the policy layer.
	MaxPolicy = 256 << 10
	// MaxConfig caps the config blob.
	MaxConfig = 64 << 10
	// MaxSignature caps one signature blob (a bundle or a payload).
	MaxSignature = 1 << 20
	// maxSignatures bounds the cosign simple-signing layers read for one
	// manifest.
	maxSignatures = 16
	// maxReferrers bounds the signature referrers looked at for one
	// manifest; maxSignatureBytes the bundles fetched for it in all.
	maxReferrers      = 64
	maxSignatureBytes = 8 << 20
)
