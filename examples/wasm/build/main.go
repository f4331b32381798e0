// Command build compiles the example guest modules in examples/wasm/*/
// into .wasm files (GOOS=wasip1 GOARCH=wasm, -trimpath, -ldflags="-s -w",
// and -buildmode=c-shared for a reactor, a package that imports the guest
// SDK's package reactor, as every example is: the host runs such a module
// from a snapshot of its start-up).
//
// Usage, from anywhere inside the wasmcp module:
//
//	go run ./examples/wasm/build [-o DIR] [-src DIR]
//
// -o defaults to examples/wasm/bin and -src to examples/wasm, both in the
// module root. A module's NAME.policy.toml, if its directory has one, is
// copied beside its .wasm. It says what it builds as it starts each step,
// every 10 seconds while the step runs, and how long it took, on stderr
// (stdout stays free for the stdio server the README starts after it); it exits 1
// if any failed. With the default -src it then compiles wasmcp itself
// (output discarded, -host=false skips it), so that the go run
// ./cmd/wasmcp that follows it in the README finds every package built.
//
// With the default -src the example scripts in examples/js are copied
// into the output directory: wasmcp serves them on the JavaScript runner
// it embeds (guest-sdk/js/quickjs, committed), with nothing else
// installed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/wasmcp/wasmcp/internal/guestbuild"
)

func main() {
	out := flag.String("o", "", "output directory (default: examples/wasm/bin in the module root)")
	src := flag.String("src", "", "directory whose subdirectories are guest packages (default: examples/wasm in the module root)")
	host := flag.Bool("host", true, "with the default -src, also compile wasmcp itself into the Go build cache, so the go run ./cmd/wasmcp that follows starts at once")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: go run ./examples/wasm/build [-o DIR] [-src DIR]")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	hostRoot := "" // the module root, when wasmcp is to be compiled too
	if *src == "" || *out == "" {
		root, err := guestbuild.FindModuleRoot()
		if err != nil {
			fail(err)
		}
		if *src == "" {
			if *out == "" {
				*out = filepath.Join(root, "examples", "wasm", "bin")
			}
			if err := copyScripts(filepath.Join(root, "examples", "js"), *out); err != nil {
				fail(err)
			}
			*src = filepath.Join(root, "examples", "wasm")
			hostRoot = root
		}
		if *out == "" {
			*out = filepath.Join(root, "examples", "wasm", "bin")
		}
	}
	built, err := guestbuild.BuildAll(ctx, *src, *out, func(name string, build func() error) error {
		return step("building example "+name, nil, build)
	})
	wd, _ := os.Getwd()
	for _, p := range built {
		size := ""
		if fi, err := os.Stat(p); err == nil {
			size = fmt.Sprintf(" (%.1f MiB)", float64(fi.Size())/(1<<20))
		}
		name := strings.TrimSuffix(filepath.Base(p), ".wasm")
		if rel, err := filepath.Rel(wd, p); err == nil && !strings.HasPrefix(rel, "..") {
			p = rel
		}
		fmt.Fprintf(os.Stderr, "built %-10s %s%s\n", name, p, size)
		// A module's policy (what it may reach) goes beside it.
		pol := filepath.Join(*src, name, name+".policy.toml")
		if b, err := os.ReadFile(pol); err == nil {
			dst := filepath.Join(*out, name+".policy.toml")
			if err := os.WriteFile(dst, b, 0o644); err != nil {
				fail(err)
			}
			fmt.Fprintf(os.Stderr, "      %-10s %s\n", "policy", dst)
		}
	}
	if err != nil {
		fail(err)
	}
	if len(built) == 0 {
		fail(fmt.Errorf("no guest packages (directories with a main.go) in %s", *src))
	}
	if *host && hostRoot != "" {
		if err := buildHost(ctx, hostRoot); err != nil {
			fail(err)
		}
	}
}

// copyScripts copies the script tools of dir (NAME.js, NAME.ts, their
// NAME.policy.toml and the .d.ts types) into out.
func copyScripts(dir, out string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !(strings.HasSuffix(n, ".js") || strings.HasSuffix(n, ".ts") || strings.HasSuffix(n, ".policy.toml")) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, n), b, 0o644); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "copied %-9s %s\n", "script", filepath.Join(out, n))
	}
	return nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "build:", err)
	os.Exit(1)
}
