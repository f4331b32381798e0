package host

import (
	"context"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
)

// panickingRuntime is a wazero.Runtime whose CompileModule panics as
// wazero's validator did on a function naming no type.
type panickingRuntime struct{ wazero.Runtime }

func (panickingRuntime) CompileModule(context.Context, []byte) (wazero.CompiledModule, error) {
	panic("index out of range [48] with length 5")
}

// A module whose function names a type the module does not have made
// wazero 1.12's validator panic (an index out of range in the call's
// signature check, found by FuzzInstrument): loading it took the whole
// server down. It is refused at load with a clear error.
func TestFunctionNamingNoTypeRefused(t *testing.T) {
	sec := func(id byte, body ...byte) []byte {
		return append(append([]byte{id}, appendU32(nil, uint32(len(body)))...), body...)
	}
	var m []byte
	m = append(m, "\x00asm\x01\x00\x00\x00"...)
	m = append(m, sec(1, 1, 0x60, 0, 0)...) // type 0: () -> ()
	m = append(m, sec(3, 2, 0, 48)...)      // function 0: type 0; function 1: type 48, which does not exist
	m = append(m, sec(5, 1, 0, 1)...)       // memory: min 1
	exports := []byte{2}
	exports = append(appendName(exports, "_start"), 0x00, 0)
	exports = append(appendName(exports, "memory"), 0x02, 0)
	m = append(m, sec(7, exports...)...)
	f0 := []byte{0, 0x10, 1, 0x0B} // no locals; call 1; end
	f1 := []byte{0, 0x0B}          // no locals; end
	code := append(append(append([]byte{2}, byte(len(f0))), f0...), append([]byte{byte(len(f1))}, f1...)...)
	m = append(m, sec(10, code...)...)
	for _, e := range []*Engine{newEngine(t, Limits{}), instrumentingEngine(t, Limits{})} {
		_, err := e.Load(context.Background(), "badtype", m, Policy{})
		if err == nil || !strings.Contains(err.Error(), "names type 48") {
			t.Fatalf("Load = %v; want a refusal naming the missing type", err)
		}
	}
}

// A panic inside wazero's compilation of a module becomes that module's
// load error: the server goes on serving the others.
func TestCompilePanicIsALoadError(t *testing.T) {
	code, err := guardCompile(context.Background(), panickingRuntime{}, nil)
	if code != nil || err == nil || !strings.Contains(err.Error(), "wazero failed on this module: index out of range") {
		t.Fatalf("guardCompile = %v, %v; want the panic as an error", code, err)
	}
}
