package guest

import (
	"fmt"
	"strings"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/abi/uritemplate"
)

// Resource declares a resource with a fixed URI (an MCP Resource: URI and
// Name are required; Title, Description, MimeType, Size, Annotations are
// optional).
type Resource = abi.Resource

// ResourceTemplate declares a family of resources whose URIs match an RFC
// 6570 level-1 URI template such as "notes://{folder}/{id}" (an MCP
// ResourceTemplate: URITemplate and Name are required).
type ResourceTemplate = abi.ResourceTemplate

// Prompt declares a prompt (an MCP Prompt: Name is required, Description
// recommended, Arguments optional).
type Prompt = abi.Prompt

// PromptArgument declares one argument of a Prompt.
type PromptArgument = abi.PromptArgument

// ResourceHandler reads a resource added with AddResource; uri is the
// resource's URI.
type ResourceHandler func(c *Context, uri string) ([]ResourceContents, error)

// TemplateHandler reads a resource whose URI matched a template added with
// AddResourceTemplate; vars holds the template variables' values,
// percent-decoded. A handler that finds nothing for vars returns
// ResourceNotFound(uri).
type TemplateHandler func(c *Context, uri string, vars map[string]string) ([]ResourceContents, error)

// PromptHandler renders a prompt. args holds the arguments the client sent;
// every argument the Prompt declares as required is present and non-empty.
type PromptHandler func(c *Context, args map[string]string) (*PromptResult, error)

// CompletionHandler suggests values for a prompt argument or a template
// variable. value is what the user has typed so far; context holds the
// values of the other arguments already resolved, if the client sent them.
// Return at most a few hundred values: the SDK answers the first 100 and
// reports the total.
type CompletionHandler func(c *Context, value string, context map[string]string) ([]string, error)

// PromptResult is an MCP GetPromptResult.
type PromptResult struct {
	Description string          `json:"description,omitempty"` // defaults to the prompt's description
	Messages    []PromptMessage `json:"messages"`
	Meta        map[string]any  `json:"_meta,omitempty"`
}

// PromptMessage is one message of a PromptResult; Role is "user" or
// "assistant".
type PromptMessage struct {
	Role    string  `json:"role"`
	Content Content `json:"content"`
}

// UserMessage returns a prompt message from the user with a text block.
func UserMessage(text string) PromptMessage {
	return PromptMessage{Role: "user", Content: Text(text)}
}

// AssistantMessage returns a prompt message from the assistant with a text
// block.
func AssistantMessage(text string) PromptMessage {
	return PromptMessage{Role: "assistant", Content: Text(text)}
}

// CompletionRef names what a completion is for: a prompt (PromptRef) or a
// resource template (TemplateRef). It is MCP's ref/prompt or ref/resource.
type CompletionRef struct {
	Type string `json:"type"`           // "ref/prompt" or "ref/resource"
	Name string `json:"name,omitempty"` // the prompt's name, for ref/prompt
	URI  string `json:"uri,omitempty"`  // the template's URI template, for ref/resource
}

// PromptRef returns the reference to the prompt with the given name.
func PromptRef(name string) CompletionRef { return CompletionRef{Type: "ref/prompt", Name: name} }

// TemplateRef returns the reference to the resource template with the given
// URI template (exactly as registered).
func TemplateRef(uriTemplate string) CompletionRef {
	return CompletionRef{Type: "ref/resource", URI: uriTemplate}
}

func (r CompletionRef) key(arg string) string {
	id := r.Name
	if r.Type == "ref/resource" {
		id = r.URI
	}
	return r.Type + "\x00" + id + "\x00" + arg
}

// FilterPrefix returns the candidates that start with prefix, ignoring case,
// in their original order. It is the usual body of a CompletionHandler.
func FilterPrefix(candidates []string, prefix string) []string {
	out := []string{}
	p := strings.ToLower(prefix)
	for _, c := range candidates {
		if strings.HasPrefix(strings.ToLower(c), p) {
			out = append(out, c)
		}
	}
	return out
}

