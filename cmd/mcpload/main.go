package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/wasmcp/wasmcp/internal/headervalue"
)

// Revisions mcpload speaks.
const (
	modernVersion = "2026-07-28"
	legacyVersion = "2025-11-25"
	maxDuration   = 30 * time.Minute
	maxBody       = 16 << 20
)

// config is what one run does.
type config struct {
	URL      string
	Clients  int
	Duration time.Duration
	Requests int64
	Warmup   time.Duration
	Timeout  time.Duration
	Tool     string
	Args     json.RawMessage
	Era      string
	Version  string // legacy: the revision to initialize with
	PID      int
	Label    string
	Proto    string // protoHTTP1, protoHTTP2 or protoHTTP3
	CACert   string // PEM file of a certificate to trust (https)
	roots    *x509.CertPool
	relay    bool // -relay: forward requests instead of loading
}

// Report is the outcome of a run, as printed with -json.
type Report struct {
	Label      string  `json:"label"`
	URL        string  `json:"url"`
	Era        string  `json:"era"`
	Proto      string  `json:"proto"`
	Tool       string  `json:"tool"`
	Clients    int     `json:"clients"`
	Seconds    float64 `json:"seconds"`
	Requests   int64   `json:"requests"`
	Errors     int64   `json:"errors"`
	ToolErrors int64   `json:"toolErrors"`
	RPS        float64 `json:"rps"`
	P50ms      float64 `json:"p50ms"`
	P90ms      float64 `json:"p90ms"`
	P99ms      float64 `json:"p99ms"`
	MaxMs      float64 `json:"maxMs"`
	FirstError string  `json:"firstError,omitempty"`
	// Server figures, with -pid: CPU time (user+system) per counted call,
	// the share of one core it used over the run, and its resident memory
	// (peak sampled during the run, and at the end).
	ServerCPUus   float64 `json:"serverCpuUsPerCall,omitempty"`
	ServerCores   float64 `json:"serverCores,omitempty"`
	ServerRSSPeak int64   `json:"serverRssPeakKiB,omitempty"`
	ServerRSSEnd  int64   `json:"serverRssEndKiB,omitempty"`
	// ClientCPUus is mcpload's own CPU time per call: on a shared machine it
	// is taken from the server's share.
	ClientCPUus float64 `json:"clientCpuUsPerCall"`
}

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "mcpload:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("mcpload", flag.ContinueOnError)
	var cfg config
	var rawArgs string
	var jsonOut bool
	var table string
	var h2, h3 bool
	var relayAddr string
	fs.StringVar(&cfg.URL, "url", "http://127.0.0.1:8080/mcp", "MCP endpoint (loopback only)")
	fs.IntVar(&cfg.Clients, "c", 8, "concurrent clients, each with its own keep-alive connection")
	fs.DurationVar(&cfg.Duration, "d", 10*time.Second, "how long to measure (after the warm-up); at most 30m")
	fs.Int64Var(&cfg.Requests, "n", 0, "stop after this many counted calls instead (the -d bound still applies)")
	fs.DurationVar(&cfg.Warmup, "warmup", time.Second, "calls in this first period are not counted")
	fs.DurationVar(&cfg.Timeout, "timeout", 30*time.Second, "deadline of one call")
	fs.StringVar(&cfg.Tool, "tool", "", "tool to call (required)")
	fs.StringVar(&rawArgs, "args", "{}", "the tool's arguments, a JSON object")
	fs.StringVar(&cfg.Era, "era", "modern", `"modern" (2026-07-28, stateless) or "legacy" (initialize once per client, session header)`)
	fs.StringVar(&cfg.Version, "version", legacyVersion, "legacy era: the protocol version to initialize with")
	fs.IntVar(&cfg.PID, "pid", 0, "the server's process id, to report its CPU time per call and memory (Linux /proc)")
	fs.StringVar(&cfg.Label, "label", "", "a name for this run in reports (default: the URL)")
	fs.BoolVar(&h2, "h2", false, "speak HTTP/2 (by ALPN over https, h2c with prior knowledge over http)")
	fs.BoolVar(&h3, "http3", false, "speak HTTP/3 over QUIC (https URL; the UDP port is the URL's)")
	fs.StringVar(&cfg.CACert, "cacert", "", "PEM file of a certificate to trust for an https URL (e.g. one from 'wasmcp cert')")
	fs.BoolVar(&jsonOut, "json", false, "print the report as JSON")
	fs.StringVar(&relayAddr, "relay", "", "instead of loading: serve plain HTTP/1.1 on this loopback HOST:PORT and forward every request to -url over -http3 or -h2, for -d (so an HTTP/1.1-only client, such as the MCP conformance runner, runs against the server's HTTP/3 side)")
	fs.StringVar(&table, "table", "", "print a table of the -json reports in these comma-separated files and exit")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: mcpload -url URL -tool NAME [-args JSON] [flags]\n       mcpload -url URL -http3 -relay HOST:PORT [-d 30m] [-cacert CERT]\n       mcpload -table A.json,B.json,...\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if table != "" {
		return printTable(stdout, strings.Split(table, ","))
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	cfg.Args = json.RawMessage(rawArgs)
	cfg.relay = relayAddr != ""
	switch {
	case h2 && h3:
		return errors.New("-h2 and -http3 are exclusive")
	case h2:
		cfg.Proto = protoHTTP2
	case h3:
		cfg.Proto = protoHTTP3
	}
	if err := cfg.check(); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cfg.relay {
		if cfg.Proto == protoHTTP1 {
			return errors.New("-relay needs -http3 or -h2 (it turns HTTP/1.1 into one of them)")
		}
		ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
		defer cancel()
		return relay(ctx, cfg, relayAddr, func(addr string) {
			fmt.Fprintf(stdout, "relaying http://%s to %s over %s\n", addr, cfg.URL, protoName(cfg.Proto))
		})
	}
	rep, err := load(ctx, cfg)
	if err != nil {
		return err
	}
	if jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	writeReports(stdout, []Report{*rep}, -1)
	return nil
}

