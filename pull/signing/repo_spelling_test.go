package signing

import "testing"

// TestRepositorySpelling: a signature names the repository it is for as
// its signer spelled it. One registry spelled otherwise (the host in
// another case, a trailing dot, Docker Hub as docker.io, index.docker.io
// or registry-1.docker.io, as cosign names it) is the same repository: the
// signature verifies. Another repository, however close, is refused: a
// path in another case (repositories are case-sensitive), another host,
// another port, a host that only ends like this one.
func TestRepositorySpelling(t *testing.T) {
	for _, c := range []struct {
		signed, want string
		ok           bool
	}{
		{"r.example/tools/echo", "r.example/tools/echo", true},
		{"R.Example/tools/echo", "r.example/tools/echo", true},
		{"r.example./tools/echo", "r.example/tools/echo", true},
		{"index.docker.io/acme/echo", "docker.io/acme/echo", true},
		{"docker.io/acme/echo", "registry-1.docker.io/acme/echo", true},
		{"r.example/Tools/echo", "r.example/tools/echo", false},
		{"r.example:5000/tools/echo", "r.example/tools/echo", false},
		{"evil.r.example/tools/echo", "r.example/tools/echo", false},
		{"r.example/tools/echo2", "r.example/tools/echo", false},
		{"r.example/tools", "r.example/tools/echo", false},
		{"docker.io.evil/acme/echo", "docker.io/acme/echo", false},
	} {
		err := checkRepository([]string{c.signed}, c.want, true)
		if (err == nil) != c.ok {
			t.Errorf("signed for %q, pulled as %q: %v, want ok=%v", c.signed, c.want, err, c.ok)
		}
	}
}
