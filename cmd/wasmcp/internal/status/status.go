package status

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Print asks the server whose metrics are at server (a base URL, or its
// /metrics URL) for its state and writes it to w: a header, then one row
// per tool.
func Print(ctx context.Context, w io.Writer, server string) error {
	base := strings.TrimSuffix(strings.TrimSuffix(server, "/metrics"), "/")
	fams, err := fetchMetrics(ctx, base+"/metrics")
	if err != nil {
		return err
	}
	ready := "unknown"
	if code, body, err := fetch(ctx, base+"/readyz"); err == nil {
		ready = strings.TrimSpace(body)
		if code != http.StatusOK && ready == "" {
			ready = fmt.Sprintf("not ready (%d)", code)
		}
	}
	return writeStatus(w, base, ready, fams)
}

func fetch(ctx context.Context, url string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b), err
}

func fetchMetrics(ctx context.Context, url string) (map[string]*dto.MetricFamily, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("asking %s: %w", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("asking %s: %s", url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", url, err)
	}
	if fams["wasmcp_modules"] == nil {
		return nil, fmt.Errorf("%s is not a wasmcp server's metrics", url)
	}
	return fams, nil
}

func labelsOf(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.Label))
	for _, l := range m.Label {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func gauge(fams map[string]*dto.MetricFamily, name string) float64 {
	var v float64
	if f := fams[name]; f != nil {
		for _, m := range f.Metric {
			v += m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	return v
}

// writeStatus prints the server's state: a header, then one row per tool.
func writeStatus(w io.Writer, base, ready string, fams map[string]*dto.MetricFamily) error {
	fmt.Fprintf(w, "server   %s (%s)\n", base, ready)
	fmt.Fprintf(w, "modules  %.0f  tools %.0f  tasks active %.0f  sessions %.0f  sse streams %.0f  listen %.0f  reloads %.0f  refused modules %.0f\n\n",
		gauge(fams, "wasmcp_modules"), gauge(fams, "wasmcp_tools"), gauge(fams, "wasmcp_tasks_active"),
		gauge(fams, "wasmcp_http_sessions"), gauge(fams, "wasmcp_http_sse_streams"), gauge(fams, "wasmcp_listen_subscriptions"),
		gauge(fams, "wasmcp_catalog_publications_total"), gauge(fams, "wasmcp_module_refusals_total"))
	if n := gauge(fams, "wasmcp_loads_waiting"); n > 0 {
		fmt.Fprintf(w, "waiting  %.0f loads for room in --code-memory (they load once a load ends or code goes idle)\n\n", n)
	}
	if f := fams["wasmcp_module_retrying"]; f != nil && len(f.Metric) > 0 {
		// Loads a busy machine cut: loaded again after a backoff.
		var names []string
		for _, m := range f.Metric {
			names = append(names, labelsOf(m)["module"])
		}
		sort.Strings(names)
		fmt.Fprintf(w, "retrying %s (a busy machine cut their load; loaded again after a backoff)\n\n", strings.Join(names, " "))
	}
	if f := fams["wasmcp_module_refused"]; f != nil && len(f.Metric) > 0 {
		// Files not served as they are now, and why.
		var lines []string
		for _, m := range f.Metric {
			l := labelsOf(m)
			lines = append(lines, fmt.Sprintf("refused  %s: %s", l["module"], escapeControl(l["reason"])))
		}
		sort.Strings(lines)
		fmt.Fprintf(w, "%s\n\n", strings.Join(lines, "\n"))
	}
	type row struct {
		calls, errs float64
		outcomes    map[string]float64
		sum, n      float64
	}
	rows := map[[2]string]*row{}
	get := func(l map[string]string) *row {
		k := [2]string{l["module"], l["tool"]}
		if rows[k] == nil {
			rows[k] = &row{outcomes: map[string]float64{}}
		}
		return rows[k]
	}
	if f := fams["wasmcp_tool_calls_total"]; f != nil {
		for _, m := range f.Metric {
			l := labelsOf(m)
			r, v := get(l), m.GetCounter().GetValue()
			r.calls += v
			o := l["outcome"]
			if l["limit"] != "" {
				o += ":" + l["limit"]
			}
			if o != "ok" {
				r.errs += v
				r.outcomes[o] += v
			}
		}
	}
	if f := fams["wasmcp_tool_call_duration_seconds"]; f != nil {
		for _, m := range f.Metric {
			r := get(labelsOf(m))
			r.sum += m.GetHistogram().GetSampleSum()
			r.n += float64(m.GetHistogram().GetSampleCount())
		}
	}
	queue := map[string]float64{}
	if f := fams["wasmcp_gate_queue_depth"]; f != nil {
		for _, m := range f.Metric {
			queue[labelsOf(m)["module"]] = m.GetGauge().GetValue()
		}
	}
	keys := make([][2]string, 0, len(rows))
	for k := range rows {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i][0] != keys[j][0] {
			return keys[i][0] < keys[j][0]
		}
		return keys[i][1] < keys[j][1]
	})
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MODULE\tTOOL\tCALLS\tERRORS\tMEAN\tQUEUED\tNOT OK")
	for _, k := range keys {
		r := rows[k]
		mean := "-"
		if r.n > 0 {
			mean = time.Duration(r.sum / r.n * float64(time.Second)).Round(10 * time.Microsecond).String()
		}
		var detail []string
		for o, v := range r.outcomes {
			detail = append(detail, fmt.Sprintf("%s=%.0f", o, v))
		}
		sort.Strings(detail)
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.0f\t%s\t%.0f\t%s\n", k[0], k[1], r.calls, r.errs, mean, queue[k[0]], strings.Join(detail, " "))
	}
	if len(keys) == 0 {
		fmt.Fprintln(tw, "(no tool calls yet)")
	}
	return tw.Flush()
}

// escapeControl writes control characters of a reason (remote or guest
// text) as Go escapes, so that it cannot move the terminal's cursor.
func escapeControl(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
