package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/pull"
	"github.com/wasmcp/wasmcp/pull/oci"
	"github.com/wasmcp/wasmcp/pull/signing"
	"github.com/wasmcp/wasmcp/registry"
)

// ociFlags are the flags of the commands that talk to registries.
type ociFlags struct {
	insecure     bool
	timeout      time.Duration
	dockerConfig string
	maxModule    byteSize
}

func (f *ociFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&f.insecure, "insecure", false, "allow plain HTTP to a registry that is not on loopback (loopback registries always get plain HTTP)")
	fs.DurationVar(&f.timeout, "registry-timeout", oci.DefaultTimeout, "deadline of one registry operation (a pull, a push, a listing of signatures)")
	fs.StringVar(&f.dockerConfig, "docker-config", "", "Docker configuration file the registry credentials come from (default $DOCKER_CONFIG/config.json or ~/.docker/config.json, with its credential helpers)")
	f.maxModule = oci.DefaultMaxModule
	fs.Var(&f.maxModule, "max-module", "largest module layer pulled: a larger declared size is refused before download")
}

func (f *ociFlags) client() (*oci.Client, error) {
	return oci.New(oci.Options{Insecure: f.insecure, Timeout: f.timeout, DockerConfig: f.dockerConfig, MaxModule: int64(f.maxModule)})
}

// parseInterspersed parses flags given before, between or after the
// positional arguments, which it returns.
func parseInterspersed(fs *flag.FlagSet, args []string, stdout, stderr io.Writer, header string) ([]string, error) {
	if err := parseFlags(fs, args, stdout, stderr, header); err != nil {
		return nil, err
	}
	var pos []string
	for fs.NArg() > 0 {
		rest := fs.Args()
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		if err := fs.Parse(rest[1:]); err != nil {
			return nil, err
		}
	}
	return pos, nil
}

// pulledCacheDir is the blob cache of pulled tools: "oci" inside the
// compilation cache directory (a temporary directory when that is "-").
func pulledCacheDir(cacheDir string) (dir string, cleanup func(), err error) {
	switch cacheDir {
	case "-":
		d, err := os.MkdirTemp("", "wasmcp-oci-")
		if err != nil {
			return "", nil, err
		}
		return d, func() { os.RemoveAll(d) }, nil
	case "":
		cacheDir = host.DefaultCacheDir()
	}
	return filepath.Join(cacheDir, "oci"), func() {}, nil
}

func cmdPush(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	var of ociFlags
	of.register(fs)
	signKey := fs.String("sign", "", "sign the pushed manifest's digest with this private key (PEM: ECDSA P-256/P-384 or Ed25519, from wasmcp keygen) and attach the Sigstore bundle as a referrer")
	policyFile := fs.String("policy", "", "policy file to ship with the module (default: NAME.policy.toml beside it, when there is one)")
	pos, err := parseInterspersed(fs, args, stdout, stderr, `Usage: wasmcp push MODULE.wasm REGISTRY/REPOSITORY:TAG [--sign KEY] [flags]

Pushes a module to an OCI registry as the WebAssembly OCI working group's
artifact (config application/vnd.wasm.config.v0+json, one application/wasm
layer), with its policy file as a second layer
(application/vnd.wasmcp.policy.v1+toml): what the module asks the operator
to grant. Prints the manifest's digest. See docs/registry-tools.md.

Flags:
`)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		fs.Usage()
		return errUsage
	}
	path := pos[0]
	ref, err := oci.ParseRef(pos[1])
	if err != nil {
		return err
	}
	wasm, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(wasm, []byte("\x00asm")) {
		return fmt.Errorf("%s is not a WebAssembly module (no \\0asm header)", path)
	}
	pf := *policyFile
	if pf == "" {
		pf = registry.PolicyFile(path)
	}
	policy, err := os.ReadFile(pf)
	switch {
	case errors.Is(err, iofs.ErrNotExist) && *policyFile == "":
		policy = nil
	case err != nil:
		return fmt.Errorf("policy: %w", err)
	default:
		if _, err := pull.Grants(policy); err != nil {
			return fmt.Errorf("policy %s: %w", pf, err)
		}
	}
	var key []byte
	if *signKey != "" {
		if key, err = os.ReadFile(*signKey); err != nil {
			return fmt.Errorf("--sign: %w", err)
		}
	}
	c, err := of.client()
	if err != nil {
		return err
	}
	desc, err := c.Push(ctx, ref, registry.ModuleName(path), wasm, policy)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "pushed %s@%s (module %s", ref.Registry+"/"+ref.Repository, desc.Digest, host.FormatBytes(int64(len(wasm))))
	if policy != nil {
		fmt.Fprintf(stdout, ", policy %s", filepath.Base(pf))
	}
	fmt.Fprintln(stdout, ")")
	if key == nil {
		return nil
	}
	bundle, err := signing.Sign(desc.Digest.String(), key)
	if err != nil {
		return fmt.Errorf("--sign: %w", err)
	}
	sd, err := c.PushSignature(ctx, ref, desc, bundle)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "signed %s (Sigstore bundle, referrer %s)\n", desc.Digest, sd.Digest)
	return nil
}

