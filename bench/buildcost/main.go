// Command buildcost measures what a clean build of wasmcp costs
// (docs/performance.md, "Building wasmcp"; docs/dependencies.md).
//
//	buildcost graph [-dir D] [-top N] AG.json
//
// reads the action graph of a build (go build -debug-actiongraph=AG.json)
// and prints the compile time of each module (CPU: user+sys of its
// compiles, and their wall time), the costliest packages, and the
// critical path: the longest chain of dependent actions by wall time,
// which no number of cores makes shorter. Packages are mapped to modules
// by go list in D (default "."), for the packages of the graph.
//
//	buildcost time [-n N] [-o DIR] [-pkg P] CHECKOUT...
//
// builds P (default ./cmd/wasmcp) in each checkout in turn, N rounds
// (default 2), each build with an empty GOCACHE (the module cache stays
// warm), and prints wall time, user and sys CPU (of go build and every
// compile and link it ran), the binary's size and the load average
// before each build.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "graph":
		err = graphCmd(os.Args[2:], os.Stdout)
	case "time":
		err = timeCmd(os.Args[2:], os.Stdout)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "buildcost:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: buildcost graph [-dir D] [-top N] AG.json | buildcost time [-n N] [-o DIR] [-pkg P] CHECKOUT...")
	os.Exit(2)
}

// action is the part of an entry of go build -debug-actiongraph it reads.
type action struct {
	ID        int
	Mode      string
	Package   string
	Deps      []int
	TimeStart time.Time
	TimeDone  time.Time
	CmdUser   int64 // ns, summed over the action's commands
	CmdSys    int64
}

func (a *action) wall() time.Duration {
	if a.TimeStart.IsZero() || a.TimeDone.IsZero() {
		return 0
	}
	return a.TimeDone.Sub(a.TimeStart)
}

func (a *action) cpu() time.Duration { return time.Duration(a.CmdUser + a.CmdSys) }

func graphCmd(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("graph", flag.ExitOnError)
	dir := fs.String("dir", ".", "the module the graph was built in, for go list")
	pkg := fs.String("pkg", "./cmd/wasmcp", "the package the graph built")
	top := fs.Int("top", 15, "packages to list")
	minThrough := fs.Float64("through", 1, "list the packages through which at least this many CPU seconds are linked (0: none)")
	_ = fs.Parse(args)
	if fs.NArg() != 1 {
		return errors.New("graph: want one action graph file")
	}
	b, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	var acts []*action
	if err := json.Unmarshal(b, &acts); err != nil {
		return fmt.Errorf("%s: %w", fs.Arg(0), err)
	}
	byID := make(map[int]*action, len(acts))
	if len(acts) == 0 {
		return errors.New("graph: no actions")
	}
	pkgs := map[string]bool{}
	for _, a := range acts {
		byID[a.ID] = a
		if a.Package != "" {
			pkgs[a.Package] = true
		}
	}
	mods, imports, root, err := listDeps(*dir, *pkg)
	if err != nil {
		return err
	}
	modOf := func(pkg string) string {
		if m, ok := mods[pkg]; ok {
			return m
		}
		return "(standard library)"
	}

	// Totals and per-module sums of every action of a package.
	type sum struct {
		name      string
		pkgs      map[string]bool
		cpu, wall time.Duration
	}
	perMod := map[string]*sum{}
	perPkg := map[string]*sum{}
	var start, end time.Time
	var cpu time.Duration
	for _, a := range acts {
		if !a.TimeStart.IsZero() && (start.IsZero() || a.TimeStart.Before(start)) {
			start = a.TimeStart
		}
		if a.TimeDone.After(end) {
			end = a.TimeDone
		}
		cpu += a.cpu()
		if a.Package == "" || a.Mode == "link" || a.Mode == "link-install" {
			continue
		}
		for _, m := range []struct {
			key string
			to  map[string]*sum
		}{{modOf(a.Package), perMod}, {a.Package, perPkg}} {
			s := m.to[m.key]
			if s == nil {
				s = &sum{name: m.key, pkgs: map[string]bool{}}
				m.to[m.key] = s
			}
			s.pkgs[a.Package] = true
			s.cpu += a.cpu()
			s.wall += a.wall()
		}
	}
	fmt.Fprintf(out, "%d packages (go list -deps %s: %d), %d actions; first start to last end %.1fs; CPU (user+sys) of all commands %.1fs\n\n",
		len(pkgs), *pkg, len(imports), len(acts), end.Sub(start).Seconds(), cpu.Seconds())

	sorted := func(m map[string]*sum) []*sum {
		var l []*sum
		for _, s := range m {
			l = append(l, s)
		}
		sort.Slice(l, func(i, j int) bool { return l[i].cpu > l[j].cpu })
		return l
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "module\tpackages\tCPU s\tshare\twall s\t")
	for _, s := range sorted(perMod) {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.1f%%\t%.1f\t\n", s.name, len(s.pkgs), s.cpu.Seconds(), 100*s.cpu.Seconds()/cpu.Seconds(), s.wall.Seconds())
	}
	_ = tw.Flush()

	fmt.Fprintf(out, "\ncostliest packages\n")
	tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "package\tCPU s\twall s\t")
	for i, s := range sorted(perPkg) {
		if i == *top {
			break
		}
		fmt.Fprintf(tw, "%s\t%.1f\t%.1f\t\n", s.name, s.cpu.Seconds(), s.wall.Seconds())
	}
	_ = tw.Flush()

	if *minThrough > 0 {
		type cut struct {
			pkg  string
			n    int
			cpu  time.Duration
			mods map[string]bool
		}
		var cuts []cut
		for p, only := range through(root, imports) {
			c := cut{pkg: p, n: len(only), mods: map[string]bool{}}
			for _, q := range only {
				if s := perPkg[q]; s != nil {
					c.cpu += s.cpu
				}
				c.mods[modOf(q)] = true
			}
			if c.cpu.Seconds() >= *minThrough {
				cuts = append(cuts, c)
			}
		}
		sort.Slice(cuts, func(i, j int) bool { return cuts[i].cpu > cuts[j].cpu })
		fmt.Fprintf(out, "\nlinked only through a package (what the build loses without it)\n")
		tw = tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "package\tpackages\tmodules\tCPU s\t")
		for _, c := range cuts {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%.1f\t\n", c.pkg, c.n, len(c.mods), c.cpu.Seconds())
		}
		_ = tw.Flush()
	}

	// The critical path: the chain of dependent actions whose wall times
	// add up to the most.
	longest := map[int]time.Duration{}
	next := map[int]int{}
	var chain func(id int) time.Duration
	chain = func(id int) time.Duration {
		if d, ok := longest[id]; ok {
			return d
		}
		a := byID[id]
		best, bestDep := time.Duration(0), -1
		for _, d := range a.Deps {
			if c := chain(d); c > best {
				best, bestDep = c, d
			}
		}
		longest[id], next[id] = best+a.wall(), bestDep
		return longest[id]
	}
	last := acts[0].ID
	for _, a := range acts {
		if chain(a.ID) > chain(last) {
			last = a.ID
		}
	}
	fmt.Fprintf(out, "\ncritical path %.1fs (actions over 1s of wall time; the rest in between):\n", longest[last].Seconds())
	for id := last; id >= 0; id = next[id] {
		a := byID[id]
		if a.wall() >= time.Second {
			fmt.Fprintf(out, "  %6.1fs  %-6s %s\n", a.wall().Seconds(), a.Mode, a.Package)
		}
	}
	return nil
}

