package registry

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/host"
)

// The TypeScript transform: a guest (guest-sdk/js/tsstrip, esbuild's Go
// API built for wasip1) that the registry runs like any module — compiled
// once per engine into the engine's compilation cache, every transform in
// a fresh instance from its snapshot, under transformPolicy's deadline and
// memory cap, with no mounts, no environment, no network. The host itself
// parses no TypeScript; what the transform answers is only ever run in
// the runner's sandbox, as the script's own code would be.

// TransformModuleName is the name the transform guest runs under (in the
// engine's log lines and errors).
const TransformModuleName = "wasmcp-ts-transform"

// transformPolicy bounds one transform: a script is at most
// MaxScriptBytes, and esbuild needs a few times its size.
var transformPolicy = host.Policy{
	Limits: host.Limits{
		MemoryBytes: 512 << 20,
		Timeout:     20 * time.Second,
		OutputBytes: 4*MaxScriptBytes + 1<<20,
		LineBytes:   4*MaxScriptBytes + 1<<20,
	},
	DiscardStderr: true,
}

// transforms holds the transform module loaded on each engine and the
// last transforms' results.
var transforms transformCache

type transformCache struct {
	mu   sync.Mutex
	mods map[*host.Engine]*host.Module
	out  map[[32]byte]transformResult
}

type transformResult struct {
	js  []byte
	err error
}

// maxCachedTransforms bounds the results kept (a result is at most a few
// times MaxScriptBytes; the scripts of one tools directory are few).
const maxCachedTransforms = 64

func (c *transformCache) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.mods, c.out = nil, nil
}

// module returns the transform module on e, loading it the first time.
func (c *transformCache) module(ctx context.Context, e *host.Engine, t *ScriptTools) (*host.Module, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m := c.mods[e]; m != nil {
		return m, nil
	}
	wasm, err := t.Transform()
	if err != nil {
		return nil, fmt.Errorf("the TypeScript transform: %w", err)
	}
	m, err := e.Load(ctx, TransformModuleName, wasm, transformPolicy)
	if err != nil {
		return nil, fmt.Errorf("the TypeScript transform: %w", err)
	}
	if c.mods == nil {
		c.mods = map[*host.Engine]*host.Module{}
	}
	c.mods[e] = m
	return m, nil
}

// transformTS turns the TypeScript src of the file name into CommonJS
// JavaScript in the transform guest. A syntax error is an error whose
// text is one line per problem, FILE:LINE:COL: message.
func transformTS(ctx context.Context, e *host.Engine, t *ScriptTools, name string, src []byte) ([]byte, error) {
	if e == nil {
		return nil, errors.New("the TypeScript transform needs an engine to run on")
	}
	key := sha256.Sum256([]byte(name + "\x00" + string(src)))
	transforms.mu.Lock()
	r, ok := transforms.out[key]
	transforms.mu.Unlock()
	if ok {
		return r.js, r.err
	}
	m, err := transforms.module(ctx, e, t)
	if err != nil {
		return nil, err
	}
	params, err := json.Marshal(map[string]any{"name": "transform", "arguments": map[string]string{"name": name, "source": string(src)}})
	if err != nil {
		return nil, err
	}
	reply, err := m.Call(ctx, abi.MethodToolsCall, params, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: the TypeScript transform: %w", name, err)
	}
	if reply.Error != nil {
		return nil, fmt.Errorf("%s: the TypeScript transform: %s", name, reply.Error.Message)
	}
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(reply.Result, &res); err != nil || len(res.Content) != 1 {
		return nil, fmt.Errorf("%s: the TypeScript transform answered something else than one text", name)
	}
	r = transformResult{js: []byte(res.Content[0].Text)}
	if res.IsError {
		r = transformResult{err: errors.New(strings.TrimSpace(res.Content[0].Text))}
	}
	transforms.mu.Lock()
	if transforms.out == nil || len(transforms.out) >= maxCachedTransforms {
		transforms.out = map[[32]byte]transformResult{}
	}
	transforms.out[key] = r
	transforms.mu.Unlock()
	return r.js, r.err
}