func cmdPull(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pull", flag.ContinueOnError)
	var of ociFlags
	of.register(fs)
	out := fs.String("o", ".", "tools directory: its "+pull.LockName+" gets the tool")
	name := fs.String("name", "", "the tool's name in the tools directory (default: the repository's last element)")
	key := fs.String("key", "", "the expected signer's public key (PEM)")
	identity := fs.String("identity", "", "the expected signer's certificate identity (keyless; with --issuer and --trusted-root)")
	identityRe := fs.String("identity-regexp", "", "a regular expression the signer's whole identity must match, anchored at both ends (instead of --identity)")
	issuer := fs.String("issuer", "", "the expected OIDC issuer of a keyless signature")
	root := fs.String("trusted-root", "", "Sigstore trusted-root JSON file keyless signatures are checked against, offline")
	unsigned := fs.Bool("unsigned", false, "accept the tool without a signature (the lock records signed = false)")
	cacheDir := fs.String("cache-dir", "", "the cache directory (the pulled blobs go to its oci subdirectory; default "+host.DefaultCacheDir()+")")
	pos, err := parseInterspersed(fs, args, stdout, stderr, `Usage: wasmcp pull REGISTRY/REPOSITORY[:TAG|@DIGEST] [-o DIR] [--key PUB | --identity ID --issuer URL --trusted-root FILE | --unsigned]

Resolves the reference to a digest once, fetches and verifies the module
(every blob's digest, the signature against the expected signer), and
records it in DIR/`+pull.LockName+` pinned by that digest. Prints the digest, the
signer and the grants the module's policy asks for; they are pending until
'wasmcp approve NAME' (a module asking for nothing is approved at once).
'wasmcp serve --tools DIR' then serves it. A tool already in the lock
keeps its expected signer unless flags name another.

Flags:
`)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return errUsage
	}
	if err := checkDir("-o", *out); err != nil {
		return err
	}
	ref, err := oci.ParseRef(pos[0])
	if err != nil {
		return err
	}
	n := *name
	if n == "" {
		n = ref.Repository[strings.LastIndex(ref.Repository, "/")+1:]
	}
	if err := pull.CheckName(n); err != nil {
		return fmt.Errorf("%w (give --name)", err)
	}
	lock, err := pull.ReadLock(*out)
	if err != nil {
		return err
	}
	if other := lock.FindFold(n); other != nil && other.Name != n {
		return fmt.Errorf("tool %q: %s has %q, differing only in case (one file on a case-insensitive filesystem); give --name", n, pull.LockName, other.Name)
	}
	if lock.Find(n) == nil {
		if err := pull.CheckUnowned(*out, n); err != nil {
			return fmt.Errorf("%w; give --name", err)
		}
	}
	t := pull.Tool{Name: n, RevokedKeys: lock.RevokedKeys}
	if old := lock.Find(n); old != nil {
		t = *old
	}
	t.Reference = ref.String()
	if *key != "" || *root != "" || *unsigned {
		t.Key, t.Identity, t.IdentityRegexp, t.Issuer, t.TrustedRoot, t.Signed = *key, *identity, *identityRe, *issuer, *root, nil
		t.KeyNotBefore, t.KeyNotAfter = "", "" // a window belongs to the key it was set for
		if *unsigned {
			f := false
			t.Signed = &f
		}
	}
	if t.RequireSignature() && t.Key == "" && t.TrustedRoot == "" {
		return errors.New("name the expected signer: --key PUB.pem, or --identity/--identity-regexp, --issuer and --trusted-root; or --unsigned to accept it without a signature")
	}
	if t.TrustedRoot != "" && t.Key == "" && (t.Issuer == "" || (t.Identity == "" && t.IdentityRegexp == "")) {
		return errors.New("a keyless signer needs --issuer and --identity (or --identity-regexp) besides --trusted-root")
	}
	c, err := of.client()
	if err != nil {
		return err
	}
	start := time.Now()
	dgst, err := c.Resolve(ctx, ref)
	if err != nil {
		return err
	}
	cdir, cleanup, err := pulledCacheDir(*cacheDir)
	if err != nil {
		return err
	}
	defer cleanup()
	cache, err := pull.OpenCache(cdir, 0)
	if err != nil {
		return err
	}
	s := &pull.Syncer{Dir: *out, Cache: cache, Source: c, Verify: pull.Verify}
	f, err := s.Fetch(ctx, &t, dgst)
	if err != nil {
		return fmt.Errorf("pull %s@%s refused: %w", ref.Registry+"/"+ref.Repository, dgst, err)
	}
	took := time.Since(start)
	t.Signer = f.Signer
	fmt.Fprintf(stdout, "pulled %s\n  digest  %s\n", ref, dgst)
	if f.Signer != "" {
		fmt.Fprintf(stdout, "  signer  %s\n", f.Signer)
	} else {
		fmt.Fprintf(stdout, "  signer  none (accepted unsigned: signed = false)\n")
	}
	fmt.Fprintf(stdout, "  module  %s, verified in %s\n", host.FormatBytes(int64(len(f.Module))), took.Round(time.Millisecond))
	fmt.Fprintf(stdout, "it asks for:\n%s", pull.Describe(f.Grants))
	switch {
	case t.Approved != nil && len(pull.Beyond(f.Grants, *t.Approved)) == 0:
		t.Digest, t.Pending, t.PendingDigest = dgst, nil, ""
		fmt.Fprintf(stdout, "within what was approved for %s: serve picks it up\n", n)
	case len(f.Grants) == 0:
		t.Digest, t.Pending, t.PendingDigest = dgst, nil, ""
		empty := []string{}
		t.Approved = &empty
		fmt.Fprintf(stdout, "nothing to approve: serve picks it up\n")
	default:
		if t.Digest == "" || t.Approved == nil {
			t.Digest = dgst // nothing served yet: this is the version to approve
		}
		t.Pending, t.PendingDigest = f.Grants, dgst
		if t.Approved != nil {
			fmt.Fprintf(stdout, "beyond what was approved:\n%s", pull.Describe(pull.Beyond(f.Grants, *t.Approved)))
		}
		fmt.Fprintf(stdout, "pending: run 'wasmcp approve %s --digest %s -o %s' to grant it (serve keeps the approved version until then)\n", n, dgst, *out)
	}
	lock.Put(t)
	if err := pull.WriteLockUnchanged(*out, lock); errors.Is(err, pull.ErrLockChanged) {
		// A serve re-pulling, or an edit, wrote it while this pull ran:
		// never overwritten with what was read before.
		return fmt.Errorf("%s changed while pulling (a serve or an edit wrote it); nothing recorded: run wasmcp pull again", filepath.Join(*out, pull.LockName))
	} else if err != nil {
		return err
	}
	return nil
}

