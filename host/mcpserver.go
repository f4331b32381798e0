package host

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/bytedance/sonic"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/contract"
	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

// Modules that are MCP servers (abi/README.md, section 10).
//
// An MCP server written for MCP's stdio transport (with the official Go
// SDK, mcp-go, …) and compiled to WASI preview 1 unmodified runs as a guest:
// the host plays the client's part of the session it expects. At load, one
// instance answers initialize and the list methods, which become the
// module's description (cached like any other). Per call, a fresh instance
// gets initialize (its answer discarded), notifications/initialized,
// logging/setLevel when the server logs, then the one request; what it
// sends on the way is relayed as a native guest's messages are, and its
// answer with the request's id ends the instance.

// Mode says how the host speaks to a module (policy key mode).
type Mode string

const (
	// ModeAuto: a module with a wasmcp.describe section, or that answers
	// wasmcp/describe, is a wasmcp guest; one that answers
	// wasmcp/describe with a JSON-RPC error and then answers MCP's
	// initialize is an MCP server.
	ModeAuto Mode = ""
	// ModeABI: the module is a wasmcp guest; it is never run as an MCP
	// server.
	ModeABI Mode = "wasmcp"
	// ModeMCPServer: the module is an MCP stdio server; the host never
	// asks it wasmcp/describe nor reads its wasmcp.describe section.
	ModeMCPServer Mode = "mcp-server"
)

// Mode is how the host speaks to the module: ModeMCPServer or ModeABI.
func (m *Module) Mode() Mode {
	if m.mcp != nil {
		return ModeMCPServer
	}
	return ModeABI
}

// MCPVersion is the MCP revision the host and an MCP-server module agreed
// on at load, "" for a wasmcp guest.
func (m *Module) MCPVersion() string {
	if m.mcp == nil {
		return ""
	}
	return m.mcp.Version
}

// mcpInfo is what the host learned of an MCP-server module at load, cached
// with its description.
type mcpInfo struct {
	// Version is the revision the server answered initialize with.
	Version string `json:"protocolVersion"`
	// Logging: the server declared the logging capability, so every call
	// sets its level to debug (the host filters by the client's level).
	Logging bool `json:"logging,omitempty"`
}

// mcpDescribed is the outcome of discovering an MCP server: what the
// description cache keeps for it, under the key hash+mcpCacheSuffix.
type mcpDescribed struct {
	mcpInfo
	Description json.RawMessage `json:"description"`
}

// mcpCacheSuffix keys an MCP server's entry in the description cache apart
// from a wasmcp guest's.
const mcpCacheSuffix = ".mcp"

// methodDiscover is the host's internal name for the discovery run; it
// never reaches a guest.
const methodDiscover = "wasmcp/mcp-discover"

// Ids of the host's own requests to an MCP server; the forwarded request
// keeps the call's integer id.
const (
	mcpInitID  = `"wasmcp-init"`
	mcpLevelID = `"wasmcp-level"`
	mcpListID  = `"wasmcp-list"`
)

// mcpMaxPages bounds the pages of one list method at discovery.
const mcpMaxPages = 100

// mcpClientCaps are the capabilities the host declares to an MCP server:
// every server-to-client request a native guest may send. A client that
// lacks one gets the guest an error, as for a native guest.
const mcpClientCaps = `{"elicitation":{},"sampling":{},"roots":{}}`

