package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
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
	certPEM, keyPEM, err := selfSignedCert(splitList(*hosts), time.Now(), time.Duration(*days)*24*time.Hour)
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
	if err := writeFile(keyFile, keyPEM, 0o600); err != nil {
		return err
	}
	if err := writeFile(certFile, certPEM, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s and %s (valid %d days for %s)\n", certFile, keyFile, *days, strings.Join(splitList(*hosts), ", "))
	return nil
}

// writeFile replaces name with b, created with perm (a key file is never
// readable by others, even for a moment).
func writeFile(name string, b []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// selfSignedCert makes a self-signed server certificate for hosts (DNS
// names or IP addresses), valid from now for d, and returns it and its key
// as PEM. The certificate is its own issuer: a client that trusts it as a
// root accepts it for those hosts, and for nothing else (it is not a CA).
func selfSignedCert(hosts []string, now time.Time, d time.Duration) (certPEM, keyPEM []byte, err error) {
	if len(hosts) == 0 {
		return nil, nil, errors.New("--hosts: name at least one host")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("generating the key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, nil, fmt.Errorf("generating the serial number: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: hosts[0], Organization: []string{"wasmcp development"}},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(d),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  false,
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if validHostname(h) {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		} else {
			return nil, nil, fmt.Errorf("--hosts: %q is neither an IP address nor a DNS name", h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the certificate: %w", err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the key: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), nil
}

// validHostname accepts DNS names of letters, digits, hyphens and dots,
// with an optional leading "*." wildcard label.
func validHostname(h string) bool {
	h = strings.TrimPrefix(h, "*.")
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
