package protocol

import (
	"reflect"
	"testing"

	"github.com/wasmcp/wasmcp/abi"
)

// TestGuestStateTag checks that the _meta member the server reserves for a
// guest's state is the one abi names.
func TestGuestStateTag(t *testing.T) {
	f, ok := reflect.TypeOf(metaParams{}).FieldByName("GuestState")
	if !ok || f.Tag.Get("json") != abi.MethodState {
		t.Fatalf("metaParams.GuestState is tagged %q; abi.MethodState is %q", f.Tag.Get("json"), abi.MethodState)
	}
}
