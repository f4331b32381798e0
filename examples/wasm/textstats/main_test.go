package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

// structured returns the structuredContent of the final response, as JSON.
func structured(t *testing.T, msgs []map[string]any) string {
	t.Helper()
	return string(msgs[len(msgs)-1]["result"].(map[string]any)["structuredContent"].(json.RawMessage))
}

func run(t *testing.T, args string) []map[string]any {
	t.Helper()
	s := guest.New("textstats", "1.0.0")
	guest.AddTool(s, guest.Tool{Name: "text_stats", Description: "d"}, textStats)
	req := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"text_stats","arguments":%s,"_meta":{"progressToken":"t"}}}`, args)
	var out bytes.Buffer
	if err := s.Serve(strings.NewReader(req), &out); err != nil {
		t.Fatal(err)
	}
	var msgs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var raw map[string]json.RawMessage
		json.Unmarshal([]byte(l), &raw)
		m := map[string]any{}
		for k, v := range raw {
			var x any
			json.Unmarshal(v, &x)
			m[k] = x
		}
		if r, ok := m["result"].(map[string]any); ok {
			var rr map[string]json.RawMessage
			json.Unmarshal(raw["result"], &rr)
			if sc, ok := rr["structuredContent"]; ok {
				r["structuredContent"] = sc
			}
		}
		msgs = append(msgs, m)
	}
	return msgs
}

func TestTextStats(t *testing.T) {
	text := "The cat sat. The cat ran!\nDon't stop — it's well-known?\n"
	msgs := run(t, fmt.Sprintf(`{"text":%q,"top":3}`, text))
	var progress, logs int
	for _, m := range msgs[:len(msgs)-1] {
		switch m["method"] {
		case "notifications/progress":
			progress++
		case "notifications/message":
			logs++
		}
	}
	if progress != 5 || logs != 2 {
		t.Errorf("progress %d logs %d", progress, logs)
	}
	got := structured(t, msgs)
	want := `{"characters":56,"words":10,"lines":2,"sentences":3,"averageWordLength":4.1,"topWords":[{"word":"cat","count":2},{"word":"the","count":2},{"word":"don't","count":1}]}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestTextStatsEdges(t *testing.T) {
	for _, c := range []struct {
		in   StatsIn
		want string
	}{
		{StatsIn{}, `{"characters":0,"words":0,"lines":0,"sentences":0,"averageWordLength":0,"topWords":[]}`},
		{StatsIn{Text: "v1.2 is out... Really", Top: new(0)}, `{"characters":21,"words":5,"lines":1,"sentences":2,"averageWordLength":2.8,"topWords":[]}`},
		{StatsIn{Text: "the the the dog", SkipStopWords: true}, `{"characters":15,"words":4,"lines":1,"sentences":1,"averageWordLength":3,"topWords":[{"word":"dog","count":1}]}`},
	} {
		msgs := run(t, mustJSON(c.in))
		got := structured(t, msgs)
		if got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	msgs := run(t, `{"text":"x","top":500}`)
	if r := msgs[len(msgs)-1]["result"].(map[string]any); r["isError"] != true {
		t.Errorf("top 500: %v", r)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
