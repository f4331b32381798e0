package protocol

import (
	"strings"
	"testing"
)

// TestHostMetaFastPath: params with no host key are handed on as they
// came, without a copy or an allocation.
func TestHostMetaFastPath(t *testing.T) {
	p := []byte(`{"name":"echo","arguments":{"text":"x"},"_meta":{"progressToken":1}}`)
	got, err := hostMeta(p, "", "", nil)
	if err != nil || &got[0] != &p[0] {
		t.Fatalf("params without a host key were copied or failed: %s %v", got, err)
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = hostMeta(p, "", "", nil) }); n != 0 {
		t.Fatalf("fast path allocates %v times", n)
	}
	// A mention in a value is kept as it came.
	p = []byte(`{"name":"echo","arguments":{"text":"wasmcp/principal"}}`)
	if got, _ := hostMeta(p, "", "", nil); &got[0] != &p[0] {
		t.Fatalf("params re-encoded for a mention in a value: %s", got)
	}
	// The host's own state key stays when it is the one kept.
	p = []byte(`{"_meta":{"wasmcp/state":{"s":1},"wasmcp/principal":{}}}`)
	got, _ = hostMeta(p, "wasmcp/state", "", nil)
	if string(got) != `{"_meta":{"wasmcp/state":{"s":1}}}` {
		t.Fatalf("got %s", got)
	}
	if got := hostResult([]byte(`{"action":"accept","_meta":{"wasmcp/principal":{"name":"x"}}}`)); strings.Contains(string(got), "wasmcp/") {
		t.Fatalf("answer kept a host key: %s", got)
	}
}
