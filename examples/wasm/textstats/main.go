// Command textstats is a wasmcp tool module that computes statistics of a
// text: characters, words, lines, sentences, average word length and the
// most frequent words. It reports progress as it goes and logs when it
// starts and finishes.
package main

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

// StatsIn is the text_stats tool's input.
type StatsIn struct {
	Text          string `json:"text" jsonschema:"description=The text to analyze"`
	Top           *int   `json:"top,omitempty" jsonschema:"description=How many of the most frequent words to list,minimum=0,maximum=100,default=10"`
	SkipStopWords bool   `json:"skipStopWords,omitempty" jsonschema:"description=Leave common English words (the, and, of, ...) out of topWords,default=false"`
}

// WordCount is one entry of StatsOut.TopWords.
type WordCount struct {
	Word  string `json:"word"`
	Count int    `json:"count"`
}

// StatsOut is the text_stats tool's output.
type StatsOut struct {
	Characters        int         `json:"characters" jsonschema:"description=Number of Unicode characters (code points)"`
	Words             int         `json:"words" jsonschema:"description=Number of words (runs of letters and digits; inner apostrophes and hyphens kept)"`
	Lines             int         `json:"lines" jsonschema:"description=Number of lines (a final newline does not start a new line)"`
	Sentences         int         `json:"sentences" jsonschema:"description=Number of sentences (ended by . ! ? or the end of the text)"`
	AverageWordLength float64     `json:"averageWordLength" jsonschema:"description=Mean word length in characters, rounded to 2 decimals"`
	TopWords          []WordCount `json:"topWords" jsonschema:"description=Most frequent words (lower-cased), most frequent first, ties alphabetical"`
}

// newServer registers the tools. reactor.go hands the server to package
// reactor: built with -buildmode=c-shared (go run ./examples/wasm/build
// does), the module is a reactor the host runs from a snapshot of its
// start-up, as docs/writing-tools.md tells a tool author to build a Go tool.
// command.go (build tag command) serves it as a command module instead, the
// Go runtime started in every instance, for the benchmark that measures
// both (host/deadline_bench_test.go).
func newServer() *guest.Server {
	s := guest.New("textstats", "1.0.0")
	guest.AddTool(s, guest.Tool{
		Name:  "text_stats",
		Title: "Text statistics",
		Description: "Counts the characters, words, lines and sentences of a text, computes the average word length " +
			"and lists the most frequent words. Use it for exact counts instead of estimating.",
		Annotations: &guest.ToolAnnotations{ReadOnlyHint: new(true), IdempotentHint: new(true), OpenWorldHint: new(false)},
	}, textStats)
	return s
}

const steps = 4

func textStats(c *guest.Context, in StatsIn) (StatsOut, error) {
	top := 10
	if in.Top != nil {
		top = *in.Top
	}
	if top < 0 || top > 100 {
		return StatsOut{}, fmt.Errorf("top must be between 0 and 100, got %d", top)
	}
	c.Log(guest.LevelInfo, fmt.Sprintf("text_stats: analyzing %d bytes", len(in.Text)))
	c.Progress(0, steps, "starting")

	out := StatsOut{Characters: utf8.RuneCountInString(in.Text), Lines: countLines(in.Text)}
	c.Progress(1, steps, "counted characters and lines")

	words := splitWords(in.Text)
	out.Words = len(words)
	letters := 0
	for _, w := range words {
		letters += utf8.RuneCountInString(w)
	}
	if len(words) > 0 {
		out.AverageWordLength = math.Round(float64(letters)/float64(len(words))*100) / 100
	}
	c.Progress(2, steps, "counted words")

	out.Sentences = countSentences(in.Text)
	c.Progress(3, steps, "counted sentences")

	out.TopWords = topWords(words, top, in.SkipStopWords)
	c.Progress(4, steps, "ranked words")

	c.Log(guest.LevelInfo, fmt.Sprintf("text_stats: done, %d words in %d sentences", out.Words, out.Sentences))
	return out, nil
}

func countLines(text string) int {
	if text == "" {
		return 0
	}
	text = strings.ReplaceAll(text, "\r\n", "\n")
	return strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1
}

// splitWords returns the words of text: runs of letters, digits and marks,
// keeping an apostrophe or hyphen between two such characters ("don't",
// "well-known").
func splitWords(text string) []string {
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) }
	var words []string
	rs := []rune(text)
	start := -1
	for i := 0; i <= len(rs); i++ {
		if i < len(rs) {
			r := rs[i]
			if isWord(r) {
				if start < 0 {
					start = i
				}
				continue
			}
			if start >= 0 && (r == '\'' || r == '’' || r == '-') && i+1 < len(rs) && isWord(rs[i+1]) {
				continue
			}
		}
		if start >= 0 {
			words = append(words, string(rs[start:i]))
			start = -1
		}
	}
	return words
}

// countSentences counts runs of . ! ? that follow a word and end the text
// or precede whitespace, plus a final unterminated sentence.
func countSentences(text string) int {
	n := 0
	pending := false // words seen since the last sentence end
	rs := []rune(text)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			pending = true
		case (r == '.' || r == '!' || r == '?') && pending:
			j := i
			for j+1 < len(rs) && strings.ContainsRune(".!?\"'”’)", rs[j+1]) {
				j++
			}
			if j+1 == len(rs) || unicode.IsSpace(rs[j+1]) {
				n++
				pending = false
				i = j
			}
		}
	}
	if pending {
		n++
	}
	return n
}

var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be but by for from had has have he her his i if in into is it its
		me my no not of on or our she so that the their them then there these they this to was we were what when which who will with you your`) {
		stopWords[w] = true
	}
}

func topWords(words []string, top int, skipStop bool) []WordCount {
	counts := map[string]int{}
	for _, w := range words {
		lw := strings.ToLower(w)
		if skipStop && stopWords[lw] {
			continue
		}
		counts[lw]++
	}
	list := make([]WordCount, 0, len(counts))
	for w, n := range counts {
		list = append(list, WordCount{Word: w, Count: n})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].Count != list[j].Count {
			return list[i].Count > list[j].Count
		}
		return list[i].Word < list[j].Word
	})
	if len(list) > top {
		list = list[:top]
	}
	return list
}
