// Command gen is what `go generate ./internal/jsbuild` runs: it builds the
// JavaScript runner from the checkout into
// internal/jsbuild/embed, for wasmcp to embed.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wasmcp/wasmcp/internal/jsbuild"
)

func main() {
	root, err := jsbuild.SourceRoot()
	if err == nil {
		err = jsbuild.Generate(context.Background(), root, filepath.Join(root, "internal", "jsbuild", "embed"))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "jsbuild:", err)
		os.Exit(1)
	}
}
