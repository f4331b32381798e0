package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/wasmcp/wasmcp/cmd/wasmcp/internal/scaffold"
)

// cmdNew writes a new tool: wasmcp new LANG NAME [-o DIR] [--sdk CHECKOUT].
func cmdNew(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("new", flag.ContinueOnError)
	out := fs.String("o", "", "where to write: a script goes into this directory (default .), a compiled tool into a new directory (default ./NAME)")
	sdk := fs.String("sdk", "", "the wasmcp checkout whose guest SDK a Go, Rust or C tool uses (default: the checkout the working directory is in, else the one wasmcp was built from)")
	header := "Usage: wasmcp new LANG NAME [-o DIR] [--sdk CHECKOUT]\n\nWrites a new tool: its source, its build line and a policy stub. LANG is one of " +
		strings.Join(scaffold.Languages(), ", ") + " (or ts, js, rs).\n"
	pos, err := parseInterspersed(fs, args, stdout, stderr, header)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		fs.Usage()
		return errUsage
	}
	lang, name := pos[0], pos[1]
	dir := *out
	if dir == "" {
		dir = "."
		switch strings.ToLower(lang) {
		case "typescript", "ts", "javascript", "js":
		default:
			dir = name
		}
	}
	res, err := scaffold.New(scaffold.Options{Lang: lang, Name: name, Dir: filepath.Clean(dir), SDK: *sdk})
	if err != nil {
		return fmt.Errorf("new: %w", err)
	}
	for _, f := range res.Files {
		fmt.Fprintln(stdout, "wrote", f)
	}
	fmt.Fprintf(stdout, "\nnext:\n  %s\n", strings.ReplaceAll(res.Next, "\n", "\n  "))
	return nil
}
