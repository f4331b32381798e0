package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestCert(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "tls")
	code, out, errs := runCLI("cert", "--out", dir, "--hosts", "localhost,127.0.0.1,::1,dev.example", "--days", "7")
	if code != 0 || !strings.Contains(out, "cert.pem") {
		t.Fatalf("exit %d: %s %s", code, out, errs)
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if st, err := os.Stat(keyFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", st, err)
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(certFile)
	blk, _ := pem.Decode(b)
	cert, err := x509.ParseCertificate(blk.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if cert.IsCA || cert.NotAfter.Sub(time.Now()) > 7*24*time.Hour || len(pair.Certificate) != 1 {
		t.Fatalf("certificate: CA %v, until %v", cert.IsCA, cert.NotAfter)
	}
	// A client that trusts the file accepts it for the named hosts only.
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	for host, ok := range map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true, "dev.example": true, "other.example": false, "10.0.0.1": false} {
		_, err := cert.Verify(x509.VerifyOptions{DNSName: host, Roots: roots})
		if (err == nil) != ok {
			t.Errorf("%s: verify %v, want ok=%v", host, err, ok)
		}
	}
	// Existing files are kept unless --force.
	if code, _, errs := runCLI("cert", "--out", dir); code != 1 || !strings.Contains(errs, "--force") {
		t.Fatalf("overwrite without --force: %d %s", code, errs)
	}
	if code, _, errs := runCLI("cert", "--out", dir, "--force"); code != 0 {
		t.Fatalf("--force: %d %s", code, errs)
	}
	for _, args := range [][]string{{"--hosts", ""}, {"--hosts", "bad host"}, {"--days", "0"}, {"--days", "400"}, {"extra"}} {
		if code, _, _ := runCLI(append([]string{"cert", "--out", t.TempDir()}, args...)...); code == 0 {
			t.Errorf("%v accepted", args)
		}
	}
}
