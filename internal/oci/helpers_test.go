package oci_test

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// emptyDockerConfig is a Docker configuration with no credentials, so a
// test never reads the user's own.
func emptyDockerConfig(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(p, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeDockerConfig writes a configuration as docker login does.
func writeDockerConfig(t *testing.T, host, user, password string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.json")
	a := base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
	if err := os.WriteFile(p, fmt.Appendf(nil, `{"auths":{%q:{"auth":%q}}}`, host, a), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
