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

// mayHoldHostKey reports whether b could hold a key with HostMetaPrefix
// as some guest's JSON decoder reads it: its bytes spelled in any ASCII
// case (Go's encoding/json matches a struct tag "_meta" or
// "wasmcp/principal" case-insensitively, and folds "ſ" to "s"), or spelled
// with a JSON escape (a "\u0077asmcp/…" or "wasmcp\/…" decodes to the same
// key). It is the fast path: params with none of them ("mcp" in any case,
// "\u") are handed on untouched, with no decoding.
//
// The search runs bytes.IndexByte (vectorized) for 'p' and 'P' and looks
// back two bytes at each, rather than a loop over every byte.
func mayHoldHostKey(b []byte) bool {
	if bytes.Contains(b, []byte(`\u`)) {
		return true
	}
	for _, p := range [2]byte{'p', 'P'} {
		for off := 0; ; {
			i := bytes.IndexByte(b[off:], p)
			if i < 0 {
				break
			}
			j := off + i
			if j >= 2 && b[j-2]|0x20 == 'm' && b[j-1]|0x20 == 'c' {
				return true
			}
			off = j + 1
		}
	}
	return false
}

// hasHostPrefix reports whether k begins with HostMetaPrefix as a
// case-folding decoder would read it ("WASMCP/…", "waſmcp/…").
func hasHostPrefix(k string) bool {
	n := 0
	for i := range k {
		if n == len(HostMetaPrefix) {
			return strings.EqualFold(k[:i], HostMetaPrefix)
		}
		n++
	}
	return n == len(HostMetaPrefix) && strings.EqualFold(k, HostMetaPrefix)
}

// isMetaKey reports whether a top-level params key is _meta as a
// case-folding decoder would read it ("_META", "_Meta").
func isMetaKey(k string) bool { return len(k) == len("_meta") && strings.EqualFold(k, "_meta") }

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
		// Two "_meta" keys (one of them perhaps escaped): the map kept
		// the last, a first-wins decoder in the guest would read the
		// other. Re-encoding leaves one.
		if bytes.Contains(params, []byte(`\u`)) || bytes.Count(params, []byte(`"_meta"`)) > 1 {
			changed = true
		}
	}
	// "_META", "_Meta" …: one _meta to a case-insensitive decoder. Their
	// keys (less the host's) join _meta, and the variants go.
	for k, raw := range top {
		if k == "_meta" || !isMetaKey(k) {
			continue
		}
		delete(top, k)
		changed = true
		var m map[string]json.RawMessage
		if !isObject(raw) || sonic.Unmarshal(raw, &m) != nil {
			continue
		}
		for mk, mv := range m {
			if hasHostPrefix(mk) {
				continue
			}
			if meta == nil {
				meta = map[string]json.RawMessage{}
			}
			if _, ok := meta[mk]; !ok {
				meta[mk] = mv
			}
		}
	}
	for k := range meta {
		if hasHostPrefix(k) && k != keep {
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

// hostResult is a JSON object without the keys the host owns in its
// _meta: a client's answer to a guest's request (a sampling, elicitation
// or roots result) as the guest gets it, and a guest's notification or
// request params as the client gets them. What is not an object goes on
// as it came.
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

// withoutHostKeys is a guest's _meta object without the keys with
// HostMetaPrefix, however spelled (the host owns every wasmcp/ key a
// client sees); nil when none is left, meta itself when it holds none. A
// _meta that is not an object is returned as it is (the schema checks
// refuse it elsewhere).
func withoutHostKeys(meta json.RawMessage) json.RawMessage {
	if len(meta) == 0 || !mayHoldHostKey(meta) || !isObject(meta) {
		return meta
	}
	var m map[string]json.RawMessage
	if sonic.Unmarshal(meta, &m) != nil {
		return meta
	}
	cut := false
	for k := range m {
		if hasHostPrefix(k) {
			delete(m, k)
			cut = true
		}
	}
	if !cut {
		return meta
	}
	if len(m) == 0 {
		return nil
	}
	b, err := sonic.Marshal(m)
	if err != nil {
		return meta
	}
	return b
}
