package guest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/wasmcp/wasmcp/abi"
)

// Tool declares a tool. Name is required (1 to 128 characters from
// A-Z a-z 0-9 _ . - /); Description should say what the tool does and when
// to use it.
type Tool struct {
	Name        string
	Title       string // human-readable display name
	Description string
	Annotations *ToolAnnotations
	// TaskSupport is "forbidden" (the default when empty), "optional" or
	// "required": whether clients may (or must) call the tool as an MCP
	// task. The guest code is the same either way.
	TaskSupport string
	// InputSchema overrides the schema AddTool generates from the input
	// type; AddRawTool uses it as given (default: any object). It is raw
	// JSON text (string, []byte, json.RawMessage) or a value marshaled to
	// JSON (*Schema, map[string]any, ...), and must be a JSON object with
	// "type": "object".
	InputSchema any
	// OutputSchema overrides the schema AddTool generates from a struct
	// output type, in the same forms as InputSchema. With an output schema
	// a typed tool's result carries structuredContent.
	OutputSchema any
	Meta         map[string]any // the tool's _meta
}

// ToolAnnotations are MCP hints about a tool's behavior. Nil fields are left
// out and take MCP's defaults (readOnly false, destructive true, idempotent
// false, openWorld true). Set them with new(true) / new(false).
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`    // the tool does not modify its environment
	DestructiveHint *bool  `json:"destructiveHint,omitempty"` // updates may be destructive (when not read-only)
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`  // repeating a call with the same arguments has no further effect
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`   // the tool interacts with an open world of external entities
}

// ToolResult is an MCP CallToolResult. Handlers that need full control
// (several content blocks, images, isError with structured content) return
// it: from AddRawTool, or from AddTool with Out = *ToolResult.
type ToolResult struct {
	Content           []Content      `json:"content"`
	StructuredContent any            `json:"structuredContent,omitempty"`
	IsError           bool           `json:"isError,omitempty"`
	Meta              map[string]any `json:"_meta,omitempty"`
}

// TextResult returns a result with one text content block.
func TextResult(text string) *ToolResult {
	return &ToolResult{Content: []Content{Text(text)}}
}

// ErrorResult returns a failed result (isError) with one text content block
// saying why. Returning a non-nil error from a tool handler has the same
// effect.
func ErrorResult(text string) *ToolResult {
	return &ToolResult{Content: []Content{Text(text)}, IsError: true}
}

// RawToolHandler handles a call of a tool added with AddRawTool. args is
// the call's "arguments" object ({} when the client sent none).
type RawToolHandler func(c *Context, args json.RawMessage) (*ToolResult, error)

// toolEntry is a registered tool.
type toolEntry struct {
	def  abi.Tool
	call RawToolHandler
	warm func() // builds the JSON codecs of a typed tool's In and Out (Prepare)
}

var typeToolResult = reflect.TypeFor[*ToolResult]()

// AddTool registers a typed tool. The tool's arguments are decoded into an
// In (a struct, or a map with string keys); its input schema is generated
// from In unless t.InputSchema is set. The handler's Out decides the result:
//
//   - *ToolResult: used as is (nil means an empty result);
//   - a string type: one text content block;
//   - a struct (or pointer to one) or a map with string keys: the value is
//     the result's structuredContent, its JSON is also a text content block,
//     and the tool declares an outputSchema generated from Out (or
//     t.OutputSchema);
//   - anything else: its JSON as a text content block.
//
// If the arguments do not decode into In, or a property the schema
// requires is missing, the handler is not called and the result is an
// error result naming the problem. A non-nil error from the handler
// becomes an error result (isError) with the error's text; so does a panic.
//
// AddTool panics if t is invalid (empty or malformed name, duplicate name,
// unknown TaskSupport, a schema that is not a JSON object) or if In or Out
// cannot be described as JSON Schema.
func AddTool[In, Out any](s *Server, t Tool, h func(c *Context, in In) (Out, error)) {
	if h == nil {
		panic("guest: AddTool " + t.Name + ": nil handler")
	}
	inT, outT := reflect.TypeFor[In](), reflect.TypeFor[Out]()

	var required []string
	if t.InputSchema == nil {
		root := inT
		for root.Kind() == reflect.Pointer {
			root = root.Elem()
		}
		if root.Kind() != reflect.Struct && root.Kind() != reflect.Map && root != typeRawMessage && root.Kind() != reflect.Interface {
			panic(fmt.Sprintf("guest: AddTool %s: input type %s is not a struct or map", t.Name, inT))
		}
		sch := (&reflector{seen: map[reflect.Type]bool{}}).schema(inT)
		if len(sch.Type) == 0 { // any / json.RawMessage
			sch.Type = []string{"object"}
		}
		sch.Type = sch.Type[:1]
		required = sch.Required
		t.InputSchema = sch
	}

	structured := false
	if t.OutputSchema != nil {
		structured = outT != typeToolResult && outT.Kind() != reflect.String
	} else if outT != typeToolResult {
		root := outT
		for root.Kind() == reflect.Pointer {
			root = root.Elem()
		}
		if root != typeTime && (root.Kind() == reflect.Struct || root.Kind() == reflect.Map) &&
			!root.Implements(typeJSONMarshaler) && !reflect.PointerTo(root).Implements(typeJSONMarshaler) {
			sch := (&reflector{output: true, seen: map[reflect.Type]bool{}}).schema(outT)
			sch.Type = sch.Type[:1] // the root is never null: a nil result is an error
			t.OutputSchema = sch
			structured = true
		}
	}

	call := func(c *Context, args json.RawMessage) (*ToolResult, error) {
		var in In
		if msg := checkRequired(args, required); msg != "" {
			return ErrorResult(msg), nil
		}
		if err := json.Unmarshal(args, &in); err != nil {
			return ErrorResult("invalid arguments: " + err.Error()), nil
		}
		out, err := h(c, in)
		if err != nil {
			return nil, err
		}
		return toolResultOf(out, structured)
	}
	s.addTool(t, call)
	s.tools[len(s.tools)-1].warm = func() {
		_ = json.Unmarshal([]byte("{}"), reflect.New(inT).Interface())
		_, _ = json.Marshal(reflect.New(outT).Interface())
	}
}

// AddRawTool registers a tool whose handler receives the raw arguments and
// builds the result itself. t.InputSchema is the input schema as given
// (default {"type":"object"}, any object); t.OutputSchema is declared as
// given. A non-nil error from the handler becomes an error result (isError).
// AddRawTool panics if t is invalid (see AddTool).
func (s *Server) AddRawTool(t Tool, h RawToolHandler) {
	if h == nil {
		panic("guest: AddRawTool " + t.Name + ": nil handler")
	}
	if t.InputSchema == nil {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	s.addTool(t, h)
}

func (s *Server) addTool(t Tool, h RawToolHandler) {
	if !validToolName(t.Name) {
		panic(fmt.Sprintf("guest: tool name %q must be 1 to 128 characters from A-Z a-z 0-9 _ . - /", t.Name))
	}
	if s.toolIndex[t.Name] != nil {
		panic("guest: duplicate tool " + t.Name)
	}
	def := abi.Tool{Name: t.Name, Title: t.Title, Description: t.Description}
	var err error
	if def.InputSchema, err = schemaJSON(t.InputSchema, true); err != nil {
		panic(fmt.Sprintf("guest: tool %s: inputSchema: %v", t.Name, err))
	}
	if t.OutputSchema != nil {
		if def.OutputSchema, err = schemaJSON(t.OutputSchema, false); err != nil {
			panic(fmt.Sprintf("guest: tool %s: outputSchema: %v", t.Name, err))
		}
	}
	if t.Annotations != nil {
		def.Annotations, _ = marshal(t.Annotations)
	}
	switch t.TaskSupport {
	case "":
	case abi.TaskForbidden, abi.TaskOptional, abi.TaskRequired:
		def.Execution = &abi.Execution{TaskSupport: t.TaskSupport}
	default:
		panic(fmt.Sprintf("guest: tool %s: TaskSupport %q is not forbidden, optional or required", t.Name, t.TaskSupport))
	}
	if len(t.Meta) > 0 {
		if def.Meta, err = marshal(t.Meta); err != nil {
			panic(fmt.Sprintf("guest: tool %s: _meta: %v", t.Name, err))
		}
	}
	e := &toolEntry{def: def, call: h}
	s.tools = append(s.tools, e)
	s.toolIndex[t.Name] = e
}

func validToolName(name string) bool {
	if len(name) < 1 || len(name) > 128 {
		return false
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-' || r == '/') {
			return false
		}
	}
	return true
}

// schemaJSON turns a schema given as JSON text or as a value into JSON and
// checks that it is an object (with "type": "object" for input schemas).
func schemaJSON(v any, input bool) (json.RawMessage, error) {
	var raw []byte
	switch x := v.(type) {
	case string:
		raw = []byte(x)
	case []byte:
		raw = x
	case json.RawMessage:
		raw = x
	default:
		b, err := marshal(v)
		if err != nil {
			return nil, err
		}
		raw = b
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	if input && !bytes.Equal(bytes.TrimSpace(obj["type"]), []byte(`"object"`)) {
		return nil, fmt.Errorf(`must have "type": "object"`)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// checkRequired returns a message if args is not an object or lacks one of
// the required properties (or has it null), "" otherwise.
func checkRequired(args json.RawMessage, required []string) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(args, &obj); err != nil || obj == nil {
		return "invalid arguments: not a JSON object"
	}
	for _, name := range required {
		v, ok := obj[name]
		if !ok || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			return fmt.Sprintf("invalid arguments: missing required property %q", name)
		}
	}
	return ""
}

// toolResultOf converts a typed handler's output into a result.
func toolResultOf(out any, structured bool) (*ToolResult, error) {
	switch v := out.(type) {
	case *ToolResult:
		if v == nil {
			return &ToolResult{}, nil
		}
		return v, nil
	case string:
		return TextResult(v), nil
	}
	rv := reflect.ValueOf(out)
	if rv.Kind() == reflect.String {
		return TextResult(rv.String()), nil
	}
	raw, err := marshal(out)
	if err != nil {
		return nil, fmt.Errorf("cannot encode the tool's result: %v", err)
	}
	if !structured {
		return TextResult(string(raw)), nil
	}
	if string(raw) == "null" {
		if rv.Kind() == reflect.Map {
			raw = []byte("{}")
		} else {
			return nil, fmt.Errorf("the tool returned no result")
		}
	}
	return &ToolResult{Content: []Content{Text(string(raw))}, StructuredContent: encoded(raw)}, nil
}
