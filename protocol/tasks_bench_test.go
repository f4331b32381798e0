package protocol

import (
	"context"
	"testing"
)

// BenchmarkToolCallModes compares a modern tools/call answered inline
// (forbidden tool) with one that may become a task but answers inside the
// window (the relay's path: a goroutine, a timer, a slot reservation).
func BenchmarkToolCallModes(b *testing.B) {
	f := newTaskFixture(b, Options{})
	for _, c := range []struct{ name, tool string }{{"inline", "plain"}, {"escalatable", "quick"}} {
		line := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{"` + MetaProtocolVersion + `":"2026-07-28","` +
			MetaClientCapabilities + `":` + taskExt + `},"name":"` + c.tool + `"}}`)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				msg, _, perr := Decode(line)
				if perr != nil {
					b.Fatal(perr)
				}
				if r := f.srv.Handle(context.Background(), nil, msg, nil, Hint{}); r.Code != 0 {
					b.Fatalf("%s", r.Body)
				}
			}
		})
	}
}
