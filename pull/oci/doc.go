// Package oci moves WebAssembly tool modules to and from OCI distribution
// registries with oras-go: the WebAssembly OCI working group's layout (a
// config of media type application/vnd.wasm.config.v0+json and one
// application/wasm layer), the module's policy file as a second layer of
// its own media type, and signatures as referrers of the module's manifest
// (Sigstore bundles) or under cosign's sha256-<hex>.sig tag.
//
// Everything it fetches is bounded and verified: a layer whose declared
// size is over its cap is refused before it is downloaded, every blob is
// read through a limit and checked against its digest, media types that
// are not a module's are refused, plain HTTP is used only for loopback
// registries or when asked, a redirect may not leave the registry's
// origin (but for blob downloads over HTTPS, without credentials), and
// every request has a deadline. Credentials come from the Docker
// configuration (~/.docker/config.json and its credential helpers) and are
// never part of an error or a log line.
//
// It does not verify signatures (package pull/signing does) and keeps
// nothing on disk (package pull does).
package oci