// check validates a config and fills defaults.
func (c *config) check() error {
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("-url %q: want http://HOST:PORT/PATH", c.URL)
	}
	if !loopback(u.Hostname()) {
		return fmt.Errorf("-url %q: mcpload only loads servers on this machine (127.0.0.0/8, ::1, localhost)", c.URL)
	}
	if c.Tool == "" && !c.relay {
		return errors.New("-tool is required")
	}
	if err := c.checkProto(u.Scheme == "https"); err != nil {
		return err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(c.Args, &obj); err != nil || obj == nil {
		return fmt.Errorf("-args must be a JSON object: %v", err)
	}
	var compact bytes.Buffer
	_ = json.Compact(&compact, c.Args)
	c.Args = compact.Bytes()
	switch {
	case c.Clients < 1 || c.Clients > 10000:
		return fmt.Errorf("-c %d: want 1 to 10000", c.Clients)
	case c.Duration <= 0 || c.Duration > maxDuration:
		return fmt.Errorf("-d %s: want more than 0 and at most %s", c.Duration, maxDuration)
	case c.Warmup < 0 || c.Warmup > maxDuration:
		return fmt.Errorf("-warmup %s: want 0 to %s", c.Warmup, maxDuration)
	case c.Requests < 0:
		return errors.New("-n must not be negative")
	case c.Era != "modern" && c.Era != "legacy":
		return fmt.Errorf("-era %q: want modern or legacy", c.Era)
	}
	if c.Label == "" {
		c.Label = c.URL
	}
	return nil
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// client is one simulated MCP client with its own connection.
type client struct {
	cfg     *config
	hc      *http.Client
	session string // legacy: Mcp-Session-Id, "" when the server gave none
	version string // the revision the calls declare
	body    []byte
	name    string // Mcp-Name value
	major   int    // the HTTP major version answers must have
}

func newClient(cfg *config) *client {
	return &client{cfg: cfg, hc: &http.Client{Transport: newRoundTripper(cfg), Timeout: cfg.Timeout},
		name: headervalue.Encode(cfg.Tool), major: protoMajor(cfg.Proto)}
}

// post sends one JSON-RPC message and returns the status, headers and the
// body (for an SSE answer, the data of the message with the given id).
func (cl *client) post(ctx context.Context, body []byte, method string, id int64) (int, http.Header, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cl.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	h := req.Header
	h["Content-Type"] = []string{"application/json"}
	h["Accept"] = []string{"application/json, text/event-stream"}
	if cl.version != "" {
		h["Mcp-Protocol-Version"] = []string{cl.version}
	}
	if cl.session != "" {
		h["Mcp-Session-Id"] = []string{cl.session}
	}
	if cl.cfg.Era == "modern" {
		h["Mcp-Method"] = []string{method}
		if method == "tools/call" {
			h["Mcp-Name"] = []string{cl.name}
		}
	}
	resp, err := cl.hc.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != cl.major {
		return 0, nil, nil, fmt.Errorf("the server answered in %s, not %s", resp.Proto, protoName(cl.cfg.Proto))
	}
	rd := io.LimitReader(resp.Body, maxBody)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data, err := sseMessage(rd, id)
		_, _ = io.Copy(io.Discard, rd)
		return resp.StatusCode, resp.Header, data, err
	}
	data, err := io.ReadAll(rd)
	return resp.StatusCode, resp.Header, data, err
}

