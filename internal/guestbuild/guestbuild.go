// Package guestbuild builds Go guest modules (package main programs using
// the guest SDK) into WASI preview 1 modules, the way tool authors do (see
// docs/writing-tools.md): go build with GOOS=wasip1 GOARCH=wasm
// CGO_ENABLED=0, -trimpath and -ldflags="-s -w", and -buildmode=c-shared
// for a reactor (a package that imports the SDK's package reactor), which
// the host runs from a snapshot of its start-up; any other package builds
// into a command module. Tests and the examples' build command use it.
package guestbuild

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	gobuild "go/build"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Build compiles the Go main package in pkgDir (absolute, or relative to
// the working directory) into the wasm module outFile. The build runs in
// the root of the Go module containing pkgDir, so pkgDir may belong to any
// module. outFile's directory is created if needed. A package that imports
// the SDK's package reactor (under the build's GOOS, GOARCH and -tags) is
// built with -buildmode=c-shared, as docs/writing-tools.md tells a tool
// author to build it; any other into a command module. flags are more go
// build flags (a -ldflags given here replaces Build's; -tags chooses the
// files, and so the shape, of a package that holds both).
func Build(ctx context.Context, pkgDir, outFile string, flags ...string) error {
	return build(ctx, pkgDir, outFile, flags)
}

// ReactorPackage is the import path of the guest SDK's package reactor: a
// main package that imports it is a reactor.
const ReactorPackage = "github.com/wasmcp/wasmcp/guest-sdk/go/reactor"

// IsReactor reports whether the main package in pkgDir, as go build sees
// it for GOOS=wasip1 GOARCH=wasm with the build tags of flags (-tags=a,b or
// -tags a,b), imports the SDK's package reactor.
func IsReactor(pkgDir string, flags ...string) (bool, error) {
	ctxt := gobuild.Default
	ctxt.GOOS, ctxt.GOARCH, ctxt.CgoEnabled = "wasip1", "wasm", false
	for i, f := range flags {
		switch {
		case strings.HasPrefix(f, "-tags="):
			ctxt.BuildTags = append(ctxt.BuildTags, splitTags(strings.TrimPrefix(f, "-tags="))...)
		case f == "-tags" && i+1 < len(flags):
			ctxt.BuildTags = append(ctxt.BuildTags, splitTags(flags[i+1])...)
		}
	}
	p, err := ctxt.ImportDir(pkgDir, 0)
	if err != nil {
		return false, fmt.Errorf("guestbuild: reading %s: %w", pkgDir, err)
	}
	return slices.Contains(p.Imports, ReactorPackage), nil
}

// splitTags splits a -tags value (comma-separated, or the older
// space-separated form).
func splitTags(v string) []string {
	return strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' })
}

// BuildReactor is Build for a reactor (the SDK's package reactor): it
// builds with -buildmode=c-shared and the build tag reactor, which lets one
// package hold a command's main and a reactor's init side by side. flags
// are more go build flags (a -ldflags given here replaces Build's).
func BuildReactor(ctx context.Context, pkgDir, outFile string, flags ...string) error {
	return build(ctx, pkgDir, outFile, append([]string{"-buildmode=c-shared", "-tags=reactor"}, flags...))
}

func build(ctx context.Context, pkgDir, outFile string, flags []string) error {
	absPkg, err := filepath.Abs(pkgDir)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(absPkg); err != nil || !fi.IsDir() {
		return fmt.Errorf("guestbuild: %s is not a directory", pkgDir)
	}
	absOut, err := filepath.Abs(outFile)
	if err != nil {
		return err
	}
	root, err := moduleRootOf(absPkg)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(root, absPkg)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(flags, func(f string) bool { return strings.HasPrefix(f, "-buildmode") }) {
		reactor, err := IsReactor(absPkg, flags...)
		if err != nil {
			return err
		}
		if reactor {
			flags = append([]string{"-buildmode=c-shared"}, flags...)
		}
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("guestbuild: the go command is needed to build guests: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(absOut), 0o755); err != nil {
		return err
	}
	args := append([]string{"build", "-trimpath", "-ldflags=-s -w"}, flags...)
	args = append(args, "-o", absOut, "./"+filepath.ToSlash(rel))
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(out.String())
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("guestbuild: building %s: %s", pkgDir, msg)
	}
	return nil
}

// Packages lists the guest packages of srcRoot: its immediate
// subdirectories that contain a main.go, in name order. Directories named
// bin or build, and those starting with '.' or '_' or named testdata, are
// skipped.
func Packages(srcRoot string) ([]string, error) {
	entries, err := os.ReadDir(srcRoot)
	if err != nil {
		return nil, fmt.Errorf("guestbuild: %w", err)
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || name == "bin" || name == "build" || name == "testdata" ||
			strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		if _, err := os.Stat(filepath.Join(srcRoot, name, "main.go")); err == nil {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names, nil
}

// BuildAll builds every guest package of srcRoot (Packages) into
// outDir/<dirname>.wasm with Build (so a reactor is built as one), in name
// order, and returns the paths of the modules it built. It builds every
// module even if some fail and returns the failures joined. each, if not
// nil, wraps each build (to report progress).
func BuildAll(ctx context.Context, srcRoot, outDir string, each ...func(name string, build func() error) error) ([]string, error) {
	names, err := Packages(srcRoot)
	if err != nil {
		return nil, err
	}
	var built []string
	var errs []error
	for _, name := range names {
		out := filepath.Join(outDir, name+".wasm")
		build := func() error { return Build(ctx, filepath.Join(srcRoot, name), out) }
		var err error
		if len(each) > 0 && each[0] != nil {
			err = each[0](name, build)
		} else {
			err = build()
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		built = append(built, out)
	}
	return built, errors.Join(errs...)
}

// FindModuleRoot returns the root directory of the Go module containing
// the working directory: the nearest ancestor with a go.mod file.
func FindModuleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return moduleRootOf(wd)
}

func moduleRootOf(dir string) (string, error) {
	for d := dir; ; {
		if fi, err := os.Stat(filepath.Join(d, "go.mod")); err == nil && !fi.IsDir() {
			return d, nil
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", fmt.Errorf("guestbuild: no go.mod in %s or any parent directory", dir)
		}
		d = parent
	}
}
