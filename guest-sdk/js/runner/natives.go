package main

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/dop251/goja"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

// natives is the object the prelude builds the API on: each function is
// one step the API cannot take in JavaScript.
func (r *runner) natives() goja.Value {
	o := r.vm.NewObject()
	set := func(name string, f func(goja.FunctionCall) goja.Value) {
		_ = o.Set(name, f)
	}
	set("scriptName", func(goja.FunctionCall) goja.Value { return r.vm.ToValue(r.name) })
	set("newServer", func(call goja.FunctionCall) goja.Value {
		if r.srv != nil {
			panic(r.vm.NewTypeError("a script creates one McpServer"))
		}
		var opts []guest.Option
		if in := call.Argument(2).String(); in != "" && !goja.IsUndefined(call.Argument(2)) {
			opts = append(opts, guest.WithInstructions(in))
		}
		r.srv = guest.New(call.Argument(0).String(), call.Argument(1).String(), opts...)
		return goja.Undefined()
	})
	set("addTool", func(call goja.FunctionCall) goja.Value {
		name := call.Argument(0).String()
		var def struct {
			Title        string          `json:"title"`
			Description  string          `json:"description"`
			InputSchema  json.RawMessage `json:"inputSchema"`
			OutputSchema json.RawMessage `json:"outputSchema"`
			Annotations  *guest.ToolAnnotations
			Meta         map[string]any `json:"_meta"`
		}
		r.decode(call.Argument(1), &def, "tool "+name)
		t := guest.Tool{Name: name, Title: def.Title, Description: def.Description, Annotations: def.Annotations, Meta: def.Meta}
		if len(def.InputSchema) > 0 {
			t.InputSchema = def.InputSchema
		}
		if len(def.OutputSchema) > 0 {
			t.OutputSchema = def.OutputSchema
		}
		r.register(func() { r.server().AddRawTool(t, r.callTool(name, call.Argument(2))) })
		return goja.Undefined()
	})
	set("addResource", func(call goja.FunctionCall) goja.Value {
		var res guest.Resource
		r.decode(call.Argument(0), &res, "resource")
		fn := call.Argument(1)
		r.register(func() {
			r.server().AddResource(res, func(c *guest.Context, uri string) ([]guest.ResourceContents, error) {
				return r.contents(c, "resource "+uri, fn, r.vm.ToValue(uri), goja.Undefined())
			})
		})
		return goja.Undefined()
	})
	set("addTemplate", func(call goja.FunctionCall) goja.Value {
		var t guest.ResourceTemplate
		r.decode(call.Argument(0), &t, "resource template")
		fn := call.Argument(1)
		r.register(func() {
			r.server().AddResourceTemplate(t, func(c *guest.Context, uri string, vars map[string]string) ([]guest.ResourceContents, error) {
				return r.contents(c, "resource "+uri, fn, r.vm.ToValue(uri), r.vm.ToValue(vars))
			})
		})
		return goja.Undefined()
	})
	set("addPrompt", func(call goja.FunctionCall) goja.Value {
		var p guest.Prompt
		r.decode(call.Argument(0), &p, "prompt")
		fn := call.Argument(1)
		r.register(func() {
			r.server().AddPrompt(p, func(c *guest.Context, args map[string]string) (*guest.PromptResult, error) {
				if args == nil {
					args = map[string]string{}
				}
				v, err := r.run(c, "prompt "+p.Name, fn, r.vm.ToValue(args))
				if err != nil {
					return nil, err
				}
				var res guest.PromptResult
				if err := json.Unmarshal([]byte(v.String()), &res); err != nil {
					return nil, fmt.Errorf("prompt %s: its result is not a prompt result: %v", p.Name, err)
				}
				return &res, nil
			})
		})
		return goja.Undefined()
	})
	set("progress", func(call goja.FunctionCall) goja.Value {
		c := r.call("progress")
		msg := ""
		if m := call.Argument(2); !goja.IsUndefined(m) && !goja.IsNull(m) {
			msg = m.String()
		}
		total := 0.0
		if t := call.Argument(1); !goja.IsUndefined(t) && !goja.IsNull(t) {
			total = t.ToFloat()
		}
		c.Progress(call.Argument(0).ToFloat(), total, msg)
		return goja.Undefined()
	})
	set("log", func(call goja.FunctionCall) goja.Value {
		c := r.call("log")
		c.Log(call.Argument(0).String(), json.RawMessage(call.Argument(1).String()))
		return goja.Undefined()
	})
	set("meta", func(goja.FunctionCall) goja.Value {
		if r.cur == nil || len(r.cur.Meta()) == 0 {
			return r.vm.ToValue("{}")
		}
		return r.vm.ToValue(string(r.cur.Meta()))
	})
	set("elicit", func(call goja.FunctionCall) goja.Value {
		c := r.call("elicit")
		key := ""
		if k := call.Argument(2); !goja.IsUndefined(k) && !goja.IsNull(k) {
			key = k.String()
		}
		res, err := c.ElicitKey(key, call.Argument(0).String(), json.RawMessage(call.Argument(1).String()))
		if err != nil {
			panic(r.clientError(err))
		}
		return r.vm.ToValue(r.encode(res))
	})
	set("sample", func(call goja.FunctionCall) goja.Value {
		c := r.call("sample")
		var p guest.SampleParams
		r.decode(call.Argument(0), &p, "sample")
		res, err := c.SampleKey(stringArg(call.Argument(1)), p)
		if err != nil {
			panic(r.clientError(err))
		}
		return r.vm.ToValue(r.encode(res))
	})
	set("listRoots", func(call goja.FunctionCall) goja.Value {
		c := r.call("listRoots")
		roots, err := c.ListRootsKey(stringArg(call.Argument(0)))
		if err != nil {
			panic(r.clientError(err))
		}
		return r.vm.ToValue(r.encode(roots))
	})
	set("http", func(call goja.FunctionCall) goja.Value {
		c := r.call("fetch")
		var req guest.HTTPRequest
		r.decode(call.Argument(0), &req, "fetch")
		resp, err := c.HTTP(&req)
		if err != nil {
			panic(r.vm.NewTypeError("fetch " + req.URL + ": " + err.Error()))
		}
		return r.vm.ToValue(r.encode(resp))
	})
	set("randomBytes", func(call goja.FunctionCall) goja.Value {
		n := call.Argument(0).ToInteger()
		if n < 0 || n > 65536 {
			panic(r.vm.NewTypeError("crypto.getRandomValues: at most 65536 bytes at once"))
		}
		b := make([]byte, n)
		if _, err := rand.Read(b); err != nil {
			panic(r.vm.NewGoError(err))
		}
		return r.vm.ToValue(r.vm.NewArrayBuffer(b))
	})
	set("setTimer", func(call goja.FunctionCall) goja.Value {
		fn, ok := goja.AssertFunction(call.Argument(0))
		if !ok {
			panic(r.vm.NewTypeError("setTimeout: the callback is not a function"))
		}
		return r.vm.ToValue(r.timers.add(fn, call.Argument(1).ToFloat(), call.Argument(2).ToBoolean()))
	})
	set("clearTimer", func(call goja.FunctionCall) goja.Value {
		r.timers.remove(call.Argument(0).ToInteger())
		return goja.Undefined()
	})
	set("write", func(call goja.FunctionCall) goja.Value {
		// Every console line goes to stderr, the host's log; stdout is
		// the protocol stream and never sees it.
		fmt.Fprintln(os.Stderr, call.Argument(0).String())
		return goja.Undefined()
	})
	return o
}

