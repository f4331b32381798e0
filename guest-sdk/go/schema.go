package guest

import (
	"bytes"
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// Schema is a JSON Schema (2020-12) as the SDK's reflector produces it. It
// covers the keywords the reflector emits; marshaled, it is an ordinary
// JSON Schema object with properties in Go field order. Tool authors rarely
// touch it: AddTool builds one from the handler's input and output types,
// and SchemaFor returns one for any type.
type Schema struct {
	Type                 []string // one type, or a type and "null"; empty: any type
	Title                string
	Description          string
	Format               string
	ContentEncoding      string
	Pattern              string
	Enum                 []any
	Default              any
	HasDefault           bool // Default was set (so a null default can be told from none)
	Minimum              *float64
	Maximum              *float64
	ExclusiveMinimum     *float64
	ExclusiveMaximum     *float64
	MinLength            *int
	MaxLength            *int
	MinItems             *int
	MaxItems             *int
	Items                *Schema
	Properties           []Property // in declaration order
	Required             []string
	AdditionalProperties *Schema // for maps: the value schema
}

// Property is one named property of an object Schema.
type Property struct {
	Name   string
	Schema *Schema
}

// MarshalJSON writes the schema with keywords in a stable order.
func (s *Schema) MarshalJSON() ([]byte, error) {
	var w objectWriter
	s.writeAnnotations(&w)
	s.writeBounds(&w)
	s.writeChildren(&w)
	return w.close()
}

// writeAnnotations writes type, title, description, format,
// contentEncoding, pattern, enum and default.
func (s *Schema) writeAnnotations(w *objectWriter) {
	switch len(s.Type) {
	case 0:
	case 1:
		w.put("type", s.Type[0])
	default:
		w.put("type", s.Type)
	}
	for _, kv := range []struct{ k, v string }{
		{"title", s.Title}, {"description", s.Description}, {"format", s.Format},
		{"contentEncoding", s.ContentEncoding}, {"pattern", s.Pattern},
	} {
		if kv.v != "" {
			w.put(kv.k, kv.v)
		}
	}
	if s.Enum != nil {
		w.put("enum", s.Enum)
	}
	if s.HasDefault {
		w.put("default", s.Default)
	}
}

// writeBounds writes the numeric, length and item-count bounds.
func (s *Schema) writeBounds(w *objectWriter) {
	for _, kv := range []struct {
		k string
		v *float64
	}{{"minimum", s.Minimum}, {"maximum", s.Maximum}, {"exclusiveMinimum", s.ExclusiveMinimum}, {"exclusiveMaximum", s.ExclusiveMaximum}} {
		if kv.v != nil {
			w.put(kv.k, *kv.v)
		}
	}
	for _, kv := range []struct {
		k string
		v *int
	}{{"minLength", s.MinLength}, {"maxLength", s.MaxLength}, {"minItems", s.MinItems}, {"maxItems", s.MaxItems}} {
		if kv.v != nil {
			w.put(kv.k, *kv.v)
		}
	}
}

// writeChildren writes items, properties (in declaration order),
// required and additionalProperties.
func (s *Schema) writeChildren(w *objectWriter) {
	if s.Items != nil {
		w.put("items", s.Items)
	}
	if s.Properties != nil {
		// A struct always lists its properties, possibly none.
		var props objectWriter
		for _, p := range s.Properties {
			props.put(p.Name, p.Schema)
		}
		raw, err := props.close()
		if err != nil {
			w.fail(err)
		} else {
			w.put("properties", json.RawMessage(raw))
		}
	}
	if len(s.Required) > 0 {
		w.put("required", s.Required)
	}
	if s.AdditionalProperties != nil {
		w.put("additionalProperties", s.AdditionalProperties)
	}
}

// objectWriter writes a JSON object member by member; after the first
// error it writes nothing more and close returns that error.
type objectWriter struct {
	b   bytes.Buffer
	n   int // members written
	err error
}

// put writes the member k: v.
func (w *objectWriter) put(k string, v any) {
	if w.err != nil {
		return
	}
	vb, err := marshal(v)
	if err != nil {
		w.err = err
		return
	}
	if w.n == 0 {
		w.b.WriteByte('{')
	} else {
		w.b.WriteByte(',')
	}
	w.n++
	kb, _ := marshal(k)
	w.b.Write(kb)
	w.b.WriteByte(':')
	w.b.Write(vb)
}

// fail records err unless an error is recorded already.
func (w *objectWriter) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// close ends the object and returns it, or the first error.
func (w *objectWriter) close() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	if w.n == 0 {
		w.b.WriteByte('{')
	}
	w.b.WriteByte('}')
	return w.b.Bytes(), nil
}

