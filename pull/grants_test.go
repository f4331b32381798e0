package pull_test

import (
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/pull"
)

func TestGrants(t *testing.T) {
	asked, err := pull.Grants([]byte(`
timeout = "20s"
[[mount]]
host = "data"
guest = "/data"
[env]
TOKEN = { from = "API_TOKEN" }
UNITS = "metric"
[http]
max_requests = 4
[[http.allow]]
host = "api.example"
headers = { Authorization = { from = "API_TOKEN", prefix = "Bearer " } }
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		`env TOKEN = {"from":"API_TOKEN"}`,
		`env UNITS = "metric"`,
		`http.allow {"headers":{"Authorization":{"from":"API_TOKEN","prefix":"Bearer "}},"host":"api.example"}`,
		`http.max_requests = 4`,
		`mount {"guest":"/data","host":"data"}`,
		`timeout = "20s"`,
	}
	if strings.Join(asked, "\n") != strings.Join(want, "\n") {
		t.Fatalf("grants:\n%s\nwant:\n%s", strings.Join(asked, "\n"), strings.Join(want, "\n"))
	}
	// The same policy written in another order asks for the same.
	again, _ := pull.Grants([]byte("[env]\nUNITS = \"metric\"\nTOKEN = {from = \"API_TOKEN\"}\n"))
	envOnly, _ := pull.Grants([]byte("[env]\nTOKEN = {from = \"API_TOKEN\"}\nUNITS = \"metric\"\n"))
	if b := pull.Beyond(again, envOnly); len(b) != 0 {
		t.Fatalf("beyond: %v", b)
	}
	more, _ := pull.Grants([]byte("timeout = \"20s\"\nmemory = \"1GiB\"\n"))
	if b := pull.Beyond(more, asked); strings.Join(b, "\n") != `memory = "1GiB"`+"\n"+pull.DropPrefix+`http.max_requests = 4` {
		t.Fatalf("beyond: %v", b)
	}
	if g, _ := pull.Grants(nil); len(g) != 0 {
		t.Fatalf("no policy asks for %v", g)
	}
	if _, err := pull.Grants([]byte("memory = ")); err == nil {
		t.Fatal("a broken policy parsed")
	}
	if d := pull.Describe(asked); !strings.Contains(d, "outbound host, with secret headers") || !strings.Contains(d, "environment, from the host") {
		t.Fatalf("describe:\n%s", d)
	}
}

// TestGrantsKeyCase: the policy reader (BurntSushi/toml into a struct)
// matches keys case-insensitively, so `MOUNT = [...]` is a mount and
// `[ENV]` an environment; listed under their own spelling they were filed
// as "limit or setting" by pull's listing, a mount of / or a host secret
// passed off as a limit. A structural key that is not lowercase is
// refused; names (environment variables, header names, tool names) keep
// their case.
func TestGrantsKeyCase(t *testing.T) {
	for _, p := range []string{
		"MOUNT = [{host = \"/\", guest = \"/h\", mode = \"rw\"}]\n",
		"[ENV]\nTOKEN = {from = \"AWS_SECRET_ACCESS_KEY\"}\n",
		"[Http]\n[[Http.allow]]\nhost = \"evil.example\"\n",
		"[http]\n[[http.Allow]]\nhost = \"evil.example\"\n",
		"[[mount]]\nHOST = \"/\"\nguest = \"/h\"\n",
		"[[http.allow]]\nHost = \"evil.example\"\n",
		"[access]\nScopes = [\"x\"]\n",
		"Memory = \"4GiB\"\n",
	} {
		if g, err := pull.Grants([]byte(p)); err == nil || !strings.Contains(err.Error(), "lowercase") {
			t.Errorf("%q: grants %v, err %v", p, g, err)
		}
	}
	// Names keep their case.
	if _, err := pull.Grants([]byte("[env]\nTOKEN = {from = \"X\"}\n[[http.allow]]\nhost = \"a.example\"\nheaders = { Authorization = { from = \"X\" } }\n[access.tools.MyTool]\nscopes = [\"s\"]\n")); err != nil {
		t.Fatal(err)
	}
}

// TestDescribeFlagsToolsDirMounts: a pulled policy asking to mount the
// tools directory (where modules, policies and the lock live), a path
// through "..", or the root, is shown as such, not as an ordinary mount.
func TestDescribeFlagsToolsDirMounts(t *testing.T) {
	for _, c := range []struct {
		host    string
		flagged bool
	}{
		{".", true}, {"./", true}, {"..", true}, {"../tools", true}, {"/", true}, {"sub/../..", true},
		{"data", false}, {"./data", false}, {"/srv/data", false},
	} {
		lines, err := pull.Grants([]byte(`mount = [{host = "` + c.host + `", guest = "/d", mode = "rw"}]`))
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Contains(pull.Describe(lines), "TOOLS DIRECTORY")
		if got != c.flagged {
			t.Errorf("mount of %q: flagged %v, want %v:\n%s", c.host, got, c.flagged, pull.Describe(lines))
		}
	}
}

// TestBeyondEffective: "more or less" compares what the server enforces,
// both ways. Dropping the access table, an item's principals, or a limit
// (which then rises to the server's default) asks for more; dropping a
// grant (a mount, a variable, an outbound rule) asks for less.
func TestBeyondEffective(t *testing.T) {
	grants := func(p string) []string {
		t.Helper()
		g, err := pull.Grants([]byte(p))
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	more := []struct{ name, approved, update string }{
		{"access_dropped", "[access]\nscopes = [\"admin\"]\n", ""},
		{"principals_dropped", "[access]\nscopes = [\"read\"]\n[access.tools.set]\nprincipals = [\"ops\"]\n", "[access]\nscopes = [\"read\"]\n"},
		{"item_access_dropped", "[access.tools.set]\nprincipals = [\"ops\"]\n", "timeout = \"5s\"\n"},
		{"memory_dropped", "memory = \"16MiB\"\n", ""},
		{"timeout_dropped", "timeout = \"2s\"\nmemory = \"16MiB\"\n", "memory = \"16MiB\"\n"},
		{"max_instances_dropped", "max_instances = 1\n", ""},
		{"http_setting_dropped", "[http]\nmax_requests = 2\n[[http.allow]]\nhost = \"a.example\"\n", "[[http.allow]]\nhost = \"a.example\"\n"},
		{"limit_raised", "memory = \"16MiB\"\n", "memory = \"32MiB\"\n"},
	}
	for _, c := range more {
		if b := pull.Beyond(grants(c.update), grants(c.approved)); len(b) == 0 {
			t.Errorf("%s: an update from %q to %q asks for nothing more", c.name, c.approved, c.update)
		}
	}
	less := []struct{ name, approved, update string }{
		{"mount_dropped", "[[mount]]\nhost = \"d\"\nguest = \"/d\"\n[env]\nA = \"1\"\n", "[env]\nA = \"1\"\n"},
		{"env_dropped", "[env]\nA = \"1\"\nB = \"2\"\n", "[env]\nA = \"1\"\n"},
		{"allow_dropped", "[[http.allow]]\nhost = \"a.example\"\n[[http.allow]]\nhost = \"b.example\"\n", "[[http.allow]]\nhost = \"a.example\"\n"},
		{"same", "memory = \"16MiB\"\ntimeout = \"5s\"\n[access]\nscopes = [\"x\"]\n", "timeout = \"5s\"\nmemory = \"16MiB\"\n[access]\nscopes = [\"x\"]\n"},
	}
	for _, c := range less {
		if b := pull.Beyond(grants(c.update), grants(c.approved)); len(b) != 0 {
			t.Errorf("%s: an update from %q to %q asks for %v", c.name, c.approved, c.update, b)
		}
	}
	b := pull.Beyond(nil, grants("[access]\nscopes = [\"admin\"]\n"))
	if d := pull.Describe(b); !strings.Contains(d, "DROPS") || !strings.Contains(d, `access = {"scopes":["admin"]}`) {
		t.Errorf("a dropped access table is shown as:\n%s", d)
	}
}

// TestGrantsShownAsRead: what pull and approve list is what the server
// reads. A key spelled with U+017F (acceſſ folds to access in the policy
// reader) is refused, as is a key holding a control or invisible
// character (ESC [8m "conceal", CR, a bidi override) in a table or a name;
// values are shown with every control and format character escaped.
func TestGrantsShownAsRead(t *testing.T) {
	for _, p := range []string{
		"[acce\u017f\u017f]\nscopes = []\n",
		"[[mount]]\nho\u017ft = \"/\"\nguest = \"/h\"\n",
		"\"memory\x1b[8m\" = \"1GiB\"\n",
		"[env]\n\"A\x1b[8m\" = \"1\"\n",
		"[env]\n\"A\rmount {host=/}\" = \"1\"\n",
		"[[http.allow]]\nhost = \"a.example\"\nheaders = { \"X\u202eY\" = \"v\" }\n",
		"[access.tools.\"t\u200b\"]\nprincipals = [\"ops\"]\n",
	} {
		if g, err := pull.Grants([]byte(p)); err == nil {
			t.Errorf("%q: read as %v, want refused", p, g)
		} else if strings.ContainsAny(err.Error(), "\x1b\r\u202e\u200b") {
			t.Errorf("%q: the refusal holds the raw character: %q", p, err)
		}
	}
	g, err := pull.Grants([]byte(`[env]
A = "x\u009b8m\u202ey"
[[mount]]
host = "d\u007f"
guest = "/d"
`))
	if err != nil {
		t.Fatal(err)
	}
	d := pull.Describe(g)
	if strings.ContainsAny(d, "\u009b\u202e\x7f") || !strings.Contains(d, `\x9b`) || !strings.Contains(d, `\u202e`) || !strings.Contains(d, `\x7f`) {
		t.Errorf("listing holds raw control characters or lost them:\n%q", d)
	}
}