func stringArg(v goja.Value) string {
	if goja.IsUndefined(v) || goja.IsNull(v) {
		return ""
	}
	return v.String()
}

// server is the script's server; registering before creating it throws.
func (r *runner) server() *guest.Server {
	if r.srv == nil {
		panic(r.vm.NewTypeError("create the server with `new McpServer({name, version})` before registering on it"))
	}
	return r.srv
}

// call is the request being served; the call-context functions throw
// outside a handler (at the top level, which runs at load).
func (r *runner) call(what string) *guest.Context {
	if r.cur == nil {
		panic(r.vm.NewTypeError(what + " is only available while a handler runs, not at the top level"))
	}
	return r.cur
}

// register runs one of the SDK's registrations, whose panics (a
// duplicate name, an invalid schema) become a TypeError.
func (r *runner) register(f func()) {
	defer func() {
		if x := recover(); x != nil {
			if _, ok := x.(*goja.Object); ok {
				panic(x)
			}
			panic(r.vm.NewTypeError(strings.TrimPrefix(fmt.Sprint(x), "guest: ")))
		}
	}()
	f()
}

// decode reads the JSON text v into out, or throws a TypeError.
func (r *runner) decode(v goja.Value, out any, what string) {
	if err := json.Unmarshal([]byte(v.String()), out); err != nil {
		panic(r.vm.NewTypeError(fmt.Sprintf("%s: %v", what, err)))
	}
}

// encode is v as JSON text.
func (r *runner) encode(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(r.vm.NewGoError(err))
	}
	return string(b)
}

// clientError turns an error of a request to the client into a JS Error
// the handler can catch; a *guest.ClientError keeps its code.
func (r *runner) clientError(err error) *goja.Object {
	msg := err.Error()
	var ce *guest.ClientError
	if errors.As(err, &ce) {
		msg = ce.Message
	}
	ctor, _ := goja.AssertConstructor(r.vm.Get("Error"))
	o, cerr := ctor(nil, r.vm.ToValue(msg))
	if cerr != nil {
		return r.vm.NewGoError(err)
	}
	if ce != nil {
		_ = o.Set("code", ce.Code)
	}
	return o
}

// contents runs a resource handler; the prelude answers JSON contents.
func (r *runner) contents(c *guest.Context, what string, fn goja.Value, args ...goja.Value) ([]guest.ResourceContents, error) {
	v, err := r.run(c, what, fn, args...)
	if err != nil {
		return nil, err
	}
	var out []guest.ResourceContents
	if err := json.Unmarshal([]byte(v.String()), &out); err != nil {
		return nil, fmt.Errorf("%s: its result is not resource contents: %v", what, err)
	}
	return out, nil
}