func cmdApprove(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("approve", flag.ContinueOnError)
	out := fs.String("o", ".", "tools directory holding "+pull.LockName)
	want := fs.String("digest", "", "approve only if the pending version is this digest (the one wasmcp pull showed): a running serve may have recorded a newer version, asking for more, since")
	pos, err := parseInterspersed(fs, args, stdout, stderr, `Usage: wasmcp approve NAME [--digest sha256:…] [-o DIR]

Approves the grants the pulled tool NAME asks for (shown by wasmcp pull
and in the lock's pending list) and pins the version that asked for them;
a running 'wasmcp serve' picks it up on SIGHUP or its next --pull-interval.
With --digest (wasmcp pull prints the command with it), the approval is
refused unless the pending version is that digest: a serve following the
tag may have replaced what pull showed with a version asking for more.

Flags:
`)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return errUsage
	}
	lock, err := pull.ReadLock(*out)
	if err != nil {
		return err
	}
	t := lock.Find(pos[0])
	if t == nil {
		return fmt.Errorf("%s has no tool %q", filepath.Join(*out, pull.LockName), pos[0])
	}
	if t.Approved != nil && t.PendingDigest == "" {
		fmt.Fprintf(stdout, "%s: nothing pending; approved:\n%s", t.Name, pull.Describe(*t.Approved))
		return nil
	}
	pending := t.PendingDigest
	if pending == "" {
		pending = t.Digest
	}
	if *want != "" && *want != pending {
		return fmt.Errorf("approve %s --digest %s refused: the pending version is now %s (recorded since, for example by a serve following the tag), asking for:\n%srun 'wasmcp approve %s --digest %s' to grant that", t.Name, *want, pending, pull.Describe(t.Pending), t.Name, pending)
	}
	g := append([]string{}, t.Pending...)
	t.Approved = &g
	if t.PendingDigest != "" {
		t.Digest = t.PendingDigest
	}
	t.Pending, t.PendingDigest = nil, ""
	if err := pull.WriteLock(*out, lock); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "approved %s at %s:\n%s", t.Name, t.Digest, pull.Describe(g))
	return nil
}

func cmdKeygen(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("keygen", flag.ContinueOnError)
	out := fs.String("out", "wasmcp-signing", "file name prefix: PREFIX.key (private, mode 0600) and PREFIX.pub")
	alg := fs.String("algorithm", "ecdsa-p256", "key algorithm: ecdsa-p256 or ed25519")
	if err := parseFlags(fs, args, stdout, stderr, `Usage: wasmcp keygen [--out PREFIX] [--algorithm ecdsa-p256|ed25519]

Writes a signing key pair for wasmcp push --sign (PREFIX.key) and for the
operators who verify (PREFIX.pub, given to wasmcp pull --key).

Flags:
`); err != nil {
		return err
	}
	priv, pub, err := signing.GenerateKey(*alg)
	if err != nil {
		return err
	}
	if err := os.WriteFile(*out+".key", priv, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(*out+".pub", pub, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s.key (keep it private) and %s.pub\n", *out, *out)
	return nil
}
