package wasmcp_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const (
	mod         = "github.com/wasmcp/wasmcp"
	wazero      = "github.com/tetratelabs/wazero"
	redisClient = "github.com/gomodule/redigo"
	bbolt       = "go.etcd.io/bbolt"
)

// A layer is one rule of TestLayering: the packages of roots, and everything
// they import, link none of forbidden except allowed. Names ending in "/..."
// are a package and those under it; other names are that package and those
// under it too (a forbidden "transport" forbids transport/stdio).
type layer struct {
	rule      string   // as ARCHITECTURE.md says it
	dir       string   // the module's directory, "" for the main module
	roots     []string // go list patterns
	forbidden []string
	allowed   []string
}

// everyOther is "every wasmcp package": the main module and the nested
// modules (abi, the Go guest SDK) alike.
var everyOther = []string{mod}

// layers is the "knows nothing of" column of ARCHITECTURE.md's package
// table, one rule per cell, plus the rules of issue 24: what the server
// does not need it does not link.
var layers = []layer{
	{rule: "abi knows nothing of everything else", dir: "abi", roots: []string{"./..."},
		forbidden: everyOther, allowed: []string{mod + "/abi"}},
	{rule: "abi/uritemplate knows nothing of everything else", dir: "abi", roots: []string{"./uritemplate"},
		forbidden: everyOther, allowed: []string{mod + "/abi/uritemplate"}},
	{rule: "contract knows nothing of wazero and every wasmcp package but abi", roots: []string{"./contract"},
		forbidden: append([]string{wazero}, everyOther...), allowed: []string{mod + "/contract", mod + "/abi"}},
	{rule: "host knows nothing of MCP revisions, eras and sessions (protocol), transport, tasks, registry, auth, telemetry", roots: []string{"./host/..."},
		forbidden: []string{mod + "/protocol", mod + "/transport", mod + "/tasks", mod + "/registry", mod + "/auth", mod + "/telemetry"}},
	{rule: "protocol knows nothing of HTTP (net/http), transport, wazero, host, registry, the Redis client (redigo) and bbolt (replica, tasks/boltstore)", roots: []string{"./protocol"},
		forbidden: []string{"net/http", mod + "/transport", wazero, mod + "/host", mod + "/registry", redisClient, bbolt, mod + "/replica", mod + "/tasks/boltstore"}},
	{rule: "transport/stdio knows nothing of wazero, host, registry, net/http, the Redis client (redigo) and bbolt", roots: []string{"./transport/stdio"},
		forbidden: []string{wazero, mod + "/host", mod + "/registry", "net/http", redisClient, bbolt, mod + "/replica", mod + "/tasks/boltstore"}},
	{rule: "transport/mcphttp knows nothing of wazero, host, registry, the Redis client (redigo) and bbolt", roots: []string{"./transport/mcphttp"},
		forbidden: []string{wazero, mod + "/host", mod + "/registry", redisClient, bbolt, mod + "/replica", mod + "/tasks/boltstore"}},
	{rule: "auth knows nothing of MCP messages, host, every wasmcp package but internal/limiter and internal/regfile, wazero", roots: []string{"./auth"},
		forbidden: append([]string{wazero}, everyOther...), allowed: []string{mod + "/auth", mod + "/internal/limiter", mod + "/internal/regfile"}},
	{rule: "tasks knows nothing of wazero, host, protocol, transport, the Redis client (redigo) and bbolt", roots: []string{"./tasks"},
		forbidden: []string{wazero, mod + "/host", mod + "/protocol", mod + "/transport", redisClient, bbolt, mod + "/replica", mod + "/tasks/boltstore"}},
	{rule: "tasks/boltstore knows nothing of wazero, host, protocol, transport, the Redis client (redigo)", roots: []string{"./tasks/boltstore"},
		forbidden: []string{wazero, mod + "/host", mod + "/protocol", mod + "/transport", redisClient, mod + "/replica"}},
	{rule: "tasks/taskstest knows nothing of wazero, host, protocol, transport", roots: []string{"./tasks/taskstest"},
		forbidden: []string{wazero, mod + "/host", mod + "/protocol", mod + "/transport"}},
	{rule: "replica knows nothing of wazero, host, protocol, transport", roots: []string{"./replica"},
		forbidden: []string{wazero, mod + "/host", mod + "/protocol", mod + "/transport"}},
	{rule: "registry knows nothing of transport", roots: []string{"./registry/..."},
		forbidden: []string{mod + "/transport"}},
	{rule: "pull knows nothing of every wasmcp package but pull/oci, pull/signing, internal/privdir and internal/regfile", roots: []string{"./pull"},
		forbidden: everyOther, allowed: []string{mod + "/pull", mod + "/pull/oci", mod + "/pull/signing", mod + "/internal/privdir", mod + "/internal/regfile"}},
	{rule: "pull/oci knows nothing of every other wasmcp package", roots: []string{"./pull/oci"},
		forbidden: everyOther, allowed: []string{mod + "/pull/oci"}},
	{rule: "pull/signing knows nothing of every other wasmcp package", roots: []string{"./pull/signing"},
		forbidden: everyOther, allowed: []string{mod + "/pull/signing"}},
	{rule: "skills knows nothing of every wasmcp package but internal/regfile", roots: []string{"./skills"},
		forbidden: everyOther, allowed: []string{mod + "/skills", mod + "/internal/regfile"}},
	{rule: "telemetry knows nothing of wazero, host, registry", roots: []string{"./telemetry"},
		forbidden: []string{wazero, mod + "/host", mod + "/registry"}},
	{rule: "internal/egress knows nothing of wazero, MCP (protocol), host", roots: []string{"./internal/egress"},
		forbidden: []string{wazero, mod + "/protocol", mod + "/host"}},
	{rule: "internal/limiter knows nothing of every other wasmcp package", roots: []string{"./internal/limiter"},
		forbidden: everyOther, allowed: []string{mod + "/internal/limiter"}},
	{rule: "internal/limiter/limitertest knows nothing of every wasmcp package but internal/limiter", roots: []string{"./internal/limiter/limitertest"},
		forbidden: everyOther, allowed: []string{mod + "/internal/limiter"}},
	{rule: "internal/headervalue knows nothing of every other wasmcp package", roots: []string{"./internal/headervalue"},
		forbidden: everyOther, allowed: []string{mod + "/internal/headervalue"}},
	{rule: "internal/heapfloor knows nothing of every other wasmcp package", roots: []string{"./internal/heapfloor"},
		forbidden: everyOther, allowed: []string{mod + "/internal/heapfloor"}},
	{rule: "internal/logbatch knows nothing of every other wasmcp package", roots: []string{"./internal/logbatch"},
		forbidden: everyOther, allowed: []string{mod + "/internal/logbatch"}},
	{rule: "internal/jsonrpc knows nothing of every other wasmcp package", roots: []string{"./internal/jsonrpc"},
		forbidden: everyOther, allowed: []string{mod + "/internal/jsonrpc"}},
	{rule: "internal/schema knows nothing of every other wasmcp package", roots: []string{"./internal/schema"},
		forbidden: everyOther, allowed: []string{mod + "/internal/schema"}},
	{rule: "internal/wasmrewrite knows nothing of the guest ABI, wazero, every other wasmcp package", roots: []string{"./internal/wasmrewrite"},
		forbidden: append([]string{wazero}, everyOther...), allowed: []string{mod + "/internal/wasmrewrite"}},
	{rule: "internal/privdir knows nothing of every other wasmcp package", roots: []string{"./internal/privdir"},
		forbidden: everyOther, allowed: []string{mod + "/internal/privdir"}},
	{rule: "internal/regfile knows nothing of every other wasmcp package", roots: []string{"./internal/regfile"},
		forbidden: everyOther, allowed: []string{mod + "/internal/regfile"}},
	{rule: "cmd/wasmcp/internal/scaffold knows nothing of every wasmcp package but cmd/wasmcp/internal/buildinfo", roots: []string{"./cmd/wasmcp/internal/scaffold"},
		forbidden: everyOther, allowed: []string{mod + "/cmd/wasmcp/internal/scaffold", mod + "/cmd/wasmcp/internal/buildinfo"}},
	{rule: "cmd/wasmcp/internal/buildinfo and cmd/wasmcp/internal/devcert knows nothing of every wasmcp package", roots: []string{"./cmd/wasmcp/internal/buildinfo", "./cmd/wasmcp/internal/devcert"},
		forbidden: everyOther, allowed: []string{mod + "/cmd/wasmcp/internal/buildinfo", mod + "/cmd/wasmcp/internal/devcert"}},
	{rule: "cmd/wasmcp/internal/flagconf knows nothing of every wasmcp package", roots: []string{"./cmd/wasmcp/internal/flagconf"},
		forbidden: everyOther, allowed: []string{mod + "/cmd/wasmcp/internal/flagconf"}},
	{rule: "cmd/wasmcp/internal/status knows nothing of every wasmcp package", roots: []string{"./cmd/wasmcp/internal/status"},
		forbidden: everyOther, allowed: []string{mod + "/cmd/wasmcp/internal/status"}},
	{rule: "server knows nothing of the command line (cmd/...)", roots: []string{"./server"},
		forbidden: []string{mod + "/cmd"}},
	{rule: "the packages under server know nothing of it, and nothing of the commands", roots: []string{"./auth/...", "./contract/...",
		"./host/...", "./internal/...", "./protocol/...", "./pull/...", "./registry/...", "./replica/...", "./skills/...", "./tasks/...",
		"./telemetry/...", "./transport/..."},
		forbidden: []string{mod + "/server", mod + "/cmd"}},
	{rule: "internal/tstransform knows nothing of every other wasmcp package", roots: []string{"./internal/tstransform"},
		forbidden: everyOther, allowed: []string{mod + "/internal/tstransform"}},
	{rule: "cmd/wasmcp/internal/check (wasmcp check) knows nothing of HTTP and stdio (transport)", roots: []string{"./cmd/wasmcp/internal/check"},
		forbidden: []string{mod + "/transport"}},
	{rule: "internal/guestbuild knows nothing of every other wasmcp package", roots: []string{"./internal/guestbuild"},
		forbidden: everyOther, allowed: []string{mod + "/internal/guestbuild"}},
	{rule: "internal/testkit/e2e knows nothing of every wasmcp package but guestbuild", roots: []string{"./internal/testkit/e2e"},
		forbidden: everyOther, allowed: []string{mod + "/internal/testkit/e2e", mod + "/internal/guestbuild"}},
	{rule: "internal/testkit/redistest knows nothing of every other wasmcp package", roots: []string{"./internal/testkit/redistest"},
		forbidden: everyOther, allowed: []string{mod + "/internal/testkit/redistest"}},
	{rule: "internal/testkit/npmtest knows nothing of every other wasmcp package", roots: []string{"./internal/testkit/npmtest"},
		forbidden: everyOther, allowed: []string{mod + "/internal/testkit/npmtest"}},
	{rule: "internal/testkit/registrytest knows nothing of every other wasmcp package", roots: []string{"./internal/testkit/registrytest"},
		forbidden: everyOther, allowed: []string{mod + "/internal/testkit/registrytest"}},
	{rule: "internal/testkit/sigstoretest knows nothing of every other wasmcp package", roots: []string{"./internal/testkit/sigstoretest"},
		forbidden: everyOther, allowed: []string{mod + "/internal/testkit/sigstoretest"}},
	{rule: "cmd/mcpload knows nothing of wasmcp's server: wazero, host, registry, protocol, transport, tasks, the Redis client (redigo) and bbolt", roots: []string{"./cmd/mcpload"},
		forbidden: []string{wazero, mod + "/host", mod + "/registry", mod + "/protocol", mod + "/transport", mod + "/tasks", redisClient, bbolt, mod + "/replica"}},
	{rule: "the guest SDKs know nothing of the host", roots: []string{"./guest-sdk/..."},
		forbidden: []string{wazero, mod + "/host"}},
	{rule: "the Go guest SDK (a module of its own) knows nothing of the host", dir: "guest-sdk/go", roots: []string{"./..."},
		forbidden: []string{wazero, mod + "/host"}},
	{rule: "the example guests know nothing of the host", roots: []string{"./examples/..."},
		forbidden: []string{wazero, mod + "/host"}},

	// Issue 24: protocol, the transports and the load generator link no
	// shared-state client and no WebAssembly runtime.
	{rule: "protocol, transport/... and cmd/mcpload link no Redis client, bbolt or wazero", roots: []string{"./protocol", "./transport/...", "./cmd/mcpload"},
		forbidden: []string{redisClient, bbolt, wazero}},

	// Issue 27: what a clean build of the server no longer compiles
	// (docs/dependencies.md, "Build cost").
	{rule: "cmd/wasmcp links neither go-redis nor sigstore-go's signing clients", roots: []string{"./cmd/wasmcp"},
		forbidden: []string{"github.com/redis/go-redis", "github.com/sigstore/sigstore-go/pkg/sign"}},
}

