package protocol

import (
	"fmt"
	"unicode/utf8"

	"github.com/wasmcp/wasmcp/abi"
)

// Limits on the texts of what a module declares (docs/design/guest-output.md,
// "Limits on what a guest writes"). Clients show these texts to people and to
// models: a control character (NUL, ESC and the terminal sequences it
// starts, CR) or bytes that are not UTF-8 can rewrite what a terminal or a
// log shows, and a megabyte of description is a prompt injection budget,
// not documentation. An entry breaking a limit is refused at load, with a
// warning naming the module, rather than sanitised: the author learns of
// it, and no client sees text the module did not write.
const (
	maxLabelLen       = 1 << 10  // names, titles, MIME types
	maxURILen         = 8 << 10  // URIs and URI templates
	maxDescriptionLen = 64 << 10 // descriptions
)

// textProblem says what is wrong with a declared text, or "".
// Descriptions may hold tabs and line feeds; nothing else may hold a
// control character (C0, DEL or C1).
func textProblem(field, s string, max int, multiline bool) string {
	if len(s) > max {
		return fmt.Sprintf("%s is %d bytes long; the limit is %d", field, len(s), max)
	}
	if !utf8.ValidString(s) {
		return field + " is not valid UTF-8"
	}
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r <= 0x9f) {
			if multiline && (r == '\n' || r == '\t') {
				continue
			}
			return fmt.Sprintf("%s holds the control character %U", field, r)
		}
	}
	return ""
}

// firstProblem returns the first non-empty problem.
func firstProblem(ps ...string) string {
	for _, p := range ps {
		if p != "" {
			return p
		}
	}
	return ""
}

func toolTextProblem(t *abi.Tool) string {
	return firstProblem(
		textProblem("name", t.Name, maxLabelLen, false),
		textProblem("title", t.Title, maxLabelLen, false),
		textProblem("description", t.Description, maxDescriptionLen, true))
}

func resourceTextProblem(r *abi.Resource) string {
	return firstProblem(
		textProblem("uri", r.URI, maxURILen, false),
		textProblem("name", r.Name, maxLabelLen, false),
		textProblem("title", r.Title, maxLabelLen, false),
		textProblem("mimeType", r.MimeType, maxLabelLen, false),
		textProblem("description", r.Description, maxDescriptionLen, true))
}

func templateTextProblem(r *abi.ResourceTemplate) string {
	return firstProblem(
		textProblem("uriTemplate", r.URITemplate, maxURILen, false),
		textProblem("name", r.Name, maxLabelLen, false),
		textProblem("title", r.Title, maxLabelLen, false),
		textProblem("mimeType", r.MimeType, maxLabelLen, false),
		textProblem("description", r.Description, maxDescriptionLen, true))
}

func promptTextProblem(p *abi.Prompt) string {
	if pr := firstProblem(
		textProblem("name", p.Name, maxLabelLen, false),
		textProblem("title", p.Title, maxLabelLen, false),
		textProblem("description", p.Description, maxDescriptionLen, true)); pr != "" {
		return pr
	}
	for i := range p.Arguments {
		a := &p.Arguments[i]
		if pr := firstProblem(
			textProblem("argument name", a.Name, maxLabelLen, false),
			textProblem("argument title", a.Title, maxLabelLen, false),
			textProblem("argument description", a.Description, maxDescriptionLen, true)); pr != "" {
			return pr
		}
	}
	return ""
}
