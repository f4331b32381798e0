package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/pull"
	"github.com/wasmcp/wasmcp/pull/oci"
	"github.com/wasmcp/wasmcp/pull/signing"
	"github.com/wasmcp/wasmcp/registry"
	"github.com/wasmcp/wasmcp/server"
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
	pub := pull.Publication{Module: path, Name: registry.ModuleName(path), Policy: *policyFile, SignKey: *signKey}
	if pub.Policy == "" {
		pub.Policy, pub.PolicyOptional = registry.PolicyFile(path), true
	}
	c, err := of.client()
	if err != nil {
		return err
	}
	done, err := pull.Push(ctx, c, ref, pub)
	if done == nil {
		return err
	}
	fmt.Fprintf(stdout, "pushed %s@%s (module %s", ref.Registry+"/"+ref.Repository, done.Digest, host.FormatBytes(int64(done.ModuleSize)))
	if done.Policy {
		fmt.Fprintf(stdout, ", policy %s", filepath.Base(pub.Policy))
	}
	fmt.Fprintln(stdout, ")")
	if err != nil || done.Signature == "" {
		return err
	}
	fmt.Fprintf(stdout, "signed %s (Sigstore bundle, referrer %s)\n", done.Digest, done.Signature)
	return nil
}

func cmdPull(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pull", flag.ContinueOnError)
	var of ociFlags
	of.register(fs)
	out := fs.String("o", ".", "tools directory (created if missing): its "+pull.LockName+" gets the tool")
	name := fs.String("name", "", "the tool's name in the tools directory (default: the repository's last element)")
	key := fs.String("key", "", "the expected signer's public key (PEM)")
	identity := fs.String("identity", "", "the expected signer's certificate identity (keyless; with --issuer and --trusted-root)")
	identityRe := fs.String("identity-regexp", "", "a regular expression the signer's whole identity must match, anchored at both ends (instead of --identity)")
	issuer := fs.String("issuer", "", "the expected OIDC issuer of a keyless signature")
	root := fs.String("trusted-root", "", "Sigstore trusted-root JSON file keyless signatures are checked against, offline")
	unsigned := fs.Bool("unsigned", false, "accept the tool without a signature (the lock records signed = false)")
	downgrade := fs.Bool("allow-downgrade", false, "pin the digest the tag names even if this lock moved away from it before (a rollback otherwise refused)")
	cacheDir := fs.String("cache-dir", "", "the cache directory (the pulled blobs go to its oci subdirectory; default "+host.DefaultCacheDir()+")")
	collide := fs.Bool("allow-collision", false, "record the tool even if it declares a name a module of the tools directory declares (the module serving the name keeps it; the other is refused whole)")
	pos, err := parseInterspersed(fs, args, stdout, stderr, `Usage: wasmcp pull REGISTRY/REPOSITORY[:TAG|@DIGEST] [-o DIR] [--key PUB | --identity ID --issuer URL --trusted-root FILE | --unsigned]

Resolves the reference to a digest once, fetches and verifies the module
(every blob's digest, the signature against the expected signer), and
records it in DIR/`+pull.LockName+` pinned by that digest. Prints the digest, the
signer, the names the module declares (tools, resources, templates,
prompts; its describe run as serve runs it, without its grants) and the
grants its policy asks for; they are pending until 'wasmcp approve NAME'
(a module asking for nothing is approved at once; an update declaring a
name not approved before waits too). A module declaring a name another
module of DIR declares is refused, naming both, unless --allow-collision.
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
	ref, err := oci.ParseRef(pos[0])
	if err != nil {
		return err
	}
	c, err := of.client()
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
	engine, err := describeEngine(*cacheDir)
	if err != nil {
		return err
	}
	defer engine.Close(context.Background())
	taken := func(ctx context.Context, name string) (map[string]string, error) {
		return server.DirNames(ctx, engine, *out, name, func(file string, err error) {
			fmt.Fprintf(stderr, "wasmcp pull: %s does not load (serve refuses it too), its names not compared: %s\n", pull.Printable(file), pull.Printable(err.Error()))
		})
	}
	p, err := pull.Pull(ctx, pull.Request{Dir: *out, Ref: ref, Name: *name, Source: c, Cache: cache, AllowDowngrade: *downgrade,
		Describe: server.PulledNames(engine), Taken: taken, AllowCollision: *collide,
		Signer: pull.Signer{Key: *key, Identity: *identity, IdentityRegexp: *identityRe, Issuer: *issuer, TrustedRoot: *root, Unsigned: *unsigned}})
	if err != nil {
		return err
	}
	printPulled(stdout, ref, p, *out)
	return nil
}

// describeEngine is the engine wasmcp pull describes modules on: serve's
// defaults (limits, describe deadline, load ceiling), with the compilation
// cache of cacheDir ("" the default, "-" none), logging nothing.
func describeEngine(cacheDir string) (*host.Engine, error) {
	cfg := server.DefaultEngine()
	cfg.CacheDir = cacheDir
	cfg.Logger = slog.New(slog.DiscardHandler)
	return host.NewEngine(cfg)
}

// printPulled shows what wasmcp pull verified and recorded.
func printPulled(stdout io.Writer, ref oci.Ref, p *pull.Pulled, dir string) {
	fmt.Fprintf(stdout, "pulled %s\n  digest  %s\n", ref, p.Digest)
	if p.Fetched.Signer != "" {
		fmt.Fprintf(stdout, "  signer  %s\n", pull.Printable(p.Fetched.Signer))
	} else {
		fmt.Fprintf(stdout, "  signer  none (accepted unsigned: signed = false)\n")
	}
	fmt.Fprintf(stdout, "  module  %s, verified in %s\n", host.FormatBytes(int64(len(p.Fetched.Module))), p.Took.Round(time.Millisecond))
	if p.Fetched.Names != nil {
		fmt.Fprintf(stdout, "it declares:\n%s", pull.DescribeNames(p.Fetched.Names, p.NewNames))
	}
	for _, c := range p.Collisions {
		kind, nm, _ := strings.Cut(c.Name, " ")
		fmt.Fprintf(stdout, "  COLLISION (--allow-collision): %s %s is declared by %s too\n", kind, pull.Printable(nm), pull.Printable(c.File))
	}
	fmt.Fprintf(stdout, "it asks for:\n%s", pull.Describe(p.Fetched.Grants))
	n := p.Tool.Name
	switch p.Outcome {
	case pull.Within:
		fmt.Fprintf(stdout, "within what was approved for %s: serve picks it up\n", n)
	case pull.NothingToApprove:
		fmt.Fprintf(stdout, "nothing to approve: serve picks it up\n")
	default:
		if p.Beyond != nil {
			fmt.Fprintf(stdout, "beyond what was approved:\n%s", pull.Describe(p.Beyond))
		}
		if p.NewNames != nil {
			fmt.Fprintf(stdout, "names not approved before:\n%s", pull.DescribeNames(p.NewNames, nil))
		}
		fmt.Fprintf(stdout, "pending: run 'wasmcp approve %s --digest %s -o %s' to grant it (serve keeps the approved version until then)\n", n, p.Digest, dir)
	}
}

func cmdApprove(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("approve", flag.ContinueOnError)
	out := fs.String("o", ".", "tools directory holding "+pull.LockName)
	want := fs.String("digest", "", "approve only if the pending version is this digest (the one wasmcp pull showed): a running serve may have recorded a newer version, asking for more, since")
	pos, err := parseInterspersed(fs, args, stdout, stderr, `Usage: wasmcp approve NAME [--digest sha256:…] [-o DIR]

Approves the grants the pulled tool NAME asks for (shown by wasmcp pull
and in the lock's pending list) and the names it declares (pending_names;
the ones not approved before are marked NEW), and pins the version that
asked for them;
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
	a, err := pull.Approve(*out, pos[0], *want)
	if err != nil {
		return err
	}
	if a.NothingPending {
		fmt.Fprintf(stdout, "%s: nothing pending; approved:\n%s", a.Tool.Name, pull.Describe(*a.Tool.Approved))
	} else {
		fmt.Fprintf(stdout, "approved %s at %s:\n%s", a.Tool.Name, a.Tool.Digest, pull.Describe(*a.Tool.Approved))
	}
	if a.Tool.Names != nil {
		fmt.Fprintf(stdout, "with the names it declares:\n%s", pull.DescribeNames(*a.Tool.Names, a.NewNames))
	} else {
		fmt.Fprintf(stdout, "names: not recorded yet (a lock from before names; serve records the pinned version's)\n")
	}
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
	if err := signing.WriteKeyPair(*out, *alg); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s.key (keep it private) and %s.pub\n", *out, *out)
	return nil
}
