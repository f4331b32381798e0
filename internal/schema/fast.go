package schema

import (
	"encoding/json"
	"reflect"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// fastNode is a compiled schema in the small subset most tool schemas
// use (type, properties, required, additionalProperties, items, enum of
// strings, and the length and count bounds), checked on a decoded value
// without the general validator's bookkeeping: about 30 allocations and a
// big.Rat per integer less per call. It only ever answers "valid" when
// the general validator would (see accepts); anything else — a value it
// does not know, a failing check — is left to the general validator,
// which also writes the error message, so a message never depends on the
// fast path. TestFastAgrees compares the two on generated values.
type fastNode struct {
	always    bool     // the schema true: every value
	types     uint8    // the "type" keyword's members, fastNull|…; 0: no "type"
	enum      []string // nil: no enum; string members only
	hasEnum   bool
	required  []string
	props     map[string]*fastNode
	addl      *fastNode // additionalProperties as a schema
	addlFalse bool      // additionalProperties: false
	items     *fastNode // items (every element)
	minLen    int       // -1: none; likewise below
	maxLen    int
	minItems  int
	maxItems  int
	minProps  int
	maxProps  int
}

// The bits of fastNode.types.
const (
	fastNull uint8 = 1 << iota
	fastBool
	fastString
	fastArray
	fastObject
	fastNumber
	fastInteger
)

var fastTypeBits = map[string]uint8{"null": fastNull, "boolean": fastBool, "string": fastString,
	"array": fastArray, "object": fastObject, "number": fastNumber, "integer": fastInteger}

// fastFields are the fields of jsonschema.Schema a fastNode accounts for;
// every other exported field must be zero for a schema to take the fast
// path, so a keyword this file does not know (or one a later version of
// the library adds) keeps a schema on the general validator.
var fastFields = map[string]bool{
	"DraftVersion": true, "Location": true,
	"Bool": true, "Types": true, "Enum": true, "Required": true,
	"Properties": true, "AdditionalProperties": true, "Items": true, "Items2020": true,
	"MinLength": true, "MaxLength": true, "MinItems": true, "MaxItems": true,
	"MinProperties": true, "MaxProperties": true,
	// annotations: no assertion
	"Title": true, "Description": true, "Default": true, "Comment": true,
	"ReadOnly": true, "WriteOnly": true, "Examples": true, "Deprecated": true,
}

// fastOf builds the fast check of s, or nil when s is outside the subset.
func fastOf(s *jsonschema.Schema, depth int) *fastNode {
	if s == nil || depth > MaxDepth {
		return nil
	}
	rv := reflect.ValueOf(s).Elem()
	rt := rv.Type()
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		if !f.IsExported() || fastFields[f.Name] {
			continue
		}
		if !rv.Field(i).IsZero() {
			return nil
		}
	}
	if s.Bool != nil {
		if *s.Bool {
			return &fastNode{always: true}
		}
		return nil // false: never valid, the general validator says so
	}
	n := &fastNode{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1, minProps: -1, maxProps: -1}
	if s.Types != nil && !s.Types.IsEmpty() {
		for _, t := range s.Types.ToStrings() {
			b, ok := fastTypeBits[t]
			if !ok {
				return nil
			}
			n.types |= b
		}
	}
	if s.Enum != nil {
		n.hasEnum = true
		for _, v := range s.Enum.Values {
			if str, ok := v.(string); ok {
				n.enum = append(n.enum, str)
			}
		}
	}
	n.required = s.Required
	if len(s.Properties) > 0 {
		n.props = make(map[string]*fastNode, len(s.Properties))
		for name, p := range s.Properties {
			c := fastOf(p, depth+1)
			if c == nil {
				return nil
			}
			n.props[name] = c
		}
	}
	switch a := s.AdditionalProperties.(type) {
	case nil:
	case bool:
		n.addlFalse = !a
	case *jsonschema.Schema:
		if n.addl = fastOf(a, depth+1); n.addl == nil {
			return nil
		}
	default:
		return nil
	}
	items := s.Items2020
	if s.DraftVersion < 2020 {
		if s.Items2020 != nil {
			return nil
		}
		switch it := s.Items.(type) {
		case nil:
		case *jsonschema.Schema:
			items = it
		default: // a tuple: not in the subset
			return nil
		}
	} else if s.Items != nil {
		return nil
	}
	if items != nil {
		if n.items = fastOf(items, depth+1); n.items == nil {
			return nil
		}
	}
	for _, b := range []struct {
		p   *int
		dst *int
	}{{s.MinLength, &n.minLen}, {s.MaxLength, &n.maxLen}, {s.MinItems, &n.minItems},
		{s.MaxItems, &n.maxItems}, {s.MinProperties, &n.minProps}, {s.MaxProperties, &n.maxProps}} {
		if b.p != nil {
			*b.dst = *b.p
		}
	}
	return n
}

// accepts reports whether v (decoded with json.Number numbers) certainly
// conforms. false means "not certain": the caller asks the general
// validator. Each check is the general validator's own rule for the
// keyword (validator.go of santhosh-tekuri/jsonschema v6), restricted to
// the cases where the answer is plain: an integer is a json.Number of
// digits alone (the library's big.Rat test accepts those and more), an
// enum matches a string member by equality.
func (n *fastNode) accepts(v any) bool {
	if n.always {
		return true
	}
	if n.types != 0 && !n.typeOK(v) {
		return false
	}
	if n.hasEnum {
		s, ok := v.(string)
		if !ok {
			return false
		}
		found := false
		for _, e := range n.enum {
			if e == s {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	switch v := v.(type) {
	case map[string]any:
		if n.minProps >= 0 && len(v) < n.minProps || n.maxProps >= 0 && len(v) > n.maxProps {
			return false
		}
		for _, r := range n.required {
			if _, ok := v[r]; !ok {
				return false
			}
		}
		for k, pv := range v {
			if c, ok := n.props[k]; ok {
				if !c.accepts(pv) {
					return false
				}
				continue
			}
			if n.addlFalse {
				return false
			}
			if n.addl != nil && !n.addl.accepts(pv) {
				return false
			}
		}
	case []any:
		if n.minItems >= 0 && len(v) < n.minItems || n.maxItems >= 0 && len(v) > n.maxItems {
			return false
		}
		if n.items != nil {
			for _, e := range v {
				if !n.items.accepts(e) {
					return false
				}
			}
		}
	case string:
		if n.minLen >= 0 || n.maxLen >= 0 {
			l := utf8.RuneCountInString(v)
			if n.minLen >= 0 && l < n.minLen || n.maxLen >= 0 && l > n.maxLen {
				return false
			}
		}
	case nil, bool, json.Number:
	default: // a Go type the decoder does not make: let the validator judge
		return false
	}
	return true
}

// typeOK is the "type" keyword for the values the decoder makes.
func (n *fastNode) typeOK(v any) bool {
	var want uint8
	switch x := v.(type) {
	case nil:
		want = fastNull
	case bool:
		want = fastBool
	case string:
		want = fastString
	case []any:
		want = fastArray
	case map[string]any:
		want = fastObject
	case json.Number:
		if n.types&fastNumber != 0 {
			return true
		}
		return n.types&fastInteger != 0 && digitsOnly(string(x))
	default:
		return false
	}
	return n.types&want != 0
}

// digitsOnly reports whether s is an optional minus sign and decimal
// digits: an integer by any reading.
func digitsOnly(s string) bool {
	if len(s) > 0 && s[0] == '-' {
		s = s[1:]
	}
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
