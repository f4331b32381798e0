package wasmcp_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLayering checks with `go list -deps` the rules the compiler does not:
// protocol, the transports and tasks know nothing of wazero or of the
// module runner (they meet it through package contract), and host knows
// nothing of MCP's protocol or transports.
func TestLayering(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not available")
	}
	deps := func(pkgs ...string) map[string][]string {
		t.Helper()
		args := append([]string{"list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`}, pkgs...)
		out, err := exec.Command("go", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		m := map[string][]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			m[f[0]] = f[1:]
		}
		return m
	}
	const mod = "github.com/wasmcp/wasmcp/"
	check := func(roots []string, forbidden ...string) {
		t.Helper()
		g := deps(roots...)
		for p, imports := range g {
			for _, imp := range imports {
				for _, f := range forbidden {
					if imp == f || strings.HasPrefix(imp, f+"/") {
						t.Errorf("%s imports %s: %v must not depend on %s", p, imp, roots, f)
					}
				}
			}
		}
		if len(g) == 0 {
			t.Errorf("go list -deps %v listed nothing", roots)
		}
	}
	check([]string{"./protocol", "./transport/...", "./tasks", "./contract"},
		"github.com/tetratelabs/wazero", mod+"host")
	check([]string{"./host"}, mod+"protocol", mod+"transport")
	check([]string{"./protocol", "./transport/...", "./cmd/mcpload", "./tasks"},
		"github.com/redis/go-redis", "go.etcd.io/bbolt", mod+"replica", mod+"tasks/boltstore")
	// The load generator is a client: it links none of the server.
	check([]string{"./cmd/mcpload"}, mod+"transport", mod+"protocol", mod+"host", mod+"tasks")
}
