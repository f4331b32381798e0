// Command wordcount is a wasmcp tool module that counts the words, lines
// and bytes of a text the way wc(1) does in the C locale. It is the Go twin
// of the C example examples/c/wordcount: both do exactly the same work and
// answer exactly the same JSON, so the two can be compared on the host
// (see docs/performance.md).
//
// It builds two ways from the same code: as a reactor the host runs from a
// snapshot of its start-up (reactor.go, the SDK's package reactor), which
// is what a tool should be and what go run ./examples/wasm/build builds,
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o wordcount.wasm .
//
// and, for the comparison the benchmarks make, as a command module, the Go
// runtime started in every instance (command.go, build tag command):
//
//	GOOS=wasip1 GOARCH=wasm go build -tags command -o wordcount.wasm .
//
// (A tool that is only ever a reactor needs no build tag: see
// docs/writing-tools.md.)
package main

import guest "github.com/wasmcp/wasmcp/guest-sdk/go"

// In is the word_count tool's input.
type In struct {
	Text string `json:"text" jsonschema:"description=The text to count"`
}

// Out is the word_count tool's output.
type Out struct {
	Words int `json:"words" jsonschema:"description=Runs of bytes that are not ASCII whitespace"`
	Lines int `json:"lines" jsonschema:"description=Newline characters, as wc -l counts"`
	Bytes int `json:"bytes" jsonschema:"description=Length of the text in UTF-8 bytes"`
}

// newServer registers the word_count tool.
func newServer() *guest.Server {
	s := guest.New("wordcount", "1.0.0")
	guest.AddTool(s, guest.Tool{
		Name:        "word_count",
		Title:       "Word count",
		Description: "Counts the words, lines and bytes of a text, as wc does.",
		Annotations: &guest.ToolAnnotations{ReadOnlyHint: new(true), IdempotentHint: new(true), OpenWorldHint: new(false)},
	}, func(_ *guest.Context, in In) (Out, error) { return count(in.Text), nil })
	return s
}

// count counts like wc: a word is a maximal run of bytes other than
// space, \t, \n, \v, \f and \r; a line is a newline character.
func count(text string) Out {
	out := Out{Bytes: len(text)}
	inWord := false
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			out.Lines++
			inWord = false
		case ' ', '\t', '\v', '\f', '\r':
			inWord = false
		default:
			if !inWord {
				out.Words++
				inWord = true
			}
		}
	}
	return out
}
