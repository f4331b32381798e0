package pull

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Describer describes a verified version of the tool name: the names its
// module (with policy, nil for none) declares, as NameLines. wasmcp pull
// and serve inject one that runs the module's describe in wazero under
// serve's limits (pull knows nothing of the engine).
type Describer func(ctx context.Context, name string, module, policy []byte) ([]string, error)

// The kinds of name a module declares, as the catalog spells them.
const (
	KindTool     = "tool"
	KindResource = "resource"
	KindTemplate = "template"
	KindPrompt   = "prompt"
)

// NameLines is a module's names as the lock records them, one line per
// name, "KIND NAME" (KIND one of tool, resource, template, prompt; NAME a
// tool or prompt name, a resource URI or a URI template), sorted and
// without duplicates. Two versions declaring the same names give the
// same lines, so approval is set inclusion, as for grants.
func NameLines(tools, resources, templates, prompts []string) []string {
	out := []string{}
	for _, k := range []struct {
		kind  string
		names []string
	}{{KindTool, tools}, {KindResource, resources}, {KindTemplate, templates}, {KindPrompt, prompts}} {
		for _, n := range k.names {
			out = append(out, k.kind+" "+n)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// NewNames returns the lines of names not in approved: what a version
// declares that the operator did not approve. approved nil (not recorded)
// approves nothing.
func NewNames(names []string, approved *[]string) []string {
	var ok []string
	if approved != nil {
		ok = *approved
	}
	var out []string
	for _, n := range names {
		if !slices.Contains(ok, n) {
			out = append(out, n)
		}
	}
	return out
}

// DescribeNames shows name lines for people, one a line, escaped
// (Printable): a name is remote data. Lines in fresh are marked NEW.
func DescribeNames(lines, fresh []string) string {
	if len(lines) == 0 {
		return "  no tool, resource, template or prompt\n"
	}
	var b strings.Builder
	for _, l := range lines {
		kind, name, _ := strings.Cut(l, " ")
		mark := ""
		if slices.Contains(fresh, l) {
			mark = "   NEW: not approved before"
		}
		fmt.Fprintf(&b, "  %-9s %s%s\n", kind+":", Printable(name), mark)
	}
	return b.String()
}

// Collision is a name a pulled version declares that a module already in
// the tools directory declares too.
type Collision struct {
	Name string // a name line, "KIND NAME"
	File string // the module file declaring it
}

// CollisionError refuses a pull whose version declares names other
// modules of the tools directory declare: installed, it would be refused
// whole by the catalog (or take names from the next start's loser).
type CollisionError struct {
	Tool       string
	Collisions []Collision
}

func (e *CollisionError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "pull of %s refused: it declares names a module of the tools directory declares, so serve would refuse one of them whole:\n", e.Tool)
	for _, c := range e.Collisions {
		kind, name, _ := strings.Cut(c.Name, " ")
		fmt.Fprintf(&b, "  %s %s is declared by %s\n", kind, Printable(name), Printable(c.File))
	}
	b.WriteString("nothing installed; rename one of them, or pull with --allow-collision to record it anyway (the module serving the name keeps it)")
	return b.String()
}
