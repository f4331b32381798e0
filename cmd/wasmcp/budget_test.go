package main

import (
	"flag"
	"io"
	"testing"

	"github.com/wasmcp/wasmcp/host"
)

func TestMemoryBudgetFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want int64
	}{
		{nil, 0}, // the engine's default: half the cgroup limit or the machine's memory
		{[]string{"--memory-budget", "512"}, 512 << 20},
		{[]string{"--memory-budget", "-1"}, host.NoMemoryBudget},
	} {
		var f engineFlags
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		f.register(fs)
		if err := fs.Parse(append([]string{"--cache-dir", "-"}, c.args...)); err != nil {
			t.Fatal(err)
		}
		if got := budgetBytes(f.budget); got != c.want {
			t.Errorf("%v: %d, want %d", c.args, got, c.want)
		}
		e, err := f.engine(io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if c.want != 0 && e.MemoryBudget() != c.want {
			t.Errorf("%v: engine budget %d", c.args, e.MemoryBudget())
		}
		if c.want == 0 && e.MemoryBudget() != host.DefaultMemoryBudget() {
			t.Errorf("default engine budget %d, want %d", e.MemoryBudget(), host.DefaultMemoryBudget())
		}
		e.Close(t.Context())
	}
}
