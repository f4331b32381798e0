package flagconf

import "testing"

func TestConfigMasksSecrets(t *testing.T) {
	for _, c := range []struct{ name, value, want string }{
		{"auth-client-secret", "hunter2", "********"},
		{"auth-token", "abc", "********"},
		{"auth-token-file", "/etc/token", "/etc/token"},
		{"store", "redis://user:pw@localhost:6379/0", "redis://user:%2A%2A%2A%2A%2A%2A%2A%2A@localhost:6379/0"},
		{"store", "redis://localhost:6379/0", "redis://localhost:6379/0"},
		{"tls-key", "/etc/key.pem", "/etc/key.pem"},
	} {
		if got := masked(c.name, c.value); got != c.want {
			t.Errorf("masked(%s, %s) = %s, want %s", c.name, c.value, got, c.want)
		}
	}
}
