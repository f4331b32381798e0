package pulled_test

import (
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/internal/pulled"
)

func TestGrants(t *testing.T) {
	asked, err := pulled.Grants([]byte(`
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
	again, _ := pulled.Grants([]byte("[env]\nUNITS = \"metric\"\nTOKEN = {from = \"API_TOKEN\"}\n"))
	if b := pulled.Beyond(again, asked); len(b) != 0 {
		t.Fatalf("beyond: %v", b)
	}
	more, _ := pulled.Grants([]byte("timeout = \"20s\"\nmemory = \"1GiB\"\n"))
	if b := pulled.Beyond(more, asked); len(b) != 1 || b[0] != `memory = "1GiB"` {
		t.Fatalf("beyond: %v", b)
	}
	if g, _ := pulled.Grants(nil); len(g) != 0 {
		t.Fatalf("no policy asks for %v", g)
	}
	if _, err := pulled.Grants([]byte("memory = ")); err == nil {
		t.Fatal("a broken policy parsed")
	}
	if d := pulled.Describe(asked); !strings.Contains(d, "outbound host, with secret headers") || !strings.Contains(d, "environment, from the host") {
		t.Fatalf("describe:\n%s", d)
	}
}