// sseMessage reads SSE events until the JSON-RPC response with the id.
func sseMessage(r io.Reader, id int64) ([]byte, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxBody)
	var data []byte
	want := []byte(`"id":` + strconv.FormatInt(id, 10))
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))...)
		case len(line) == 0 && len(data) > 0:
			if bytes.Contains(data, want) && !bytes.Contains(data, []byte(`"method"`)) {
				return data, nil
			}
			data = data[:0]
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(data) > 0 && bytes.Contains(data, want) {
		return data, nil
	}
	return nil, errors.New("the event stream ended without the response")
}

// rpcAnswer is what mcpload reads from a response.
type rpcAnswer struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		IsError         bool   `json:"isError"`
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// errToolError marks a result with isError true.
var errToolError = errors.New("tool error")

func check(status int, body []byte, id int64) (*rpcAnswer, error) {
	if status < 200 || status > 299 {
		return nil, fmt.Errorf("HTTP %d: %s", status, clip(body))
	}
	var a rpcAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return nil, fmt.Errorf("not a JSON-RPC response: %v: %s", err, clip(body))
	}
	if string(a.ID) != strconv.FormatInt(id, 10) {
		return nil, fmt.Errorf("response id %s, want %d", a.ID, id)
	}
	if a.Error != nil {
		return nil, fmt.Errorf("JSON-RPC error %d: %s", a.Error.Code, a.Error.Message)
	}
	if a.Result == nil {
		return nil, fmt.Errorf("response without result: %s", clip(body))
	}
	if a.Result.IsError {
		return &a, fmt.Errorf("%w: %s", errToolError, clip(body))
	}
	return &a, nil
}

func clip(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// handshake opens a legacy session.
func (cl *client) handshake(ctx context.Context) error {
	if cl.cfg.Era == "modern" {
		cl.version = modernVersion
		return nil
	}
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":` + strconv.Quote(cl.cfg.Version) +
		`,"capabilities":{},"clientInfo":{"name":"mcpload","version":"1.0.0"}}}`
	status, h, body, err := cl.post(ctx, []byte(init), "initialize", 0)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	a, err := check(status, body, 0)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	cl.session = h.Get("Mcp-Session-Id")
	cl.version = a.Result.ProtocolVersion
	if cl.version == "" {
		cl.version = cl.cfg.Version
	}
	status, _, body, err = cl.post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), "notifications/initialized", -1)
	if err != nil {
		return fmt.Errorf("notifications/initialized: %w", err)
	}
	if status < 200 || status > 299 {
		return fmt.Errorf("notifications/initialized: HTTP %d: %s", status, clip(body))
	}
	return nil
}

