package host

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/imports/wasi_snapshot_preview1"

	"github.com/wasmcp/wasmcp/internal/wasmrewrite"
)

// prepare checks a module's structure against the host's caps before
// wazero sees it (wazero's decoder allocates what a module declares and
// its compiler is superlinear in block nesting: wasmrewrite.Check) and
// bounds its tables to l.TableElements (wasmrewrite.ClampTables). It
// returns the module to compile and what Check learned of it.
func prepare(wasm []byte, l Limits) ([]byte, *wasmrewrite.Info, error) {
	info, err := wasmrewrite.Check(wasm, l.Structure.caps())
	if err != nil {
		var over *wasmrewrite.OverCapError
		if errors.As(err, &over) && structureKeys[over.Cap] != "" {
			return nil, nil, fmt.Errorf("does not compile: %w (checked before compiling; limit %s)", err, structureKeys[over.Cap])
		}
		return nil, nil, fmt.Errorf("does not compile: %w (checked before compiling)", err)
	}
	out, err := wasmrewrite.ClampTables(wasm, l.TableElements)
	if err != nil {
		return nil, nil, fmt.Errorf("refused: %w (limit table_elements)", err)
	}
	return out, info, nil
}

// checkImports checks every import against what the host provides: WASI
// preview 1 functions, under their own names and signatures. Memory
// imports and other modules' functions are refused earlier, in Load.
func checkImports(r wazero.Runtime, code wazero.CompiledModule, info *wasmrewrite.Info) error {
	for _, im := range info.Imports {
		kind := map[byte]string{wasmrewrite.ImportTable: "a table", wasmrewrite.ImportGlobal: "a global", wasmrewrite.ImportTag: "a tag"}[im.Kind]
		if kind != "" {
			return fmt.Errorf("imports %s as %s.%s; the host provides only %s functions", kind, im.Module, im.Name, wasi_snapshot_preview1.ModuleName)
		}
	}
	wasi := r.Module(wasi_snapshot_preview1.ModuleName)
	if wasi == nil {
		return fmt.Errorf("the host's %s module is missing", wasi_snapshot_preview1.ModuleName)
	}
	provided := wasi.ExportedFunctionDefinitions()
	for _, f := range code.ImportedFunctions() {
		mod, name, _ := f.Import()
		host, ok := provided[name]
		if !ok {
			return fmt.Errorf("imports %s.%s, which the host's WASI does not provide", mod, name)
		}
		if !sameTypes(f.ParamTypes(), host.ParamTypes()) || !sameTypes(f.ResultTypes(), host.ResultTypes()) {
			return fmt.Errorf("imports %s.%s with type %s; the host's is %s", mod, name, signature(f), signature(host))
		}
	}
	return nil
}

func sameTypes(a, b []api.ValueType) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// signature renders a function type: (i32, i32) -> (i32).
func signature(f api.FunctionDefinition) string {
	names := func(ts []api.ValueType) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = api.ValueTypeName(t)
		}
		return "(" + strings.Join(s, ", ") + ")"
	}
	return names(f.ParamTypes()) + " -> " + names(f.ResultTypes())
}
