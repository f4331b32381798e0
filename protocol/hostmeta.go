package protocol

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/bytedance/sonic"
)

// HostMetaPrefix is the prefix of the _meta keys the host owns in what it
// hands a guest (abi.MethodState, MetaPrincipal, …): a client's key with
// this prefix never reaches a guest.
const HostMetaPrefix = "wasmcp/"

// mayHoldHostKey reports whether b could hold a key with HostMetaPrefix:
// its bytes spelled out, or spelled with a JSON escape (a "\u0077asmcp/…"
// or "wasmcp\/…" decodes to the same key). It is the fast path: params
// without either are handed on untouched, with no decoding.
func mayHoldHostKey(b []byte) bool {
	return bytes.Contains(b, []byte("wasmcp")) || bytes.Contains(b, []byte(`\u`))
}

// hostMeta returns params as the host hands them to a guest: every
// _meta key with HostMetaPrefix the client sent removed, except keep (a
// key the host itself put there, "" for none), and, when key is not "",
// _meta[key] set to value. params is returned as is (the same slice, no
// copy) when there is nothing to remove or set. It fails only on params
// that are not a JSON object.
func hostMeta(params []byte, keep, key string, value []byte) ([]byte, error) {
	if key == "" && !mayHoldHostKey(params) {
		return params, nil
	}
	if key == "" && len(bytes.TrimSpace(params)) == 0 {
		return params, nil
	}
	var top map[string]json.RawMessage
	if err := sonic.Unmarshal(params, &top); err != nil {
		return nil, err
	}
	if top == nil {
		if key == "" {
			return params, nil
		}
		top = map[string]json.RawMessage{}
	}
	changed := false
	var meta map[string]json.RawMessage
	if raw, ok := top["_meta"]; ok {
		if isObject(raw) {
			if err := sonic.Unmarshal(raw, &meta); err != nil {
				return nil, err
			}
		} else if key != "" {
			changed = true // a non-object _meta gives way to the host's
		}
	}
	for k := range meta {
		if strings.HasPrefix(k, HostMetaPrefix) && k != keep {
			delete(meta, k)
			changed = true
		}
	}
	if key != "" {
		if meta == nil {
			meta = map[string]json.RawMessage{}
		}
		meta[key] = value
		changed = true
	}
	if !changed {
		return params, nil
	}
	if len(meta) == 0 {
		delete(top, "_meta")
	} else {
		mb, err := sonic.Marshal(meta)
		if err != nil {
			return nil, err
		}
		top["_meta"] = mb
	}
	return sonic.Marshal(top)
}

// hostResult is a client's answer to a guest's request (a sampling,
// elicitation or roots result) as the guest gets it: without the keys
// the host owns in its _meta. An answer that is not an object goes on as
// it came.
func hostResult(result []byte) []byte {
	if !isObject(result) {
		return result
	}
	b, err := hostMeta(result, "", "", nil)
	if err != nil {
		return result
	}
	return b
}