// SchemaFor returns the JSON Schema the SDK generates for values of type t.
// It panics if t (or a type it contains) cannot be described: channels,
// functions, complex numbers, maps with non-string keys.
//
// Mapping: bool → boolean; signed integers → integer; unsigned integers →
// integer with minimum 0; floats → number; string → string; []byte →
// base64 string; time.Time → string with format date-time; slices and
// arrays → array of the element; maps with string keys → object with
// additionalProperties; structs → object (see the package documentation
// for field rules and the `jsonschema` tag); pointers → the pointee;
// interfaces, json.RawMessage and other json.Marshaler types → any value.
// Types implementing encoding.TextMarshaler → string. A struct type that
// contains itself is described as an unconstrained object where it recurs.
func SchemaFor(t reflect.Type) *Schema {
	r := reflector{seen: map[reflect.Type]bool{}}
	return r.schema(t)
}

// reflector builds schemas. In output mode, values that json.Marshal may
// write as null (nil pointers, slices and maps in fields without omitempty)
// are typed [T, "null"] so that a client validating structuredContent
// against outputSchema accepts them.
type reflector struct {
	output bool
	seen   map[reflect.Type]bool
}

var (
	typeRawMessage    = reflect.TypeFor[json.RawMessage]()
	typeTime          = reflect.TypeFor[time.Time]()
	typeJSONMarshaler = reflect.TypeFor[json.Marshaler]()
	typeTextMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

func (r *reflector) schema(t reflect.Type) *Schema {
	nullable := false
	for t.Kind() == reflect.Pointer {
		nullable = true
		t = t.Elem()
	}
	s := r.base(t)
	if r.output && (nullable || t.Kind() == reflect.Slice || t.Kind() == reflect.Map) && len(s.Type) == 1 {
		s.Type = append(s.Type, "null")
	}
	return s
}

func (r *reflector) base(t reflect.Type) *Schema {
	switch {
	case t == typeRawMessage:
		return &Schema{}
	case t == typeTime:
		return &Schema{Type: []string{"string"}, Format: "date-time"}
	case t.Implements(typeJSONMarshaler) || reflect.PointerTo(t).Implements(typeJSONMarshaler):
		return &Schema{}
	case t.Implements(typeTextMarshaler) || reflect.PointerTo(t).Implements(typeTextMarshaler):
		return &Schema{Type: []string{"string"}}
	}
	switch t.Kind() {
	case reflect.Bool:
		return &Schema{Type: []string{"boolean"}}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return &Schema{Type: []string{"integer"}}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		zero := 0.0
		return &Schema{Type: []string{"integer"}, Minimum: &zero}
	case reflect.Float32, reflect.Float64:
		return &Schema{Type: []string{"number"}}
	case reflect.String:
		return &Schema{Type: []string{"string"}}
	case reflect.Interface:
		return &Schema{}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Kind() == reflect.Slice {
			return &Schema{Type: []string{"string"}, ContentEncoding: "base64"}
		}
		s := &Schema{Type: []string{"array"}, Items: r.schema(t.Elem())}
		if t.Kind() == reflect.Array {
			n := t.Len()
			s.MinItems, s.MaxItems = &n, &n
		}
		return s
	case reflect.Map:
		k := t.Key()
		if k.Kind() != reflect.String && !k.Implements(typeTextMarshaler) &&
			!(k.Kind() >= reflect.Int && k.Kind() <= reflect.Uintptr) {
			panic(fmt.Sprintf("guest: cannot describe map with key type %s", k))
		}
		return &Schema{Type: []string{"object"}, AdditionalProperties: r.schema(t.Elem())}
	case reflect.Struct:
		if r.seen[t] {
			return &Schema{Type: []string{"object"}}
		}
		r.seen[t] = true
		defer delete(r.seen, t)
		s := &Schema{Type: []string{"object"}, Properties: []Property{}}
		r.fields(t, s, map[string]bool{})
		return s
	}
	panic(fmt.Sprintf("guest: cannot describe type %s in a JSON Schema", t))
}

// fields adds the JSON fields of struct type t to s, following
// encoding/json's rules for names and embedded structs (a name already
// taken by a shallower field wins).
func (r *reflector) fields(t reflect.Type, s *Schema, taken map[string]bool) {
	type embedded struct{ t reflect.Type }
	var deeper []embedded
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			et := ft
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				deeper = append(deeper, embedded{et})
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if taken[name] {
			continue
		}
		taken[name] = true
		optional := ft.Kind() == reflect.Pointer
		omitted, asString := false, false
		for _, o := range strings.Split(opts, ",") {
			switch o {
			case "omitempty", "omitzero":
				optional, omitted = true, true
			case "string":
				asString = true
			}
		}
		ps := r.schema(ft)
		if omitted && len(ps.Type) == 2 && ps.Type[1] == "null" {
			// A nil value is omitted, never written as null.
			ps.Type = ps.Type[:1]
		}
		if asString && len(ps.Type) > 0 && ps.Type[0] != "string" && ps.Type[0] != "object" && ps.Type[0] != "array" {
			ps = &Schema{Type: []string{"string"}}
		}
		req, err := applyTag(ps, f.Tag.Get("jsonschema"))
		if err != nil {
			panic(fmt.Sprintf("guest: field %s.%s: %v", t, f.Name, err))
		}
		switch req {
		case "required":
			optional = false
		case "optional":
			optional = true
		}
		s.Properties = append(s.Properties, Property{Name: name, Schema: ps})
		if !optional {
			s.Required = append(s.Required, name)
		}
	}
	for _, e := range deeper {
		if r.seen[e.t] {
			continue
		}
		r.seen[e.t] = true
		r.fields(e.t, s, taken)
		delete(r.seen, e.t)
	}
}

