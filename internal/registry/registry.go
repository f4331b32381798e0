// Package registry keeps the modules of a tools directory loaded: it
// compiles every .wasm file in the directory through a host.Engine, builds
// the protocol catalog from them and installs it on the protocol.Server.
package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/protocol"
)

// Registry maps the files of one tools directory to loaded modules.
type Registry struct {
	dir    string
	engine *host.Engine
	srv    *protocol.Server
	log    *slog.Logger

	mu      sync.Mutex
	modules map[string]*entry // by file name
}

type entry struct {
	mod  *host.Module
	hash string
}

// New creates a registry for dir. Nothing is loaded until Load.
func New(dir string, engine *host.Engine, srv *protocol.Server, log *slog.Logger) *Registry {
	if log == nil {
		log = slog.Default()
	}
	return &Registry{dir: dir, engine: engine, srv: srv, log: log, modules: map[string]*entry{}}
}

// ModuleName is the module name of a file: its base name without .wasm.
func ModuleName(file string) string {
	return strings.TrimSuffix(filepath.Base(file), ".wasm")
}

// LoadFile compiles, describes and validates one module file with the
// policy found beside it.
func LoadFile(ctx context.Context, engine *host.Engine, path string) (*host.Module, error) {
	wasm, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	pol, err := LoadPolicy(path)
	if err != nil {
		return nil, err
	}
	return engine.Load(ctx, ModuleName(path), wasm, pol)
}

// Load loads every .wasm file in the directory. A module that fails to load
// is logged and skipped; Load fails only if the directory cannot be read.
func (r *Registry) Load(ctx context.Context) error {
	files, err := r.scan()
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range files {
		r.loadLocked(ctx, f)
	}
	r.publishLocked()
	return nil
}

func (r *Registry) scan() ([]string, error) {
	ents, err := os.ReadDir(r.dir)
	if err != nil {
		return nil, fmt.Errorf("tools directory: %w", err)
	}
	var files []string
	for _, e := range ents {
		if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".wasm") {
			files = append(files, e.Name())
		}
	}
	sort.Strings(files)
	return files, nil
}

// loadLocked (re)loads one file; on failure the previous version, if any,
// keeps serving.
func (r *Registry) loadLocked(ctx context.Context, file string) bool {
	path := filepath.Join(r.dir, file)
	m, err := LoadFile(ctx, r.engine, path)
	if err != nil {
		var ge *host.GuestError
		reason := err.Error()
		if errors.As(err, &ge) {
			reason = ge.Msg
		}
		r.log.Error("module refused", "file", path, "reason", reason)
		return false
	}
	if old, ok := r.modules[file]; ok && old.hash == m.Hash() {
		_ = m.Close(ctx)
		return false
	}
	r.modules[file] = &entry{mod: m, hash: m.Hash()}
	return true
}

// publishLocked builds a catalog from the loaded modules and installs it.
func (r *Registry) publishLocked() {
	mods := make([]protocol.Module, 0, len(r.modules))
	for _, e := range r.modules {
		mods = append(mods, e.mod)
	}
	cat, _ := protocol.NewCatalog(mods, r.log)
	r.srv.SetCatalog(cat)
	t, res, p := cat.Counts()
	r.log.Info("catalog published", "modules", len(mods), "tools", t, "resources", res, "prompts", p)
}

// Modules returns the loaded modules by file name.
func (r *Registry) Modules() map[string]*host.Module {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]*host.Module, len(r.modules))
	for f, e := range r.modules {
		out[f] = e.mod
	}
	return out
}
