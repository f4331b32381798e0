package protocol

import (
	"github.com/bytedance/sonic"

	"github.com/wasmcp/wasmcp/abi"
)

func (r *request) readResource() Response {
	uri := r.p.URI
	if uri == "" {
		return r.fail(errorf(CodeInvalidParams, "Missing required parameter: uri"))
	}
	if resp, ok := r.readSkillFile(uri); ok {
		return resp
	}
	var mod Module
	name := uri // what grants name: the URI, or the template it matches
	if e, ok := r.cat.resIdx[uri]; ok {
		if r.allowed(e.mod, ItemResource, uri) {
			mod = e.mod
		}
	} else {
		if t := r.cat.templateFor(uri); t != nil && r.allowed(t.mod, ItemResource, t.tmpl.URITemplate) {
			mod, name = t.mod, t.tmpl.URITemplate
		}
	}
	if mod == nil {
		return r.fail(r.notFound(uri))
	}
	if err := r.prepareInputs(); err != nil {
		return r.fail(err)
	}
	reply, err := r.invoke(mod, abi.MethodResourceRead)
	if err != nil {
		return r.guestFailure(err)
	}
	if len(reply.InputRequests) > 0 {
		return r.inputRequired(reply)
	}
	if reply.Error != nil {
		if reply.Error.Code == CodeInvalidParams || reply.Error.Code == CodeResourceNotFound {
			// The guest's words are kept; the code and data.uri are
			// those of the revision's resource-not-found (SEP-2164 in
			// 2026-07-28: -32602 with data.uri).
			e := r.notFound(uri)
			if reply.Error.Message != "" {
				e.Message = reply.Error.Message
			}
			e.Data = withURI(reply.Error.Data, uri, e.Data)
			return r.fail(e)
		}
		return r.fail(reply.Error)
	}
	return r.done(reply.Result, r.itemScope(mod, ItemResource, name))
}

// notFound is the resource-not-found error of the request's revision.
func (r *request) notFound(uri string) *Error {
	data, _ := sonic.Marshal(map[string]string{"uri": uri})
	code := CodeInvalidParams
	if r.era == Legacy {
		code = CodeResourceNotFound
	}
	return &Error{Code: code, Message: "Resource not found", Data: data}
}

// withURI is the guest's error data with a "uri" member: the guest's object
// with uri added when it lacks one, else def ({"uri": uri}).
func withURI(data []byte, uri string, def []byte) []byte {
	var m map[string]any
	if len(data) == 0 || sonic.Unmarshal(data, &m) != nil || m == nil {
		return def
	}
	if _, ok := m["uri"]; !ok {
		m["uri"] = uri
	}
	b, err := sonic.Marshal(m)
	if err != nil {
		return def
	}
	return b
}
