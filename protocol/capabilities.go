package protocol

import (
	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/jsonrpc"
)

// ClientCaps is what a client declared it can do, parsed once (at
// initialize, or from a modern request's _meta) into the flags the server
// acts on.
type ClientCaps struct {
	// Raw is the capabilities object as the client sent it.
	Raw []byte
	// Sampling: sampling; SamplingTools, SamplingContext: its tools and
	// context members.
	Sampling, SamplingTools, SamplingContext bool
	// Elicitation: elicitation; ElicitForm, ElicitURL: its form and url
	// members.
	Elicitation, ElicitForm, ElicitURL bool
	// Roots: roots.
	Roots bool
	// Tasks: tasks, or the tasks extension.
	Tasks bool
}

// parseCaps reads the capability flags the server acts on.
func parseCaps(raw []byte) (ClientCaps, error) {
	c := ClientCaps{Raw: raw}
	if len(raw) == 0 {
		return c, nil
	}
	var v struct {
		Sampling    *jsonrpc.Raw `json:"sampling"`
		Elicitation *struct {
			Form *jsonrpc.Raw `json:"form"`
			URL  *jsonrpc.Raw `json:"url"`
		} `json:"elicitation"`
		Roots      *jsonrpc.Raw           `json:"roots"`
		Tasks      *jsonrpc.Raw           `json:"tasks"`
		Extensions map[string]jsonrpc.Raw `json:"extensions"`
	}
	if err := sonic.Unmarshal(raw, &v); err != nil {
		return c, err
	}
	c.Sampling = v.Sampling != nil
	if v.Sampling != nil && isObject(*v.Sampling) {
		var sv struct {
			Tools   *jsonrpc.Raw `json:"tools"`
			Context *jsonrpc.Raw `json:"context"`
		}
		_ = sonic.Unmarshal(*v.Sampling, &sv)
		c.SamplingTools, c.SamplingContext = sv.Tools != nil, sv.Context != nil
	}
	c.Elicitation = v.Elicitation != nil
	c.ElicitForm = v.Elicitation != nil && v.Elicitation.Form != nil
	c.ElicitURL = v.Elicitation != nil && v.Elicitation.URL != nil
	c.Roots = v.Roots != nil
	_, ext := v.Extensions[ExtTasks]
	c.Tasks = v.Tasks != nil || ext
	return c, nil
}

// requiredCapability returns the -32021 error for a guest request to the
// client that the client's declared capabilities do not cover, nil when
// they do.
func (r *request) requiredCapability(method string, params []byte) *abi.Error {
	var need, what string
	switch method {
	case abi.MethodElicit:
		var p struct {
			Mode string `json:"mode"`
		}
		_ = sonic.Unmarshal(params, &p)
		c := &r.caps
		switch {
		case p.Mode == "url":
			if !c.ElicitURL {
				need, what = `{"elicitation":{"url":{}}}`, "URL-mode elicitation"
			}
		case !c.Elicitation:
			need, what = `{"elicitation":{}}`, "elicitation"
		case !c.ElicitForm && c.ElicitURL:
			need, what = `{"elicitation":{"form":{}}}`, "form-mode elicitation"
		}
	case abi.MethodSample:
		var p struct {
			Tools          jsonrpc.Raw `json:"tools"`
			IncludeContext string      `json:"includeContext"`
		}
		_ = sonic.Unmarshal(params, &p)
		c := &r.caps
		switch {
		case !c.Sampling:
			need, what = `{"sampling":{}}`, "sampling"
		case len(p.Tools) > 0 && string(p.Tools) != "null" && !c.SamplingTools:
			need, what = `{"sampling":{"tools":{}}}`, "sampling with tools"
		case (p.IncludeContext == "thisServer" || p.IncludeContext == "allServers") && !c.SamplingContext:
			need, what = `{"sampling":{"context":{}}}`, "sampling with context"
		}
	case abi.MethodListRoots:
		if !r.caps.Roots {
			need, what = `{"roots":{}}`, "roots"
		}
	}
	if need == "" {
		return nil
	}
	return &abi.Error{
		Code:    abi.CodeMissingCapability,
		Message: "The client did not declare the " + what + " capability",
		Data:    []byte(`{"requiredCapabilities":` + need + `}`),
	}
}
