package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
)

// baseline is the per-call figure a submission is held against
// (bench/callcost.json): for each era, the allocations of one call and its
// time as a multiple of the benchmark's client-only run in the same
// process, which keeps the figure comparable across machines of
// different speed.
type baseline struct {
	Note string                 `json:"note"`
	Eras map[string]eraBaseline `json:"eras"`
}

type eraBaseline struct {
	Allocs float64 `json:"allocsPerCall"`
	Ratio  float64 `json:"timeOverClientOnly"`
}

// tolerance is how much worse than the baseline a figure may be before
// the check says so.
const tolerance = 1.10

// checkBaseline reads benchmark lines such as
//
//	BenchmarkServeCall/modern/default-2   3000   187000 ns/op   34000 B/op   293 allocs/op
//
// takes the median of each sub-benchmark's runs, prints the per-call
// figures and compares them with the baseline. It prints a loud
// REGRESSION line for a figure more than 10% worse; it returns an error
// only when the input has no figures to compare.
func checkBaseline(r io.Reader, w io.Writer, path string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var base baseline
	if err := json.Unmarshal(raw, &base); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	ns := map[string][]float64{}
	allocs := map[string][]float64{}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 4 || !strings.HasPrefix(f[0], "BenchmarkServeCall/") {
			continue
		}
		name := strings.TrimPrefix(f[0], "BenchmarkServeCall/")
		if i := strings.LastIndex(name, "-"); i > 0 {
			name = name[:i]
		}
		for i := 2; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			switch f[i+1] {
			case "ns/op":
				ns[name] = append(ns[name], v)
			case "allocs/op":
				allocs[name] = append(allocs[name], v)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	eras := make([]string, 0, len(base.Eras))
	for era := range base.Eras {
		eras = append(eras, era)
	}
	sort.Strings(eras)
	compared := 0
	for _, era := range eras {
		want := base.Eras[era]
		call, client := median(ns[era+"/default"]), median(ns[era+"/client-only"])
		a := median(allocs[era+"/default"])
		if call == 0 || client == 0 {
			fmt.Fprintf(w, "per-call %s: no figures in the benchmark output\n", era)
			continue
		}
		compared++
		ratio := call / client
		fmt.Fprintf(w, "per-call %s: %.1f µs, %.0f allocs (baseline %.0f), %.2fx the client-only run (baseline %.2fx)\n",
			era, call/1000, a, want.Allocs, ratio, want.Ratio)
		if a > want.Allocs*tolerance {
			fmt.Fprintf(w, "REGRESSION per-call %s: %.0f allocations per call, more than 10%% over the baseline's %.0f (bench/callcost.json)\n", era, a, want.Allocs)
		}
		if ratio > want.Ratio*tolerance {
			fmt.Fprintf(w, "REGRESSION per-call %s: %.2fx the client-only run, more than 10%% over the baseline's %.2fx (bench/callcost.json); times are noisy, run it again side by side before believing it\n", era, ratio, want.Ratio)
		}
	}
	if compared == 0 {
		return fmt.Errorf("no BenchmarkServeCall figures on standard input")
	}
	return nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
