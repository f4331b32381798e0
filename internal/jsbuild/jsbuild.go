package jsbuild

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

//go:generate go run ./gen

//go:embed embed
var embedded embed.FS

// A guest this package provides.
type guest struct {
	name string // file name stem: NAME.wasm.gz in embed/
	dir  string // its main package, from the repository root
}

var (
	runnerGuest = guest{"runner", "guest-sdk/js/runner"}
	guests      = []guest{runnerGuest}
)

// sourceDirs are the directories, from the repository root, whose files
// the guests are built from: the main package and the modules it uses
// from the checkout (replace directives).
var sourceDirs = []string{"guest-sdk/js/runner", "guest-sdk/go", "abi"}

// HashFile is the name, in embed/, of the file holding the hash of the
// sources the embedded guests were built from.
const HashFile = "source.sha256"

// Runner returns the JavaScript runner module's bytes.
func Runner() ([]byte, error) { return runnerOnce() }

var runnerOnce = sync.OnceValues(func() ([]byte, error) { return get(runnerGuest) })

// Embedded returns the embedded module of a guest ("runner") and the recorded hash of its sources; ok is false when
// nothing was embedded.
func Embedded(name string) (wasm []byte, sourceHash string, ok bool, err error) {
	z, err := embedded.ReadFile("embed/" + name + ".wasm.gz")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", false, nil
	} else if err != nil {
		return nil, "", false, err
	}
	h, err := embedded.ReadFile("embed/" + HashFile)
	if err != nil {
		return nil, "", false, fmt.Errorf("jsbuild: %s embedded without %s", name, HashFile)
	}
	wasm, err = gunzip(z)
	if err != nil {
		return nil, "", false, fmt.Errorf("jsbuild: embedded %s: %w", name, err)
	}
	return wasm, strings.TrimSpace(string(h)), true, nil
}

func get(g guest) ([]byte, error) {
	wasm, _, ok, err := Embedded(g.name)
	if ok || err != nil {
		return wasm, err
	}
	return buildOnFirstUse(g)
}

// buildOnFirstUse builds g from the checkout around the working directory
// into the user cache directory, or reads it from there.
func buildOnFirstUse(g guest) ([]byte, error) {
	none := "no JavaScript runner is built into this wasmcp"
	root, err := SourceRoot()
	if err != nil {
		return nil, fmt.Errorf("%s, and there is no wasmcp checkout to build them from (%v): build wasmcp after `go generate ./internal/jsbuild`, or set WASMCP_JS_RUNNER", none, err)
	}
	sum, err := SourceHash(root)
	if err != nil {
		return nil, err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return nil, fmt.Errorf("%s, and no user cache directory to build them into: %w", none, err)
	}
	dir := filepath.Join(cache, "wasmcp", "js", sum)
	out := filepath.Join(dir, g.name+".wasm")
	if b, err := os.ReadFile(out); err == nil {
		return b, nil
	}
	slog.Info("jsbuild: nothing embedded in this wasmcp: building the script guest from the checkout (once; go generate ./internal/jsbuild embeds it)",
		"guest", g.dir, "into", out)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(dir, ".build-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	t0 := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := build(ctx, root, g, filepath.Join(tmp, g.name+".wasm")); err != nil {
		return nil, fmt.Errorf("%s, and building %s failed: %w", none, g.dir, err)
	}
	if err := os.Rename(filepath.Join(tmp, g.name+".wasm"), out); err != nil {
		return nil, err
	}
	slog.Info("jsbuild: built", "guest", g.dir, "took", time.Since(t0).Round(time.Millisecond))
	return os.ReadFile(out)
}

// build builds one guest as build.sh and go generate build it (a reactor,
// -trimpath, no VCS stamp, stripped), so the same sources and Go give the
// same bytes.
func build(ctx context.Context, root string, g guest, out string) error {
	return guestbuild.Build(ctx, filepath.Join(root, g.dir), out, "-buildvcs=false")
}

// SourceRoot is the root of the wasmcp checkout around the working
// directory: the nearest ancestor holding the guests' sources.
func SourceRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; {
		if fi, err := os.Stat(filepath.Join(d, runnerGuest.dir, "go.mod")); err == nil && !fi.IsDir() {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("no %s in %s or any parent directory", runnerGuest.dir, wd)
		}
		d = parent
	}
}

// SourceHash is the SHA-256, in hex, of the guests' sources in the
// checkout at root: every file of sourceDirs but tests, test data and
// dot files, by path and contents, in path order.
func SourceHash(root string) (string, error) {
	var files []string
	for _, d := range sourceDirs {
		err := filepath.WalkDir(filepath.Join(root, d), func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			n := e.Name()
			if e.IsDir() {
				if p != filepath.Join(root, d) && (strings.HasPrefix(n, ".") || n == "testdata") {
					return filepath.SkipDir
				}
				return nil
			}
			if !e.Type().IsRegular() || strings.HasPrefix(n, ".") || strings.HasSuffix(n, "_test.go") || strings.HasSuffix(n, ".wasm") {
				return nil
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("jsbuild: hashing the sources: %w", err)
		}
	}
	sort.Strings(files)
	h := sha256.New()
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Generate builds the guests from the checkout at root into dir
// (gzip-compressed, as NAME.wasm.gz) with the hash of their sources: what
// go generate runs, into embed/.
func Generate(ctx context.Context, root, dir string) error {
	sum, err := SourceHash(root)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "wasmcp-jsbuild")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, g := range guests {
		out := filepath.Join(tmp, g.name+".wasm")
		if err := build(ctx, root, g, out); err != nil {
			return err
		}
		wasm, err := os.ReadFile(out)
		if err != nil {
			return err
		}
		if err := writeFile(filepath.Join(dir, g.name+".wasm.gz"), gz(wasm)); err != nil {
			return err
		}
	}
	return writeFile(filepath.Join(dir, HashFile), []byte(sum+"\n"))
}

// writeFile writes a file whole or not at all.
func writeFile(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// gz compresses b, deterministically (no name, no time).
func gz(b []byte) []byte {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func gunzip(z []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(r)
}
