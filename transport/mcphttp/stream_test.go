package mcphttp

import (
	"bytes"
	"strings"
	"testing"
)

// TestWriteEventNoBareLineBreaks: a message holding CR, LF or CRLF is split
// into data lines at each of them, so a parser that ends lines at CR sees
// no field of the message's making, and the data joins back to the
// message's JSON (line breaks become LF, JSON whitespace).
func TestWriteEventNoBareLineBreaks(t *testing.T) {
	msg := []byte("{\"a\":1,\r\"b\":2,\n\"c\":3,\r\n\"d\":4}\revent: evil\rid: 9\r")
	var buf bytes.Buffer
	if err := writeEvent(&buf, "s-1", msg); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if strings.Contains(out, "\r") {
		t.Fatalf("raw CR on the wire: %q", out)
	}
	// Parse as a spec-conformant SSE parser would (lines end at CR, LF, CRLF).
	var data []string
	for _, line := range strings.Split(out, "\n") {
		switch {
		case line == "":
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		case strings.HasPrefix(line, "id: "):
			if line != "id: s-1" {
				t.Fatalf("forged id line %q", line)
			}
		default:
			t.Fatalf("line that is no data line: %q in %q", line, out)
		}
	}
	want := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(msg))
	if got := strings.Join(data, "\n"); got != want {
		t.Fatalf("data %q, want %q", got, want)
	}
}
