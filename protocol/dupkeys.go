package protocol

import (
	"bytes"
	"encoding/json"
	"strings"
)

// ambiguousKey returns a member name that params holds twice, as a
// case-folding decoder reads names ("name" and "NAME", "n\u0061me"), at
// its top level or in its ref and argument objects, and "" when there is
// none. The host reads params with sonic (case-insensitive, the last of
// two wins) and hands the guest the same bytes: a guest whose decoder
// matches names exactly (the C and Rust SDKs) or keeps the first would
// read another tool name, URI or argument than the one whose grant the
// host checked. One pass over the bytes, without allocating for params
// whose names are plain ASCII.
func ambiguousKey(b []byte) string {
	k, _, _ := paramNames(b)
	return k
}

// paramNames is ambiguousKey's pass, which also finds a name that is one
// of the spec's only without regard to case or Unicode folding
// ("Name", "ARGUMENTS", "urI"): JSON-RPC names are case-sensitive, so a
// gateway matching names exactly would not read it as the spec's member
// while a loose decoder (the host's sonic, Go's encoding/json) would.
// twice is a name given twice; got is such a name as written and want the
// spec's.
func paramNames(b []byte) (twice, got, want string) {
	var buf1, buf2 [16][]byte
	top := buf1[:0] // the names of the top-level object
	sub := buf2[:0] // the names of the ref or argument object being read
	depth := 0
	var lastKey []byte // the top-level name whose value is being read
	inSub := false     // depth 2 is the object of ref or argument
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '{', '[':
			depth++
			if depth == 2 {
				inSub = c == '{' && (string(lastKey) == "ref" || string(lastKey) == "argument")
				sub = sub[:0]
			}
		case '}', ']':
			depth--
		case '"':
			j := i + 1
			for ; j < len(b) && b[j] != '"'; j++ {
				if b[j] == '\\' {
					j++
				}
			}
			if j >= len(b) {
				return "", got, want
			}
			s := b[i+1 : j]
			i = j
			k := i + 1
			for k < len(b) && (b[k] == ' ' || b[k] == '\t' || b[k] == '\n' || b[k] == '\r') {
				k++
			}
			if k >= len(b) || b[k] != ':' {
				continue
			}
			switch {
			case depth == 1:
				lastKey = s
				if dupName(top, s) {
					return foldName(s), "", ""
				}
				if w := specFold(s, specParams); w != "" && got == "" {
					got, want = string(s), w
				}
				top = append(top, s)
			case depth == 2 && inSub:
				if dupName(sub, s) {
					return foldName(s), "", ""
				}
				if w := specFold(s, specSubParams); w != "" && got == "" {
					got, want = string(s), w
				}
				sub = append(sub, s)
			}
		}
	}
	return "", got, want
}

// specParams are the names of the params members the spec defines that
// the host reads; specSubParams those of ref and argument.
var (
	specParams = []string{"_meta", "name", "uri", "arguments", "cursor", "level", "protocolVersion", "capabilities",
		"clientInfo", "requestId", "ref", "argument", "task", "taskId", "notifications", "inputResponses", "requestState"}
	specSubParams = []string{"type", "name", "uri", "value"}
)

// specFold returns the name of names that raw name s reads as to a
// case-folding decoder without being it, "" for none.
func specFold(s []byte, names []string) string {
	plain := plainName(s)
	for _, n := range names {
		if plain {
			if len(s) == len(n) && string(s) != n && bytes.EqualFold(s, []byte(n)) {
				return n
			}
			continue
		}
		if len(s) >= len(n) && foldName(s) == strings.ToLower(n) {
			if dec := decodedName(s); dec != n {
				return n
			}
		}
	}
	return ""
}

// decodedName is a raw JSON name decoded.
func decodedName(s []byte) string {
	var v string
	if err := json.Unmarshal(append(append([]byte{'"'}, s...), '"'), &v); err != nil {
		return string(s)
	}
	return v
}

// dupName reports whether names holds one that reads as s.
func dupName(names [][]byte, s []byte) bool {
	for _, prev := range names {
		if sameName(prev, s) {
			return true
		}
	}
	return false
}

// sameName reports whether two raw JSON member names read the same to a
// case-folding decoder.
func sameName(a, b []byte) bool {
	if plainName(a) && plainName(b) {
		return bytes.EqualFold(a, b)
	}
	return foldName(a) == foldName(b)
}

// plainName reports whether a raw name is ASCII without escapes.
func plainName(s []byte) bool {
	for _, c := range s {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}

// foldName decodes a raw name and folds it as encoding/json and sonic
// match names (Unicode simple folding: "ſ" is "s", the Kelvin sign "k").
func foldName(s []byte) string {
	var v string
	if err := json.Unmarshal(append(append([]byte{'"'}, s...), '"'), &v); err != nil {
		v = string(s)
	}
	return strings.ToLower(strings.NewReplacer("ſ", "s", "\u212a", "k").Replace(v))
}
