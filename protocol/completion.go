package protocol

import (
	"github.com/wasmcp/wasmcp/abi"
)

var emptyCompletion = []byte(`{"completion":{"values":[],"total":0,"hasMore":false}}`)

func (r *request) complete() Response {
	ref := r.p.Ref
	if ref == nil || r.p.Argument == nil {
		return r.fail(errorf(CodeInvalidParams, "completion/complete needs ref and argument"))
	}
	var key string
	switch ref.Type {
	case "ref/prompt":
		if e, ok := r.cat.promptIdx[ref.Name]; !ok || !r.allowed(e.mod, ItemPrompt, ref.Name) {
			return r.fail(errorf(CodeInvalidParams, "Unknown prompt: "+ref.Name))
		}
		key = "prompt\x00" + ref.Name
	case "ref/resource":
		key = "template\x00" + ref.URI
	default:
		return r.fail(errorf(CodeInvalidParams, "Unknown ref type: "+ref.Type))
	}
	mod, ok := r.cat.complete[key]
	if !ok || ref.Type == "ref/resource" && !r.allowed(mod, ItemResource, ref.URI) {
		return r.ok(emptyCompletion, noCache)
	}
	reply, err := r.invoke(mod, abi.MethodComplete)
	if err != nil {
		return r.guestFailure(err)
	}
	if reply.Error != nil {
		return r.fail(reply.Error)
	}
	return r.ok(reply.Result, noCache)
}
