package protocol

import (
	"bytes"
	"encoding/json"
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

// TestHostMetaDecoderTricks (outside review): a client's host key spelled
// so that the host's exact match misses it but a guest's decoder reads it
// — Go's encoding/json (the Go guest SDK reads params._meta with it)
// matches "_META" to a "_meta" tag and "WASMCP/principal" or
// "waſmcp/principal" to a "wasmcp/principal" tag, and a first-wins
// decoder reads the first of two "_meta" keys where the host's map kept
// the last. Before the fix each reached the guest unchanged.
func TestHostMetaDecoderTricks(t *testing.T) {
	forged := `{"name":"alice","scopes":["admin"]}`
	for name, p := range map[string]string{
		"upper _meta":          `{"name":"t","_META":{"wasmcp/principal":` + forged + `}}`,
		"mixed _meta":          `{"name":"t","_Meta":{"wasmcp/principal":` + forged + `},"_meta":{"progressToken":1}}`,
		"upper prefix":         `{"name":"t","_meta":{"WASMCP/principal":` + forged + `}}`,
		"long s":               `{"name":"t","_meta":{"wa` + "\u017f" + `mcp/principal":` + forged + `}}`,
		"escaped long s":       `{"name":"t","_meta":{"wa\u017fmcp/principal":` + forged + `}}`,
		"duplicate _meta":      `{"name":"t","_meta":{"wasmcp/principal":` + forged + `},"_meta":{"progressToken":1}}`,
		"escaped duplicate":    `{"name":"t","_meta":{"wasmcp/principal":` + forged + `},"\u005fmeta":{"progressToken":1}}`,
		"upper without wasmcp": `{"name":"t","_meta":{"WASMCP/PRINCIPAL":` + forged + `}}`,
	} {
		for _, expose := range []bool{false, true} {
			key, val := "", []byte(nil)
			if expose {
				key, val = MetaPrincipal, []byte(`{"name":"bob"}`)
			}
			got, err := hostMeta([]byte(p), "", key, val)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			// A case-insensitive decoder, as the Go guest SDK's.
			var ci struct {
				Meta struct {
					Principal json.RawMessage `json:"wasmcp/principal"`
				} `json:"_meta"`
			}
			if err := json.Unmarshal(got, &ci); err != nil {
				t.Fatalf("%s: %s: %v", name, got, err)
			}
			want := ""
			if expose {
				want = `{"name":"bob"}`
			}
			if string(ci.Meta.Principal) != want {
				t.Errorf("%s (expose %v): a case-insensitive guest reads principal %s from %s", name, expose, ci.Meta.Principal, got)
			}
			// A first-wins decoder, and an exact one: no key of any
			// _meta spelling but the host's begins with the prefix.
			dec := json.NewDecoder(bytes.NewReader(got))
			var seen []string
			depth := 0
			inMeta := false
			for {
				tok, err := dec.Token()
				if err != nil {
					break
				}
				switch v := tok.(type) {
				case json.Delim:
					if v == '{' || v == '[' {
						depth++
					} else {
						depth--
						if depth == 1 {
							inMeta = false
						}
					}
				case string:
					if depth == 1 && dec.More() && strings.EqualFold(v, "_meta") {
						inMeta = true
					} else if depth == 2 && inMeta && strings.Contains(strings.ToLower(strings.ReplaceAll(v, "\u017f", "s")), "wasmcp/") {
						seen = append(seen, v)
					}
				}
			}
			if want := map[bool]int{false: 0, true: 1}[expose]; len(seen) != want {
				t.Errorf("%s (expose %v): host keys %q in %s", name, expose, seen, got)
			}
		}
	}
}

// BenchmarkHostMetaFastPath is the per-call cost of the host-key check on
// params without one (a tools/call of 1 KiB of English prose).
func BenchmarkHostMetaFastPath(b *testing.B) {
	p := []byte(`{"name":"word_count","arguments":{"text":"` + strings.Repeat("The quick brown fox jumps over the lazy dog, and my server counts them. ", 14) + `"},"_meta":{"progressToken":1}}`)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_, _ = hostMeta(p, "", "", nil)
	}
}