// close ends a legacy session (a server without DELETE may refuse; that is
// not an error of the run).
func (cl *client) close() {
	if cl.session != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if req, err := http.NewRequestWithContext(ctx, http.MethodDelete, cl.cfg.URL, nil); err == nil {
			req.Header.Set("Mcp-Session-Id", cl.session)
			req.Header.Set("Mcp-Protocol-Version", cl.version)
			if resp, err := cl.hc.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}
	closeIdle(cl.hc.Transport)
}

// callBody builds the tools/call request with the id.
func (cl *client) callBody(id int64) []byte {
	b := cl.body[:0]
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"method":"tools/call","params":{"name":`...)
	b = strconv.AppendQuote(b, cl.cfg.Tool)
	b = append(b, `,"arguments":`...)
	b = append(b, cl.cfg.Args...)
	if cl.cfg.Era == "modern" {
		b = append(b, `,"_meta":{"io.modelcontextprotocol/protocolVersion":"`+modernVersion+`","io.modelcontextprotocol/clientCapabilities":{}}`...)
	}
	b = append(b, "}}"...)
	cl.body = b
	return b
}

// sample is one counted call.
type sample struct {
	lat time.Duration
	err error
}

// load runs the clients and gathers the report.
func load(ctx context.Context, cfg config) (*Report, error) {
	clients, err := handshakeAll(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, c := range clients {
			c.close()
		}
	}()

	start := time.Now()
	run := &loadRun{cfg: &cfg, measureFrom: start.Add(cfg.Warmup)}
	run.deadline = run.measureFrom.Add(cfg.Duration)
	var mon *monitor
	if cfg.PID > 0 {
		mon = newMonitor(cfg.PID)
	}
	var selfStart syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &selfStart)
	startedMeasuring := make(chan struct{})
	go run.startMeasuring(ctx, mon, &selfStart, startedMeasuring)
	lats := make([][]time.Duration, cfg.Clients)
	var wg sync.WaitGroup
	for i, cl := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lats[i] = run.client(ctx, cl)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	// startMeasuring marks the start of measuring when its timer fires; a
	// run with no warm-up can finish its requests before that goroutine
	// is scheduled, so only a run that ended before measureFrom failed to
	// measure.
	if time.Now().Before(run.measureFrom) {
		return nil, errors.New("the run ended before the warm-up did")
	}
	<-startedMeasuring
	var selfEnd syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &selfEnd)
	return run.report(lats, mon, cpuTime(&selfEnd)-cpuTime(&selfStart)), nil
}

// handshakeAll opens cfg.Clients clients, each through its handshake;
// on an error it closes those it opened.
func handshakeAll(ctx context.Context, cfg *config) ([]*client, error) {
	clients := make([]*client, cfg.Clients)
	for i := range clients {
		clients[i] = newClient(cfg)
		if err := clients[i].handshake(ctx); err != nil {
			for _, c := range clients[:i+1] {
				c.close()
			}
			return nil, err
		}
	}
	return clients, nil
}

// loadRun is one load run's timing and the counters its clients share.
type loadRun struct {
	cfg                  *config
	measureFrom          time.Time // the warm-up's end
	deadline             time.Time // the measured window's end
	counted              atomic.Int64
	nextID               atomic.Int64
	errorsN, toolErrorsN atomic.Int64
	firstErr             atomic.Pointer[string]
	lastEnd              atomic.Int64 // unix nanos of the last counted completion
}

// startMeasuring waits for the warm-up to end (or ctx), then starts the
// server monitor, reads this process's CPU time into selfStart and
// closes started.
func (run *loadRun) startMeasuring(ctx context.Context, mon *monitor, selfStart *syscall.Rusage, started chan<- struct{}) {
	t := time.NewTimer(time.Until(run.measureFrom))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	if mon != nil {
		mon.begin()
	}
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, selfStart)
	close(started)
}

// client calls the tool through cl until the deadline, the request
// count or ctx ends the run, and returns the latencies it measured.
func (run *loadRun) client(ctx context.Context, cl *client) []time.Duration {
	cfg := run.cfg
	own := make([]time.Duration, 0, 4096)
	for ctx.Err() == nil {
		now := time.Now()
		if now.After(run.deadline) {
			return own
		}
		measured := !now.Before(run.measureFrom)
		if measured && cfg.Requests > 0 && run.counted.Add(1) > cfg.Requests {
			return own
		}
		id := run.nextID.Add(1)
		rctx, cancel := context.WithTimeout(context.Background(), cfg.Timeout)
		status, _, body, err := cl.post(rctx, cl.callBody(id), "tools/call", id)
		cancel()
		if err == nil {
			_, err = check(status, body, id)
		}
		end := time.Now()
		if !measured || end.After(run.deadline) {
			continue
		}
		own = append(own, end.Sub(now))
		run.record(end, err)
	}
	return own
}

// record counts one measured call that ended at end with err.
func (run *loadRun) record(end time.Time, err error) {
	if run.cfg.Requests == 0 {
		run.counted.Add(1)
	}
	for {
		last := run.lastEnd.Load()
		if end.UnixNano() <= last || run.lastEnd.CompareAndSwap(last, end.UnixNano()) {
			break
		}
	}
	if err != nil {
		if errors.Is(err, errToolError) {
			run.toolErrorsN.Add(1)
		} else {
			run.errorsN.Add(1)
		}
		msg := err.Error()
		run.firstErr.CompareAndSwap(nil, &msg)
	}
}

// report gathers the clients' latencies, the counters and the server
// monitor into the Report; clientCPU is this process's CPU time while
// measuring.
func (run *loadRun) report(lats [][]time.Duration, mon *monitor, clientCPU time.Duration) *Report {
	cfg := run.cfg
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	slices.Sort(all)
	rep := &Report{Label: cfg.Label, URL: cfg.URL, Era: cfg.Era, Proto: protoName(cfg.Proto), Tool: cfg.Tool, Clients: cfg.Clients,
		Requests: int64(len(all)), Errors: run.errorsN.Load(), ToolErrors: run.toolErrorsN.Load()}
	if p := run.firstErr.Load(); p != nil {
		rep.FirstError = *p
	}
	elapsed := cfg.Duration
	if cfg.Requests > 0 && run.lastEnd.Load() > 0 {
		elapsed = time.Unix(0, run.lastEnd.Load()).Sub(run.measureFrom)
	}
	rep.Seconds = elapsed.Seconds()
	if len(all) > 0 {
		rep.RPS = float64(len(all)) / elapsed.Seconds()
		rep.P50ms = ms(quantile(all, 0.50))
		rep.P90ms = ms(quantile(all, 0.90))
		rep.P99ms = ms(quantile(all, 0.99))
		rep.MaxMs = ms(all[len(all)-1])
		rep.ClientCPUus = float64(clientCPU.Microseconds()) / float64(len(all))
	}
	if mon != nil {
		cpu, peak, end := mon.end()
		if len(all) > 0 {
			rep.ServerCPUus = float64(cpu.Microseconds()) / float64(len(all))
		}
		rep.ServerCores = cpu.Seconds() / elapsed.Seconds()
		rep.ServerRSSPeak, rep.ServerRSSEnd = peak, end
	}
	return rep
}

// cpuTime is the user and system CPU time in ru.
func cpuTime(ru *syscall.Rusage) time.Duration {
	return time.Duration(syscall.TimevalToNsec(ru.Utime) + syscall.TimevalToNsec(ru.Stime))
}

func quantile(sorted []time.Duration, q float64) time.Duration {
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// monitor samples a process's CPU time and resident memory from /proc.
type monitor struct {
	pid      int
	cpu0     time.Duration
	stop     chan struct{}
	done     chan struct{}
	peak     atomic.Int64
	startErr error
}

func newMonitor(pid int) *monitor { return &monitor{pid: pid} }

func (m *monitor) begin() {
	m.cpu0, m.startErr = procCPU(m.pid)
	m.stop, m.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(m.done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			if rss, err := procRSS(m.pid); err == nil && rss > m.peak.Load() {
				m.peak.Store(rss)
			}
			select {
			case <-t.C:
			case <-m.stop:
				return
			}
		}
	}()
}

// end returns the CPU time used since begin, the peak and the current RSS
// (KiB); zeros when /proc cannot be read.
func (m *monitor) end() (time.Duration, int64, int64) {
	if m.stop == nil {
		return 0, 0, 0
	}
	close(m.stop)
	<-m.done
	cpu1, err := procCPU(m.pid)
	rss, _ := procRSS(m.pid)
	if err != nil || m.startErr != nil {
		return 0, m.peak.Load(), rss
	}
	return cpu1 - m.cpu0, max(m.peak.Load(), rss), rss
}

// clockTick is USER_HZ, the unit of /proc/PID/stat times (100 on Linux).
const clockTick = 100

// procCPU is a process's user+system CPU time from /proc/PID/stat.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields restart after ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("unreadable /proc stat")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("unreadable /proc stat")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64) // field 14
	st, err2 := strconv.ParseInt(f[12], 10, 64) // field 15
	if err1 != nil || err2 != nil {
		return 0, errors.New("unreadable /proc stat")
	}
	return time.Duration(ut+st) * time.Second / clockTick, nil
}

// procRSS is a process's resident set in KiB from /proc/PID/status.
func procRSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		}
	}
	return 0, errors.New("no VmRSS")
}

// printTable reads -json reports and prints them side by side, with
// throughput and server CPU per call relative to the last one.
func printTable(w io.Writer, files []string) error {
	var reps []Report
	for _, f := range files {
		b, err := os.ReadFile(strings.TrimSpace(f))
		if err != nil {
			return err
		}
		var r Report
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		reps = append(reps, r)
	}
	writeReports(w, reps, len(reps)-1)
	return nil
}

// writeReports prints reports as a table; base >= 0 adds ratio columns
// relative to reps[base].
func writeReports(w io.Writer, reps []Report, base int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	hdr := "server\tera\tHTTP\tclients\tcalls\terrors\treq/s\tp50 ms\tp90 ms\tp99 ms\tmax ms\tsrv CPU µs/call\tsrv RSS peak MiB\t"
	if base >= 0 {
		hdr += "req/s vs " + reps[base].Label + "\tCPU/call vs " + reps[base].Label + "\t"
	}
	fmt.Fprintln(tw, hdr)
	for _, r := range reps {
		line := fmt.Sprintf("%s\t%s\t%s\t%d\t%d\t%d\t%.0f\t%.2f\t%.2f\t%.2f\t%.2f\t%s\t%s\t",
			r.Label, r.Era, orText(r.Proto, "HTTP/1.1"), r.Clients, r.Requests, r.Errors+r.ToolErrors, r.RPS, r.P50ms, r.P90ms, r.P99ms, r.MaxMs,
			orDash(r.ServerCPUus, "%.0f"), orDash(float64(r.ServerRSSPeak)/1024, "%.1f"))
		if base >= 0 {
			b := reps[base]
			line += ratio(r.RPS, b.RPS) + "\t" + ratio(r.ServerCPUus, b.ServerCPUus) + "\t"
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	for _, r := range reps {
		if r.FirstError != "" {
			fmt.Fprintf(w, "%s: first error: %s\n", r.Label, r.FirstError)
		}
	}
}

func orDash(v float64, format string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// orText is s, or def when s is empty (reports written before the field).
func orText(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
