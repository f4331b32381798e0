package wasmrewrite

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/tetratelabs/wazero"
)

// nestedModule is a module with one function of depth nested blocks (op
// 0x02) or loops (0x03).
func nestedModule(depth int, op byte) []byte {
	sec := func(id byte, body []byte) []byte {
		return append(append([]byte{id}, AppendU32(nil, uint32(len(body)))...), body...)
	}
	m := []byte(Header)
	m = append(m, sec(SecType, []byte{1, 0x60, 0, 0})...)
	m = append(m, sec(SecFunction, []byte{1, 0})...)
	body := []byte{0}
	body = append(body, bytes.Repeat([]byte{op, 0x40}, depth)...)
	body = append(body, bytes.Repeat([]byte{0x0B}, depth+1)...)
	code := AppendU32([]byte{1}, uint32(len(body)))
	m = append(m, sec(SecCode, append(code, body...))...)
	return m
}

// BenchmarkCompileNesting measures wazero's compile time against block
// nesting depth, which Caps.Nesting bounds (see DefaultCaps):
//
//	go test ./internal/wasmrewrite -run '^$' -bench CompileNesting -benchtime 1x
func BenchmarkCompileNesting(b *testing.B) {
	ctx := context.Background()
	for _, op := range []byte{0x02, 0x03} {
		for _, depth := range []int{1000, 2000, 4000, 8000, 16000} {
			name := map[byte]string{2: "block", 3: "loop"}[op]
			b.Run(fmt.Sprintf("%s/depth=%d", name, depth), func(b *testing.B) {
				m := nestedModule(depth, op)
				for b.Loop() {
					r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigCompiler())
					if _, err := r.CompileModule(ctx, m); err != nil {
						b.Fatal(err)
					}
					r.Close(ctx)
				}
			})
		}
	}
}
