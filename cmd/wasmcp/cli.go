package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/wasmcp/wasmcp/host"
)

// parseFlags parses a command's flags. Help asked for (-h, --help) goes to
// stdout and ends the command with flag.ErrHelp; a usage error goes to
// stderr. The usage is header followed by the flags, spelled with two
// dashes as the README writes them.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer, header string) error {
	fs.SetOutput(stderr)
	fs.Usage = func() { printUsage(fs.Output(), fs, header) }
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" || a == "--h" {
			fs.SetOutput(stdout)
			fs.Usage()
			return flag.ErrHelp
		}
	}
	return fs.Parse(args)
}

var singleDash = regexp.MustCompile(`(?m)^  -`)

func printUsage(w io.Writer, fs *flag.FlagSet, header string) {
	var b bytes.Buffer
	out := fs.Output()
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(out)
	fmt.Fprint(w, header)
	_, _ = w.Write(singleDash.ReplaceAll(b.Bytes(), []byte("  --")))
}

// mibSize is a size flag in bytes whose bare number means MiB (the flags'
// historical unit), also accepting units: 64MiB, 512KiB, 1GiB.
type mibSize uint64

func (m *mibSize) String() string { return host.FormatBytes(int64(*m)) }

func (m *mibSize) Set(s string) error {
	s = strings.TrimSpace(s)
	if s != "" && strings.Trim(s, "0123456789") == "" {
		s += "MiB"
	}
	var b byteSize
	if err := b.Set(s); err != nil {
		return err
	}
	*m = mibSize(b)
	return nil
}
