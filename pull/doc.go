// Package pull keeps the tools of a tools directory that come from OCI
// registries: the lock file that pins each by digest and names its
// expected signer and the grants the operator approved (lock.go), the
// grants a module's policy asks for (grants.go), the content-addressed
// cache of pulled blobs (cache.go), and Sync (sync.go), which fetches what
// the lock names and the cache lacks, verifies digests and signatures,
// and installs into the tools directory only what passed and asks for no
// more than was approved. The registry package then serves those files
// like any other.
package pull
