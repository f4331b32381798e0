package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"regexp"
	"strconv"
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

// byteSize is a flag holding a size in bytes, written as a number with an
// optional unit: B, KiB, MiB, GiB (or K, M, G, KB, MB, GB, all binary).
type byteSize int64

func (b *byteSize) String() string { return host.FormatBytes(int64(*b)) }

func (b *byteSize) Set(s string) error {
	s = strings.TrimSpace(s)
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(s[:i], 10, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("%q: want a positive size such as 4MiB", s)
	}
	mult := map[string]int64{"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
		"m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30}
	m, ok := mult[strings.ToLower(strings.TrimSpace(s[i:]))]
	if !ok {
		return fmt.Errorf("%q: unknown unit (want B, KiB, MiB or GiB)", s)
	}
	*b = byteSize(n * m)
	return nil
}

// splitList splits a comma-separated flag value, trimming spaces and
// dropping empty elements.
func splitList(s string) []string {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}
