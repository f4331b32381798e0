package abi

import "encoding/json"

// Version is the ABI version this package describes.
const Version = 1

// SupportedVersions returns the ABI versions a host built from this package
// speaks, newest first.
func SupportedVersions() []int { return []int{Version} }

// MCPServerVersions returns the MCP revisions the host speaks to a module
// that is an MCP server (README.md, section 10), the one it offers in
// initialize first: the server may answer any of them.
func MCPServerVersions() []string {
	return []string{"2025-06-18", "2025-11-25", "2025-03-26", "2024-11-05"}
}

// MethodDescribe is the request a host sends at load time to learn what a
// module offers.
const MethodDescribe = "wasmcp/describe"

// CustomSection is the name of the custom section that may carry a module's
// Description instead of answering MethodDescribe.
const CustomSection = "wasmcp.describe"

// ReactorEntry is the export a reactor module provides; it takes no
// parameters and returns nothing.
const ReactorEntry = "wasmcp_main"

// SnapshotEntry is the export by which a reactor asks the host to run it
// from a snapshot: the host instantiates the module once at load time,
// calls _initialize and then this export (no parameters, no results: the
// last start-up work before the snapshot), records the instance's memory
// and globals, and starts every call's fresh instance from that state
// (README.md, section 1.1).
const SnapshotEntry = "wasmcp_snapshot"

// Task support values for Tool.Execution.TaskSupport.
const (
	TaskForbidden = "forbidden"
	TaskOptional  = "optional"
	TaskRequired  = "required"
)

// DescribeParams are the params of a MethodDescribe request.
type DescribeParams struct {
	ABIVersions []int `json:"abiVersions"`
	// Features are the optional features of later minor versions the host
	// understands (FeatureHTTP). A 1.0 host sends none.
	Features []string `json:"features,omitempty"`
}

// Description is what a module offers. Its tools, resources, resource
// templates and prompts are MCP objects passed to clients as written.
type Description struct {
	ABIVersion        int                `json:"abiVersion"`
	Name              string             `json:"name,omitempty"`
	Version           string             `json:"version,omitempty"`
	Instructions      string             `json:"instructions,omitempty"`
	Tools             []Tool             `json:"tools,omitempty"`
	Resources         []Resource         `json:"resources,omitempty"`
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates,omitempty"`
	Prompts           []Prompt           `json:"prompts,omitempty"`
	Completions       bool               `json:"completions,omitempty"`
	// Skills are Agent Skills the module ships (MCP Skills extension,
	// SEP-2640). The host checks them, computes their digests and sizes,
	// and serves them as skill:// resources; see README.md, section 5.
	Skills []Skill `json:"skills,omitempty"`
}

// Tool is an MCP tool definition.
type Tool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title,omitempty"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	Annotations  json.RawMessage `json:"annotations,omitempty"`
	Execution    *Execution      `json:"execution,omitempty"`
	Icons        json.RawMessage `json:"icons,omitempty"`
	Meta         json.RawMessage `json:"_meta,omitempty"`
}

// TaskSupport returns the tool's declared task support, TaskForbidden when
// it declares none.
func (t *Tool) TaskSupport() string {
	if t.Execution == nil || t.Execution.TaskSupport == "" {
		return TaskForbidden
	}
	return t.Execution.TaskSupport
}

// Execution holds a tool's execution properties.
type Execution struct {
	TaskSupport string `json:"taskSupport,omitempty"`
}

// Resource is an MCP resource with a fixed URI.
type Resource struct {
	URI         string          `json:"uri"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Size        int64           `json:"size,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Icons       json.RawMessage `json:"icons,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// ResourceTemplate is an MCP resource template (RFC 6570 level 1 URI template).
type ResourceTemplate struct {
	URITemplate string          `json:"uriTemplate"`
	Name        string          `json:"name"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Annotations json.RawMessage `json:"annotations,omitempty"`
	Icons       json.RawMessage `json:"icons,omitempty"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// Prompt is an MCP prompt definition.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Icons       json.RawMessage  `json:"icons,omitempty"`
	Meta        json.RawMessage  `json:"_meta,omitempty"`
}

// PromptArgument is one argument of a Prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Skill is an Agent Skill a module ships: a directory of files whose root
// holds SKILL.md (YAML frontmatter with at least name and description).
type Skill struct {
	// Name is the skill's name, equal to the name in its SKILL.md
	// frontmatter: 1–64 lowercase letters, digits and single hyphens. It
	// may be preceded by group segments of the same form ("acme/pdf"); the
	// skill is served at skill://<name>/SKILL.md.
	Name string `json:"name"`
	// Files are the skill's files, SKILL.md included.
	Files []SkillFile `json:"files"`
}

// SkillFile is one file of a Skill. Exactly one of Text and Blob holds its
// bytes.
type SkillFile struct {
	// Path is the file's path relative to the skill's root, with '/'
	// separators: "SKILL.md", "references/FORMS.md". No empty, "." or ".."
	// segment, no leading '/', no backslash, no control character.
	Path string `json:"path"`
	// Text is the file's content when it is UTF-8 text.
	Text string `json:"text,omitempty"`
	// Blob is the file's content otherwise (base64 in JSON).
	Blob []byte `json:"blob,omitempty"`
	// MimeType is the file's media type; empty means the host picks one
	// from the file's extension.
	MimeType string `json:"mimeType,omitempty"`
}

// Message is one JSON-RPC 2.0 message on the guest's stdin or stdout: a
// request (Method and ID), a notification (Method, no ID) or a response
// (ID with Result or Error).
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// Error is a JSON-RPC error object.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error returns the error's message.
func (e *Error) Error() string { return e.Message }

// Methods a guest may send to the client through the host.
const (
	MethodProgress     = "notifications/progress"
	MethodLog          = "notifications/message"
	MethodSample       = "sampling/createMessage"
	MethodElicit       = "elicitation/create"
	MethodListRoots    = "roots/list"
	MethodToolsCall    = "tools/call"
	MethodResourceRead = "resources/read"
	MethodPromptsGet   = "prompts/get"
	MethodComplete     = "completion/complete"
)

// MethodState is the notification a guest sends to leave state for the
// retry of a call that ends with input requests: params {"state": <any JSON
// value>}; the last one sent counts. The retry hands the state back to the
// guest in its request's params._meta under the same name (see abi/README.md).
const MethodState = "wasmcp/state"

// Notifications a guest may send to tell clients that what the server
// offers changed (see abi/README.md, section 4). The host broadcasts them to
// the clients listening for them.
const (
	MethodToolsListChanged     = "notifications/tools/list_changed"
	MethodPromptsListChanged   = "notifications/prompts/list_changed"
	MethodResourcesListChanged = "notifications/resources/list_changed"
	MethodResourceUpdated      = "notifications/resources/updated"
)

// JSON-RPC 2.0 error codes, as the host answers a guest's requests with
// them and a guest answers the host's.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
)

// CodeMissingCapability is the error code of a guest's request to the
// client when the client did not declare the capability the request needs;
// the error's data is {"requiredCapabilities": <ClientCapabilities>}.
const CodeMissingCapability = -32021