type resourceEntry struct {
	def Resource
	h   ResourceHandler
}

type templateEntry struct {
	def  ResourceTemplate
	tmpl *uritemplate.Template
	h    TemplateHandler
}

type promptEntry struct {
	def Prompt
	h   PromptHandler
}

// AddResource registers a resource with a fixed URI. It panics if r.URI or
// r.Name is empty, the URI is already registered, or h is nil.
func (s *Server) AddResource(r Resource, h ResourceHandler) {
	if r.URI == "" || r.Name == "" || h == nil {
		panic(fmt.Sprintf("guest: AddResource %q: URI, Name and handler are required", r.URI))
	}
	if s.resourceIndex[r.URI] != nil {
		panic("guest: duplicate resource " + r.URI)
	}
	e := &resourceEntry{def: r, h: h}
	s.resources = append(s.resources, e)
	s.resourceIndex[r.URI] = e
}

// AddResourceTemplate registers a resource template. A resources/read of a
// URI that is no fixed resource goes to the first template (in
// registration order) the URI matches. In the template, {name} stands for
// one or more characters other than '/', '?' and '#' (percent-decoded
// into vars); anything else is literal. AddResourceTemplate panics if the
// template is not RFC 6570 level 1 (operators like {+x} or {?q}, adjacent
// expressions), if t.Name is empty, the template is registered twice, or h
// is nil.
func (s *Server) AddResourceTemplate(t ResourceTemplate, h TemplateHandler) {
	if t.Name == "" || h == nil {
		panic(fmt.Sprintf("guest: AddResourceTemplate %q: Name and handler are required", t.URITemplate))
	}
	tmpl, err := uritemplate.ParseStrict(t.URITemplate)
	if err != nil {
		panic("guest: " + err.Error())
	}
	if len(tmpl.Names()) == 0 {
		panic(fmt.Sprintf("guest: uri template %q has no {variable}; use AddResource", t.URITemplate))
	}
	for _, e := range s.templates {
		if e.def.URITemplate == t.URITemplate {
			panic("guest: duplicate resource template " + t.URITemplate)
		}
	}
	s.templates = append(s.templates, &templateEntry{def: t, tmpl: tmpl, h: h})
}

// AddPrompt registers a prompt. It panics if p.Name is empty or already
// registered, or h is nil.
func (s *Server) AddPrompt(p Prompt, h PromptHandler) {
	if p.Name == "" || h == nil {
		panic(fmt.Sprintf("guest: AddPrompt %q: Name and handler are required", p.Name))
	}
	if s.promptIndex[p.Name] != nil {
		panic("guest: duplicate prompt " + p.Name)
	}
	e := &promptEntry{def: p, h: h}
	s.prompts = append(s.prompts, e)
	s.promptIndex[p.Name] = e
}

// AddCompletion registers completions for the argument argName of a prompt
// (ref = PromptRef(name)) or for the variable argName of a resource
// template (ref = TemplateRef(uriTemplate)). Once any completion exists,
// the module's description says "completions": true. A completion request
// for a reference or argument without a handler is answered with no
// values. AddCompletion panics on an empty argName, an invalid ref, a
// duplicate, or a nil handler.
func (s *Server) AddCompletion(ref CompletionRef, argName string, h CompletionHandler) {
	if argName == "" || h == nil {
		panic("guest: AddCompletion: argument name and handler are required")
	}
	switch {
	case ref.Type == "ref/prompt" && ref.Name != "":
	case ref.Type == "ref/resource" && ref.URI != "":
	default:
		panic(fmt.Sprintf("guest: AddCompletion: invalid ref %+v; use PromptRef or TemplateRef", ref))
	}
	k := ref.key(argName)
	if s.completions[k] != nil {
		panic(fmt.Sprintf("guest: duplicate completion for %s %s%s argument %s", ref.Type, ref.Name, ref.URI, argName))
	}
	s.completions[k] = h
}