// TestLayering checks with `go list -deps` the rules the compiler does not:
// each "knows nothing of" cell of ARCHITECTURE.md's package table (see
// layers) and that the example guests' modules link nothing of the host.
// What internal/ may hold is TestInternalHoldsLeaves's.
func TestLayering(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not available")
	}
	graph := func(dir string, patterns ...string) map[string][]string {
		t.Helper()
		args := append([]string{"list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`}, patterns...)
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("(in %q) go %s: %v\n%s", dir, strings.Join(args, " "), err, out)
		}
		m := map[string][]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if f := strings.Fields(line); len(f) > 0 {
				m[f[0]] = f[1:]
			}
		}
		return m
	}
	under := func(p, name string) bool { return p == name || strings.HasPrefix(p, name+"/") }
	bad := func(l layer, p string) bool {
		for _, a := range l.allowed {
			if p == a {
				return false
			}
		}
		for _, f := range l.forbidden {
			if under(p, f) {
				return true
			}
		}
		return false
	}
	// The main module's graph (and its list of packages) once; a nested
	// module's once each.
	mainPkgs := graph("", "-deps=false", "./...")
	graphs := map[string]map[string][]string{"": graph("", "./...")}
	rootsOf := func(l layer) map[string]bool {
		out := map[string]bool{}
		if l.dir != "" {
			for p := range graph(l.dir, append([]string{"-deps=false"}, l.roots...)...) {
				out[p] = true
			}
			return out
		}
		for _, r := range l.roots {
			name, tree := strings.CutSuffix(strings.TrimPrefix(r, "./"), "/...")
			for p := range mainPkgs {
				if p == mod+"/"+name || tree && strings.HasPrefix(p, mod+"/"+name+"/") {
					out[p] = true
				}
			}
		}
		return out
	}
	for _, l := range layers {
		g := graphs[l.dir]
		if g == nil {
			g = graph(l.dir, "./...")
			graphs[l.dir] = g
		}
		roots := rootsOf(l)
		if len(roots) == 0 {
			t.Errorf("rule %q: %v names no package", l.rule, l.roots)
		}
		// Walk from each root, keeping the path that reached each package
		// so that a failure shows the chain.
		for root := range roots {
			via := map[string]string{root: ""}
			queue := []string{root}
			for len(queue) > 0 {
				p := queue[0]
				queue = queue[1:]
				for _, imp := range g[p] {
					if _, seen := via[imp]; seen {
						continue
					}
					via[imp] = p
					if bad(l, imp) {
						chain := []string{imp}
						for q := p; q != ""; q = via[q] {
							chain = append([]string{q}, chain...)
						}
						t.Errorf("rule %q is broken: %s", l.rule, strings.Join(chain, " → "))
						continue
					}
					queue = append(queue, imp)
				}
			}
		}
	}

	// The example guests that are modules of their own.
	var nested []string
	_ = filepath.WalkDir("examples", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "go.mod" {
			nested = append(nested, filepath.Dir(path))
		}
		return nil
	})
	sort.Strings(nested)
	if len(nested) == 0 {
		t.Error("no example guest module under examples/")
	}
	for _, dir := range nested {
		l := layer{rule: "the example guests (" + dir + ") know nothing of the host", forbidden: []string{wazero, mod + "/host"}}
		for p, imports := range graph(dir, "./...") {
			for _, imp := range imports {
				if bad(l, imp) {
					t.Errorf("rule %q is broken: %s imports %s", l.rule, p, imp)
				}
			}
		}
	}
}