// tagKeys are the keys the `jsonschema` struct tag accepts.
var tagKeys = map[string]bool{
	"description": true, "title": true, "enum": true, "default": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"minLength": true, "maxLength": true, "minItems": true, "maxItems": true,
	"pattern": true, "format": true, "required": true, "optional": true,
}

// splitTag splits a `jsonschema` tag into items. A comma separates items
// only when what follows it starts a known key ("key=" or a bare flag), so
// descriptions and patterns may contain commas.
func splitTag(tag string) []string {
	parts := strings.Split(tag, ",")
	var items []string
	for _, p := range parts {
		key, _, _ := strings.Cut(p, "=")
		if len(items) == 0 || tagKeys[strings.TrimSpace(key)] {
			items = append(items, p)
			continue
		}
		items[len(items)-1] += "," + p
	}
	return items
}

// applyTag applies a `jsonschema` tag to s. It returns "required",
// "optional" or "" for the field's requiredness override.
func applyTag(s *Schema, tag string) (string, error) {
	if tag == "" {
		return "", nil
	}
	req := ""
	for _, item := range splitTag(tag) {
		key, val, hasVal := strings.Cut(item, "=")
		key = strings.TrimSpace(key)
		if !tagKeys[key] {
			return "", fmt.Errorf("unknown jsonschema tag key %q", key)
		}
		if (key == "required" || key == "optional") && !hasVal {
			req = key
			continue
		}
		if !hasVal {
			return "", fmt.Errorf("jsonschema tag key %q needs a value", key)
		}
		// Enum and default on an array apply to its items / the array.
		target := s
		switch key {
		case "description":
			s.Description = val
		case "title":
			s.Title = val
		case "format":
			s.Format = val
		case "pattern":
			if s.Items != nil {
				target = s.Items
			}
			target.Pattern = val
		case "enum":
			if s.Items != nil {
				target = s.Items
			}
			target.Enum = nil
			for _, v := range strings.Split(val, "|") {
				cv, err := convertTagValue(target, v)
				if err != nil {
					return "", fmt.Errorf("enum value %q: %v", v, err)
				}
				target.Enum = append(target.Enum, cv)
			}
		case "default":
			cv, err := convertTagValue(s, val)
			if err != nil {
				return "", fmt.Errorf("default %q: %v", val, err)
			}
			s.Default, s.HasDefault = cv, true
		case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
			f, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return "", fmt.Errorf("%s %q is not a number", key, val)
			}
			switch key {
			case "minimum":
				s.Minimum = &f
			case "maximum":
				s.Maximum = &f
			case "exclusiveMinimum":
				s.ExclusiveMinimum = &f
			case "exclusiveMaximum":
				s.ExclusiveMaximum = &f
			}
		case "minLength", "maxLength", "minItems", "maxItems":
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 {
				return "", fmt.Errorf("%s %q is not a non-negative integer", key, val)
			}
			switch key {
			case "minLength":
				s.MinLength = &n
			case "maxLength":
				s.MaxLength = &n
			case "minItems":
				s.MinItems = &n
			case "maxItems":
				s.MaxItems = &n
			}
		default:
			return "", fmt.Errorf("jsonschema tag key %q takes no value", key)
		}
	}
	return req, nil
}

// convertTagValue converts a tag value to the JSON type of s: a number for
// integer and number schemas, a boolean for boolean ones, JSON for arrays
// and objects, the text itself otherwise.
func convertTagValue(s *Schema, v string) (any, error) {
	typ := ""
	if len(s.Type) > 0 {
		typ = s.Type[0]
	}
	switch typ {
	case "integer":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("not an integer")
		}
		return n, nil
	case "number":
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, fmt.Errorf("not a number")
		}
		return f, nil
	case "boolean":
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("not a boolean")
		}
		return b, nil
	case "array", "object", "":
		var x any
		if err := json.Unmarshal([]byte(v), &x); err != nil {
			if typ == "" {
				return v, nil
			}
			return nil, fmt.Errorf("not JSON")
		}
		return x, nil
	}
	return v, nil
}
