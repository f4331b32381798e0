package protocol

import (
	"github.com/wasmcp/wasmcp/abi"
)

func (r *request) getPrompt() Response {
	e, ok := r.cat.promptIdx[r.p.Name]
	if !ok || !r.allowed(e.mod, ItemPrompt, r.p.Name) {
		return r.fail(errorf(CodeInvalidParams, "Unknown prompt: "+r.p.Name))
	}
	if err := r.prepareInputs(); err != nil {
		return r.fail(err)
	}
	reply, err := r.invoke(e.mod, abi.MethodPromptsGet)
	if err != nil {
		return r.guestFailure(err)
	}
	if len(reply.InputRequests) > 0 {
		return r.inputRequired(reply)
	}
	if reply.Error != nil {
		return r.fail(reply.Error)
	}
	return r.ok(reply.Result, noCache)
}
