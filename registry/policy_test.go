package registry

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/host"
)

func lookupFrom(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func TestParsePolicyComplete(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	abs := t.TempDir()
	src := `
memory = "64MiB"
timeout = "1500ms"
max_output = "4MiB"
max_line = 65536
max_instances = 4
max_queue = 8
stderr = "discard"
mode = "mcp-server"
snapshot = false
snapshot_max_memory = "8MiB"

[[mount]]
host = "data"
guest = "/data"

[[mount]]
host = "` + abs + `"
guest = "/scratch/"
mode = "rw"
max_write_bytes = "16MiB"
max_disk_bytes = "2GiB"

[env]
LANG = "C.UTF-8"
TOKEN = { from = "HOST_TOKEN" }
`
	p, err := ParsePolicy([]byte(src), dir, lookupFrom(map[string]string{"HOST_TOKEN": "s3cret"}))
	if err != nil {
		t.Fatal(err)
	}
	want := host.Policy{
		Limits:       host.Limits{MemoryBytes: 64 << 20, Timeout: 1500 * time.Millisecond, OutputBytes: 4 << 20, LineBytes: 65536},
		MaxInstances: 4, MaxQueue: 8, DiscardStderr: true, Mode: host.ModeMCPServer, NoSnapshot: true, SnapshotMaxMemory: 8 << 20,
		Mounts: []host.Mount{
			{HostPath: filepath.Join(dir, "data"), GuestPath: "/data", ReadOnly: true},
			{HostPath: abs, GuestPath: "/scratch", ReadOnly: false, MaxWriteBytes: 16 << 20, MaxDiskBytes: 2 << 30},
		},
		Env: []host.EnvVar{
			{Name: "LANG", Value: "C.UTF-8"},
			{Name: "TOKEN", Value: "s3cret", From: "HOST_TOKEN"},
		},
	}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("got  %+v\nwant %+v", p, want)
	}
}

func TestParsePolicyEmptyIsZero(t *testing.T) {
	p, err := ParsePolicy([]byte("# nothing granted\n"), t.TempDir(), lookupFrom(nil))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, host.Policy{}) {
		t.Fatalf("empty file: got %+v, want the zero policy", p)
	}
}

func TestParsePolicyZeroQueue(t *testing.T) {
	p, err := ParsePolicy([]byte("max_instances = 1\nmax_queue = 0\n"), t.TempDir(), lookupFrom(nil))
	if err != nil {
		t.Fatal(err)
	}
	if p.MaxQueue != host.NoQueue || p.QueueBound() != 0 {
		t.Fatalf("max_queue = 0: got MaxQueue %d bound %d, want NoQueue and 0", p.MaxQueue, p.QueueBound())
	}
	p, err = ParsePolicy([]byte("max_instances = 1\n"), t.TempDir(), lookupFrom(nil))
	if err != nil {
		t.Fatal(err)
	}
	if p.QueueBound() != 64 {
		t.Fatalf("default queue bound %d, want 64", p.QueueBound())
	}
}

func TestParsePolicyErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, src, want string }{
		{"unknown top key", `memroy = "1MiB"`, `unknown key "memroy"`},
		{"unknown mount key", "[[mount]]\nhost = \".\"\nguest = \"/a\"\nreadonly = true", `unknown key "mount.readonly"`},
		{"unknown env key", `env = { X = { from = "A", default = "b" } }`, `unknown key "default"`},
		{"bad toml", `memory = `, "line 1"},
		{"memory unit", `memory = "64MB"`, "unit must be B, KiB, MiB or GiB"},
		{"memory type", `memory = 1.5`, "want an integer"},
		{"memory small", `memory = "1KiB"`, "between 64KiB and 4GiB"},
		{"memory big", `memory = "8GiB"`, "between 64KiB and 4GiB"},
		{"memory pages", `memory = 100000`, "multiple of 64KiB"},
		{"timeout syntax", `timeout = "10"`, "missing unit"},
		{"timeout type", `timeout = 10`, "want a string"},
		{"timeout zero", `timeout = "0s"`, "timeout must be positive"},
		{"output zero", `max_output = 0`, "max_output must be positive"},
		{"line zero", `max_line = 0`, "max_line must be"},
		{"instances negative", `max_instances = -1`, "must not be negative"},
		{"queue without instances", `max_queue = 3`, "max_queue needs max_instances"},
		{"stderr", `stderr = "keep"`, `want "log" or "discard"`},
		{"mode", `mode = "mcp"`, `want "auto", "wasmcp" or "mcp-server"`},
		{"mount no host", "[[mount]]\nguest = \"/a\"", "host is required"},
		{"mount relative guest", "[[mount]]\nhost = \".\"\nguest = \"a\"", "must be an absolute path"},
		{"mount twice", "[[mount]]\nhost = \".\"\nguest = \"/a\"\n[[mount]]\nhost = \".\"\nguest = \"/a/\"", "mounted twice"},
		{"mount missing", "[[mount]]\nhost = \"nope\"\nguest = \"/a\"", "no such file"},
		{"mount not dir", "[[mount]]\nhost = \"file\"\nguest = \"/a\"", "not a directory"},
		{"mount mode", "[[mount]]\nhost = \".\"\nguest = \"/a\"\nmode = \"wr\"", `want "ro" or "rw"`},
		{"write budget read-only", "[[mount]]\nhost = \".\"\nguest = \"/a\"\nmax_write_bytes = 10", "max_write_bytes is for a read-write mount"},
		{"snapshot image cap zero", "snapshot_max_memory = 0", "snapshot_max_memory must be positive"},
		{"write budget zero", "[[mount]]\nhost = \".\"\nguest = \"/a\"\nmode = \"rw\"\nmax_write_bytes = 0", "max_write_bytes = 0"},
		{"quota read-only", "[[mount]]\nhost = \".\"\nguest = \"/a\"\nmax_disk_bytes = 10", "max_disk_bytes is for a read-write mount"},
		{"quota zero", "[[mount]]\nhost = \".\"\nguest = \"/a\"\nmode = \"rw\"\nmax_disk_bytes = 0", "max_disk_bytes = 0"},
		{"write budget unit", "[[mount]]\nhost = \".\"\nguest = \"/a\"\nmode = \"rw\"\nmax_write_bytes = \"1GB\"", "unit must be"},
		{"env unset", `env = { X = { from = "NOT_SET_ANYWHERE" } }`, "host variable NOT_SET_ANYWHERE is not set"},
		{"env name", `env = { "1X" = "v" }`, `env "1X"`},
		{"env type", `env = { X = 3 }`, "want a string or"},
		{"env empty table", `env = { X = {} }`, `needs from`},
		{"env nul", "env = { X = \"a\\u0000b\" }", "NUL"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParsePolicy([]byte(c.src), dir, lookupFrom(nil))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestLoadPolicyFile(t *testing.T) {
	dir := t.TempDir()
	wasm := filepath.Join(dir, "tool.wasm")
	p, err := LoadPolicy(wasm)
	if err != nil || !reflect.DeepEqual(p, host.Policy{}) {
		t.Fatalf("no policy file: got %+v, %v; want the zero policy", p, err)
	}
	if PolicyFile(wasm) != filepath.Join(dir, "tool.policy.toml") {
		t.Fatalf("PolicyFile = %s", PolicyFile(wasm))
	}
	if err := os.WriteFile(PolicyFile(wasm), []byte("[[mount]]\nhost = \".\"\nguest = \"/here\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err = LoadPolicy(wasm)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Mounts) != 1 || p.Mounts[0].HostPath != dir {
		t.Fatalf("relative host path: got %+v, want %s (the policy file's directory)", p.Mounts, dir)
	}
	if err := os.WriteFile(PolicyFile(wasm), []byte("bogus = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPolicy(wasm); err == nil || !strings.Contains(err.Error(), "tool.policy.toml") {
		t.Fatalf("bad file: got %v, want an error naming the file", err)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "17": 17, "3B": 3, "2KiB": 2048, "64MiB": 64 << 20, "1 GiB": 1 << 30} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "1.5MiB", "-1", "1kib", "99999999999999999999", "9000000000GiB"} {
		if _, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) succeeded; want an error", in)
		}
	}
}

// The example policy of docs/policy.md (the README's Policy section until
// the README was split into docs/) parses to what it says.
func TestREADMEExample(t *testing.T) {
	readme, err := os.ReadFile("../docs/policy.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(readme)
	i := strings.Index(s, "# Policy\n")
	if i < 0 {
		t.Fatal("docs/policy.md has no Policy title")
	}
	s = s[i:]
	start := strings.Index(s, "```toml\n")
	end := strings.Index(s[start+8:], "```")
	if start < 0 || end < 0 {
		t.Fatal("the Policy section has no toml example")
	}
	example := s[start+8 : start+8+end]
	dir := t.TempDir()
	cache := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "data", "stations"), 0o755); err != nil {
		t.Fatal(err)
	}
	example = strings.Replace(example, `"/var/cache/weather"`, `"`+cache+`"`, 1)
	if err := os.WriteFile(filepath.Join(dir, "corp-ca.pem"), []byte("-----BEGIN CERTIFICATE-----\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := ParsePolicy([]byte(example), dir, lookupFrom(map[string]string{"WEATHER_API_TOKEN": "t0k3n"}))
	if err != nil {
		t.Fatalf("the example of docs/policy.md: %v", err)
	}
	want := host.Policy{
		// The example shows the structural caps' defaults.
		Limits: host.Limits{MemoryBytes: 64 << 20, Timeout: 10 * time.Second, OutputBytes: 4 << 20, LineBytes: 1 << 20,
			Structure: host.DefaultLimits().Structure},
		MaxInstances: 4, MaxQueue: 16, SnapshotMaxMemory: 64 << 20,
		Mounts: []host.Mount{
			{HostPath: filepath.Join(dir, "data", "stations"), GuestPath: "/stations", ReadOnly: true},
			{HostPath: cache, GuestPath: "/cache", MaxWriteBytes: 16 << 20, MaxDiskBytes: 256 << 20},
		},
		Env: []host.EnvVar{
			{Name: "API_TOKEN", Value: "t0k3n", From: "WEATHER_API_TOKEN"},
			{Name: "UNITS", Value: "metric"},
		},
		Access: host.Access{Grant: host.Grant{Scopes: []string{"weather:read"}}, ExposePrincipal: true,
			Tools: map[string]host.Grant{"set_station": {Principals: []string{"ops"}}}},
	}
	h := p.HTTP
	p.HTTP = nil
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("got  %+v\nwant %+v", p, want)
	}
	if h == nil || len(h.Allow) != 2 || h.Limits.Requests != 16 || h.Limits.Concurrency != 2 || len(h.Networks) != 2 ||
		h.CABundleFile != filepath.Join(dir, "corp-ca.pem") {
		t.Fatalf("http: %+v", h)
	}
	var rules []string
	for _, r := range h.Allow {
		rules = append(rules, r.String())
	}
	if got := strings.Join(rules, "; "); got != "GET https://api.weather.example:443/v2/; GET,HEAD https://*.wikipedia.org:443/" {
		t.Fatalf("rules: %s", got)
	}
	hs := h.Allow[0].Headers
	if len(hs) != 2 || hs[0].Name != "Authorization" || hs[0].Value != "Bearer t0k3n" || hs[1].Name != "X-Client" || hs[1].Value != "wasmcp" {
		t.Fatalf("headers: %+v", hs)
	}
}

func TestParsePolicyTableElements(t *testing.T) {
	p, err := ParsePolicy([]byte("table_elements = 5000\n"), t.TempDir(), lookupFrom(nil))
	if err != nil || p.Limits.TableElements != 5000 {
		t.Fatalf("got %+v, %v", p.Limits, err)
	}
	for _, bad := range []string{"table_elements = 0", "table_elements = -3", "table_elements = 100000000"} {
		if _, err := ParsePolicy([]byte(bad), t.TempDir(), lookupFrom(nil)); err == nil || !strings.Contains(err.Error(), "table_elements must be between 1 and") {
			t.Errorf("%s: got %v", bad, err)
		}
	}
}

func TestParsePolicyStructure(t *testing.T) {
	src := "max_functions = 500000\nmax_types = 10\nmax_imports = 5\nmax_locals = 100\nmax_code = \"1MiB\"\nmax_data_segments = 7\nmax_data = \"2MiB\"\nmax_elem_segments = 3\n"
	p, err := ParsePolicy([]byte(src), t.TempDir(), lookupFrom(nil))
	want := host.Structure{Functions: 500000, Types: 10, Imports: 5, Locals: 100, CodeBytes: 1 << 20, DataSegments: 7, DataBytes: 2 << 20, ElemSegments: 3}
	if err != nil || p.Limits.Structure != want {
		t.Fatalf("got %+v, %v", p.Limits.Structure, err)
	}
	for _, bad := range []string{"max_functions = 0", "max_functions = 1000001", "max_locals = 50001", "max_code = \"2GiB\"", "max_elem_segments = -1"} {
		if _, err := ParsePolicy([]byte(bad), t.TempDir(), lookupFrom(nil)); err == nil || !strings.Contains(err.Error(), "must be between 1 and") {
			t.Errorf("%s: got %v", bad, err)
		}
	}
}

func TestParsePolicyHTTP(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "key.txt"), []byte("filekey\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := `
[http]
max_requests = 5
max_bytes_in = "1MiB"
timeout = "3s"
networks = ["10.0.0.5", "127.0.0.0/8"]

[[http.allow]]
host = "API.GitHub.com."
path = "/repos/"
methods = ["get", "POST"]
headers = { authorization = { from = "GH", prefix = "Bearer " }, X-Key = { file = "key.txt" } }
follow_redirects = true

[[http.allow]]
scheme = "http"
host = "*.example.com"
port = 8080
`
	lookup := func(k string) (string, bool) {
		if k == "GH" {
			return "tok", true
		}
		return "", false
	}
	p, err := ParsePolicy([]byte(src), dir, lookup)
	if err != nil {
		t.Fatal(err)
	}
	h := p.HTTP
	if h == nil || len(h.Allow) != 2 || h.Limits.Requests != 5 || h.Limits.BytesIn != 1<<20 || h.Limits.Timeout != 3*time.Second {
		t.Fatalf("%+v", h)
	}
	r := h.Allow[0]
	if r.String() != "GET,POST https://api.github.com:443/repos/" {
		t.Fatalf("rule %s", r.String())
	}
	if len(r.Headers) != 2 || r.Headers[0].Name != "Authorization" || r.Headers[0].Value != "Bearer tok" ||
		r.Headers[1].Value != "filekey" || r.Headers[1].Source != "file "+filepath.Join(dir, "key.txt") {
		t.Fatalf("headers %+v", r.Headers)
	}
	if !r.FollowRedirects || h.Allow[1].FollowRedirects {
		t.Fatalf("follow_redirects: %v %v", r.FollowRedirects, h.Allow[1].FollowRedirects)
	}
	if h.Allow[1].String() != "GET,HEAD http://*.example.com:8080/" || len(h.Networks) != 2 || h.Networks[0].String() != "10.0.0.5/32" {
		t.Fatalf("%v %v", h.Allow[1].String(), h.Networks)
	}
	for _, bad := range []string{
		"[http]\nbogus = 1",
		"[[http.allow]]\nhost = \"a.com\"\nheaders = { A = { from = \"NOPE\" } }",
		"[[http.allow]]\nhost = \"a.com\"\nheaders = { A = { env = \"GH\" } }",
		"[[http.allow]]\nhost = \"a.com\"\nheaders = { Host = \"x\" }",
		"[[http.allow]]\nhost = \"a.com\"\nheaders = { A = \"x\\r\\ny\" }",
		"[[http.allow]]\nscheme = \"ftp\"\nhost = \"a.com\"",
		"[[http.allow]]\nhost = \"a.*.com\"",
		"[[http.allow]]\nhost = \"a.com\"\nfollow_redirects = true",
		"[[http.allow]]\nhost = \"a.com\"\npath = \"/a/../b\"",
		"[http]\nnetworks = [\"0.0.0.0/0\"]",
		"[http]\nnetworks = [\"nonsense\"]",
		"[http]\nca_bundle = \"missing.pem\"",
	} {
		if _, err := ParsePolicy([]byte(bad), dir, lookup); err == nil {
			t.Errorf("accepted:\n%s", bad)
		}
	}
}

// The example modules' policy files parse.
func TestExamplePolicies(t *testing.T) {
	files, err := filepath.Glob("../examples/wasm/*/*.policy.toml")
	if err != nil || len(files) < 2 {
		t.Fatalf("example policies: %v %v", files, err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ParsePolicy(data, filepath.Dir(f), lookupFrom(map[string]string{"GITHUB_TOKEN": "ghp_test"}))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if p.HTTP == nil || len(p.HTTP.Allow) == 0 {
			t.Errorf("%s grants no outbound HTTP", f)
		}
	}
}

func TestParsePolicyAccess(t *testing.T) {
	src := `
[access]
scopes = ["mcp:admin"]
principals = ["ops"]
expose_principal = true

[access.tools.hash]
principals = ["bob"]

[access.resources."guide://readme"]
scopes = ["docs"]

[access.prompts.review]
scopes = ["review", "mcp:admin"]
`
	p, err := ParsePolicy([]byte(src), t.TempDir(), lookupFrom(nil))
	if err != nil {
		t.Fatal(err)
	}
	a := p.Access
	if !a.ExposePrincipal || !reflect.DeepEqual(a.Grant, host.Grant{Scopes: []string{"mcp:admin"}, Principals: []string{"ops"}}) {
		t.Fatalf("access = %+v", a)
	}
	cases := []struct {
		kind, name, principal string
		scopes                []string
		want                  bool
	}{
		{"tool", "transcode", "alice", []string{"mcp:admin"}, true},
		{"tool", "transcode", "ops", nil, true},
		{"tool", "transcode", "bob", []string{"docs"}, false},
		{"tool", "hash", "bob", nil, true},
		{"tool", "hash", "alice", []string{"mcp:admin"}, false}, // an item's grant replaces the module's
		{"resource", "guide://readme", "x", []string{"docs"}, true},
		{"resource", "guide://other", "x", []string{"docs"}, false},
		{"prompt", "review", "x", []string{"review"}, true},
	}
	for _, c := range cases {
		if got := a.For(c.kind, c.name).Allows(c.principal, c.scopes); got != c.want {
			t.Errorf("%s %s by %s %v: %v, want %v", c.kind, c.name, c.principal, c.scopes, got, c.want)
		}
	}
	if _, err := ParsePolicy([]byte("[access.tools.hash]\n"), t.TempDir(), lookupFrom(nil)); err == nil || !strings.Contains(err.Error(), "everyone") {
		t.Fatalf("an empty item grant: %v", err)
	}
	if _, err := ParsePolicy([]byte("[access]\nscope = [\"x\"]\n"), t.TempDir(), lookupFrom(nil)); err == nil || !strings.Contains(err.Error(), "unknown key") {
		t.Fatalf("a misspelt key: %v", err)
	}
	if p, _ := ParsePolicy(nil, t.TempDir(), lookupFrom(nil)); !p.Access.For("tool", "x").Open() {
		t.Fatal("no [access] is not open")
	}
}
