package protocol

import (
	"bytes"
	"log/slog"
	"reflect"
	"strings"
	"testing"
)

func TestToolParamHeaders(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	schema := `{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"n":{"type":["integer","null"],"x-mcp-header":"Count"},
		"flag":{"type":"boolean","x-mcp-header":"dry-run"},
		"where":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},
		"ratio":{"type":"number","x-mcp-header":"Ratio"},
		"dup":{"type":"string","x-mcp-header":"region"},
		"bad":{"type":"string","x-mcp-header":"a b"},
		"empty":{"type":"string","x-mcp-header":""},
		"ref":{"$ref":"#/$defs/x","type":"string","x-mcp-header":"Ref"},
		"list":{"type":"array","items":{"type":"string","x-mcp-header":"Item"}},
		"obj":{"type":"object","x-mcp-header":"Obj"}
	}}`
	got := toolParamHeaders("t", []byte(schema), log)
	want := []ParamHeader{
		{Name: "dry-run", Header: "Mcp-Param-Dry-Run", Path: []string{"flag"}},
		{Name: "Count", Header: "Mcp-Param-Count", Path: []string{"n"}},
		{Name: "Zone", Header: "Mcp-Param-Zone", Path: []string{"where", "zone"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	for _, p := range []string{"property=ratio", "property=dup", "property=region", "property=bad", "property=empty", "property=ref", "property=obj"} {
		if !strings.Contains(logs.String(), p) {
			t.Errorf("no warning for %s in %s", p, logs.String())
		}
	}
	if strings.Contains(logs.String(), "Item") {
		t.Error("an annotation under items was read")
	}
	if toolParamHeaders("t", []byte(`{"type":"object"}`), log) != nil {
		t.Fatal("bindings from a schema without annotations")
	}
}