// initializeLine is the initialize request the host sends an MCP server.
func initializeLine(version string) []byte {
	params := `{"protocolVersion":` + quote(version) + `,"capabilities":` + mcpClientCaps +
		`,"clientInfo":{"name":"wasmcp","version":"` + fmt.Sprint(abi.Version) + `"}}`
	return requestLine([]byte(mcpInitID), "initialize", []byte(params))
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

var initializedLine = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")

// mcpCall is the host's side of the session an MCP server expects, for one
// instance: the handshake before the forwarded request, or the discovery
// run.
type mcpCall struct {
	info    mcpInfo
	request []byte     // the call's request line, sent after the handshake
	disc    *discovery // set for the discovery run
	inited  bool       // initialize was answered
	leveled bool       // logging/setLevel was answered
}

// startMCP prepares the first line of an MCP server's instance.
func (c *call) startMCP(method string, params []byte) []byte {
	if method == methodDiscover {
		c.mcp = &mcpCall{disc: &discovery{}, info: mcpInfo{Version: abi.MCPServerVersions()[0]}}
		return initializeLine(c.mcp.info.Version)
	}
	c.mcp = &mcpCall{info: *c.m.mcp, request: requestLine(c.idText, method, stripEnvelope(params))}
	return initializeLine(c.mcp.info.Version)
}

// mcpResponse handles a response to one of the host's own requests; it
// reports false for any other id.
func (c *call) mcpResponse(id []byte, result []byte, rpcErr *abi.Error) (bool, error) {
	s := c.mcp
	switch {
	case string(id) == mcpInitID:
		if s.inited {
			return true, c.protocolError("answered initialize twice")
		}
		s.inited = true
		if rpcErr != nil {
			return true, c.protocolError("refused initialize: %s", shorten(rpcErr.Message))
		}
		if s.disc != nil {
			if err := s.disc.initialized(result); err != nil {
				return true, c.protocolError("answered initialize with %v", err)
			}
			c.stdin.push(initializedLine)
			return true, c.discoverNext(nil)
		}
		c.stdin.push(initializedLine)
		if s.info.Logging {
			c.stdin.push(requestLine([]byte(mcpLevelID), "logging/setLevel", []byte(`{"level":"debug"}`)))
			return true, nil
		}
		c.stdin.push(s.request)
		return true, nil
	case string(id) == mcpLevelID && s.disc == nil && s.info.Logging:
		if s.leveled {
			return true, c.protocolError("answered logging/setLevel twice")
		}
		s.leveled = true
		// A server that refuses the level still serves the call.
		c.stdin.push(s.request)
		return true, nil
	case s.disc != nil && string(id) == mcpListID:
		if !s.disc.asked {
			return true, c.protocolError("answered %s twice", s.disc.method)
		}
		s.disc.asked = false
		if rpcErr != nil && rpcErr.Code == abi.CodeMethodNotFound {
			// A server may declare resources without templates.
			return true, c.discoverNext([]byte(`{}`))
		}
		if rpcErr != nil {
			return true, c.protocolError("answered %s with error %d: %s", s.disc.method, rpcErr.Code, shorten(rpcErr.Message))
		}
		return true, c.discoverNext(result)
	}
	return false, nil
}

// discoverNext takes one list page (nil at the start) and sends the next
// list request, or answers the discovery run with what it learned.
func (c *call) discoverNext(page []byte) error {
	d := c.mcp.disc
	cursor := ""
	if page != nil {
		next, err := d.add(page)
		if err != nil {
			return c.protocolError("answered %s with %v", d.method, err)
		}
		cursor = next
	}
	if cursor != "" {
		d.pages++
		if d.pages >= mcpMaxPages {
			return c.protocolError("answered %s with more than %d pages", d.method, mcpMaxPages)
		}
	} else {
		if len(d.methods) == 0 {
			raw, err := d.result()
			if err != nil {
				return c.protocolError("could not be described: %v", err)
			}
			c.answer(&contract.Reply{Result: raw})
			return nil
		}
		d.method, d.methods, d.pages = d.methods[0], d.methods[1:], 0
	}
	params := []byte(`{}`)
	if cursor != "" {
		params = []byte(`{"cursor":` + quote(cursor) + `}`)
	}
	d.asked = true
	c.stdin.push(requestLine([]byte(mcpListID), d.method, params))
	return nil
}

// discovery gathers an MCP server's surface.
type discovery struct {
	info    mcpInfo
	desc    abi.Description
	methods []string // list methods still to ask
	method  string   // the list method asked
	asked   bool     // a list request waits for its answer
	pages   int
}

// initialized takes the server's answer to initialize.
func (d *discovery) initialized(result []byte) error {
	var r struct {
		ProtocolVersion string                 `json:"protocolVersion"`
		Capabilities    map[string]jsonrpc.Raw `json:"capabilities"`
		ServerInfo      struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"serverInfo"`
		Instructions string `json:"instructions"`
	}
	if err := sonic.Unmarshal(result, &r); err != nil {
		return fmt.Errorf("a result that is not an InitializeResult: %v", err)
	}
	if r.Capabilities == nil {
		return fmt.Errorf("a result without capabilities")
	}
	if !slices.Contains(abi.MCPServerVersions(), r.ProtocolVersion) {
		return fmt.Errorf("protocol version %q; the host speaks %s to MCP servers", r.ProtocolVersion, strings.Join(abi.MCPServerVersions(), ", "))
	}
	d.info = mcpInfo{Version: r.ProtocolVersion}
	_, d.info.Logging = r.Capabilities["logging"]
	_, d.desc.Completions = r.Capabilities["completions"]
	d.desc.ABIVersion = abi.Version
	d.desc.Name, d.desc.Version, d.desc.Instructions = r.ServerInfo.Name, r.ServerInfo.Version, r.Instructions
	if _, ok := r.Capabilities["tools"]; ok {
		d.methods = append(d.methods, "tools/list")
	}
	if _, ok := r.Capabilities["resources"]; ok {
		d.methods = append(d.methods, "resources/list", "resources/templates/list")
	}
	if _, ok := r.Capabilities["prompts"]; ok {
		d.methods = append(d.methods, "prompts/list")
	}
	return nil
}

// add takes one page of d.method and returns its nextCursor.
func (d *discovery) add(page []byte) (string, error) {
	var p struct {
		Tools             []abi.Tool             `json:"tools"`
		Resources         []abi.Resource         `json:"resources"`
		ResourceTemplates []abi.ResourceTemplate `json:"resourceTemplates"`
		Prompts           []abi.Prompt           `json:"prompts"`
		NextCursor        string                 `json:"nextCursor"`
	}
	if err := json.Unmarshal(page, &p); err != nil {
		return "", fmt.Errorf("a malformed result: %v", err)
	}
	d.desc.Tools = append(d.desc.Tools, p.Tools...)
	d.desc.Resources = append(d.desc.Resources, p.Resources...)
	d.desc.ResourceTemplates = append(d.desc.ResourceTemplates, p.ResourceTemplates...)
	d.desc.Prompts = append(d.desc.Prompts, p.Prompts...)
	return p.NextCursor, nil
}

// result is the discovery run's answer: an mcpDescribed.
func (d *discovery) result() ([]byte, error) {
	for i := range d.desc.Tools {
		// A guest never sees a task: the host runs tasks itself.
		if t := &d.desc.Tools[i]; t.Execution != nil && t.Execution.TaskSupport == "" {
			t.Execution = nil
		}
	}
	desc, err := json.Marshal(&d.desc)
	if err != nil {
		return nil, err
	}
	return json.Marshal(&mcpDescribed{mcpInfo: d.info, Description: desc})
}

// parseMCPDescribed reads a discovery run's answer (or its cached copy).
func (m *Module) parseMCPDescribed(raw []byte, from string) (*abi.Description, *mcpInfo, error) {
	var md mcpDescribed
	if err := json.Unmarshal(raw, &md); err != nil || len(md.Description) == 0 || !slices.Contains(abi.MCPServerVersions(), md.Version) {
		return nil, nil, &GuestError{Module: m.name, Kind: KindLoad, Msg: fmt.Sprintf("MCP server description (%s) is not valid", from)}
	}
	d, err := m.parseDescription(md.Description, from)
	if err != nil {
		return nil, nil, err
	}
	return d, &md.mcpInfo, nil
}

// discover learns an MCP server's surface by running it once.
func (m *Module) discover(ctx context.Context, c *compiled) (*abi.Description, *mcpInfo, int, error) {
	reply, err := m.loadCall(ctx, c, methodDiscover, nil)
	if err != nil {
		return nil, nil, 0, &GuestError{Module: m.name, Kind: KindLoad, Msg: "MCP discovery failed: " + err.Error(), Err: err}
	}
	d, info, err := m.parseMCPDescribed(reply.Result, "MCP discovery")
	if err != nil {
		return nil, nil, 0, err
	}
	m.engine.descs.put(m.hash+mcpCacheSuffix, reply.Result)
	return d, info, len(reply.Result), nil
}

// envelopeNames are what stripEnvelope looks for before decoding.
var envelopeNames = [][]byte{[]byte(`io.modelcontextprotocol/`), []byte(`"task"`), []byte(`"inputResponses"`), []byte(`"requestState"`)}

// stripEnvelope removes from a client's params what belongs to the
// host–client exchange rather than to the request: the MCP keys of _meta
// (io.modelcontextprotocol/…: the client's revision, capabilities, log
// level, related task), and params.task, inputResponses and requestState.
// The guest speaks the revision agreed with the host at load, and the host
// runs tasks and multi round-trip requests itself. params is returned as is
// when it holds none of them.
func stripEnvelope(params []byte) []byte {
	if len(params) == 0 || !jsonrpc.MayHold(params, envelopeNames...) {
		return params
	}
	var top map[string]json.RawMessage
	if sonic.Unmarshal(params, &top) != nil {
		return params
	}
	n := len(top)
	delete(top, "task")
	delete(top, "inputResponses")
	delete(top, "requestState")
	changed := len(top) != n
	if raw, ok := top["_meta"]; ok {
		var meta map[string]json.RawMessage
		if sonic.Unmarshal(raw, &meta) == nil {
			n := len(meta)
			for k := range meta {
				if strings.HasPrefix(k, "io.modelcontextprotocol/") {
					delete(meta, k)
				}
			}
			switch {
			case len(meta) == n:
			case len(meta) == 0:
				delete(top, "_meta")
				changed = true
			default:
				if b, err := sonic.Marshal(meta); err == nil {
					top["_meta"] = b
					changed = true
				}
			}
		}
	}
	if !changed {
		// Only a value mentioned one of the names: the params go on
		// as they came.
		return params
	}
	b, err := sonic.Marshal(top)
	if err != nil {
		return params
	}
	return b
}

// callKey carries the running *call in the context the guest's functions
// see, for stdinListener.
type callKey struct{}

// fdNonblock is WASI's FD_NONBLOCK flag of fdstat.fs_flags.
const fdNonblock = 1 << 2

// stdinListener watches fd_fdstat_get for an MCP server's calls: it reports
// stdin as non-blocking. An MCP SDK reads stdin on a goroutine of its own
// while others answer; in a single-threaded instance a blocking read would
// stop them all, so a Go guest (which asks once, at start) reads stdin
// through its poller instead: an empty stdin reads as EAGAIN and the
// guest waits in poll_oneoff (inbox.Poll) with every goroutine parked.
// The listener acts only in the calls whose context carries the call
// (callKey): an MCP server's, and the describe run of a module in mode
// auto, which may be one; a native guest's calls never see it.
type stdinListener struct{}

func (stdinListener) Before(ctx context.Context, _ api.Module, _ api.FunctionDefinition, params []uint64, _ experimental.StackIterator) {
	if c, ok := ctx.Value(callKey{}).(*call); ok {
		c.fdstat = 0
		if uint32(params[0]) == 0 {
			c.fdstat = uint32(params[1]) + 1
		}
	}
}

func (stdinListener) After(ctx context.Context, mod api.Module, _ api.FunctionDefinition, results []uint64) {
	c, ok := ctx.Value(callKey{}).(*call)
	if !ok || c.fdstat == 0 {
		return
	}
	at := c.fdstat - 1 + 2 // fdstat: fs_filetype u8, pad, fs_flags u16
	c.fdstat = 0
	if uint32(results[0]) != 0 {
		return
	}
	if f, ok := mod.Memory().ReadUint16Le(at); ok && mod.Memory().WriteUint16Le(at, f|fdNonblock) {
		c.stdin.setNonblock()
	}
}

func (stdinListener) Abort(context.Context, api.Module, api.FunctionDefinition, error) {}