// listDeps runs go list -deps on pkg in dir: each package's module ("" for
// the standard library) and imports.
func listDeps(dir, pkg string) (mods map[string]string, imports map[string][]string, last string, err error) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}\t{{with .Module}}{{.Path}}{{end}}\t{{join .Imports \" \"}}", pkg)
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, nil, "", fmt.Errorf("go list in %s: %w", dir, err)
	}
	mods, imports = map[string]string{}, map[string][]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.Split(l, "\t")
		if len(f) != 3 {
			continue
		}
		last = f[0] // go list -deps prints pkg last
		if f[1] != "" {
			mods[f[0]] = f[1]
		}
		imports[f[0]] = strings.Fields(f[2])
	}
	return mods, imports, last, nil
}

// through returns, for each package linked into last, the packages
// that are linked only through it (itself included): what the build
// would lose without it.
func through(last string, imports map[string][]string) map[string][]string {
	reach := func(skip string) map[string]bool {
		seen := map[string]bool{}
		stack := []string{last}
		for len(stack) > 0 {
			p := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[p] || p == skip {
				continue
			}
			if _, ok := imports[p]; !ok {
				continue
			}
			seen[p] = true
			stack = append(stack, imports[p]...)
		}
		return seen
	}
	all := reach("")
	out := map[string][]string{}
	for p := range all {
		if p == last {
			continue
		}
		left := reach(p)
		for q := range all {
			if !left[q] {
				out[p] = append(out[p], q)
			}
		}
	}
	return out
}

func timeCmd(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("time", flag.ExitOnError)
	n := fs.Int("n", 2, "rounds (each builds every checkout once)")
	outDir := fs.String("o", "", "keep each binary and action graph here (default: a temporary directory)")
	pkg := fs.String("pkg", "./cmd/wasmcp", "the package to build")
	_ = fs.Parse(args)
	if fs.NArg() == 0 {
		return errors.New("time: want at least one checkout")
	}
	keep := *outDir != ""
	if !keep {
		d, err := os.MkdirTemp("", "buildcost")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		*outDir = d
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "round\tcheckout\twall s\tuser s\tsys s\tuser+sys s\tbinary bytes\tload avg before\t")
	_ = tw.Flush()
	for round := 1; round <= *n; round++ {
		for i, co := range fs.Args() {
			r, err := build(co, *pkg, *outDir, fmt.Sprintf("%d-%d", round, i))
			if err != nil {
				return err
			}
			fmt.Fprintf(tw, "%d\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%d\t%s\t\n", round, co, r.wall.Seconds(), r.user.Seconds(), r.sys.Seconds(),
				(r.user + r.sys).Seconds(), r.size, r.load)
			_ = tw.Flush()
		}
	}
	if keep {
		fmt.Fprintf(out, "binaries and action graphs (buildcost graph) in %s\n", *outDir)
	}
	return nil
}

type result struct {
	wall, user, sys time.Duration
	size            int64
	load            string
}

// build builds pkg in checkout with an empty build cache.
func build(checkout, pkg, outDir, tag string) (*result, error) {
	cache, err := os.MkdirTemp("", "gocache")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(cache)
	bin := filepath.Join(outDir, "wasmcp-"+tag)
	ag := filepath.Join(outDir, "ag-"+tag+".json")
	load, _ := os.ReadFile("/proc/loadavg")
	cmd := exec.Command("go", "build", "-debug-actiongraph="+ag, "-o", bin, pkg)
	cmd.Dir = checkout
	cmd.Env = append(os.Environ(), "GOCACHE="+cache)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = os.Stdout, &stderr
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("go build in %s: %w\n%s", checkout, err, stderr.Bytes())
	}
	r := &result{wall: time.Since(t0), user: cmd.ProcessState.UserTime(), sys: cmd.ProcessState.SystemTime(),
		load: strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " ")}
	fi, err := os.Stat(bin)
	if err != nil {
		return nil, err
	}
	r.size = fi.Size()
	return r, nil
}
