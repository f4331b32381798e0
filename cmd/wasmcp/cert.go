package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wasmcp/wasmcp/cmd/wasmcp/internal/devcert"
)

// cmdCert writes a self-signed certificate and its key for local
// development: what --tls-cert/--tls-key (and so --http3) need on a
// machine without a real certificate.
func cmdCert(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("cert", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", ".", "directory to write cert.pem and key.pem into (created if missing)")
	hosts := fs.String("hosts", "localhost,127.0.0.1,::1", "comma-separated DNS names and IP addresses the certificate is valid for")
	days := fs.Int("days", 30, "days the certificate is valid (1 to 397)")
	force := fs.Bool("force", false, "overwrite existing files")
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage: wasmcp cert [--out DIR] [--hosts LIST] [--days N]

Writes a self-signed TLS certificate (ECDSA P-256) and its private key,
for local development only, as DIR/cert.pem and DIR/key.pem (the key
readable by its owner only). Serve with it:

  wasmcp serve --tools DIR --http 127.0.0.1:8443 --tls-cert DIR/cert.pem --tls-key DIR/key.pem --http3

Clients must trust cert.pem: see "TLS and HTTP/3" in docs/network.md.

Flags:
`)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return errUsage
	}
	if *days < 1 || *days > 397 {
		return fmt.Errorf("--days %d: want 1 to 397", *days)
	}
	certPEM, keyPEM, err := devcert.New(splitList(*hosts), time.Now(), time.Duration(*days)*24*time.Hour)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	certFile, keyFile := filepath.Join(*out, "cert.pem"), filepath.Join(*out, "key.pem")
	if !*force {
		for _, f := range []string{certFile, keyFile} {
			if _, err := os.Lstat(f); err == nil {
				return fmt.Errorf("%s exists (use --force to overwrite)", f)
			}
		}
	}
	if err := devcert.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return err
	}
	if err := devcert.WriteFile(certFile, certPEM, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s and %s (valid %d days for %s)\n", certFile, keyFile, *days, strings.Join(splitList(*hosts), ", "))
	return nil
}
