package mcphttp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/testkit/e2e"
	"github.com/wasmcp/wasmcp/protocol"
)

// logTo is a logger writing text lines into a buffer the test reads.
func logTo() (*slog.Logger, *e2e.LockedBuffer) {
	var b e2e.LockedBuffer
	return slog.New(slog.NewTextHandler(&b, nil)), &b
}

// trickle is a body that gives n bytes, then EOF.
type trickle struct{ n int }

func (t *trickle) Read(p []byte) (int, error) {
	if t.n == 0 {
		return 0, io.EOF
	}
	p[0] = ' '
	t.n--
	return 1, nil
}

// TestBodyNotAllocatedFromContentLength: a declared Content-Length is not
// an allocation; the buffer grows with the bytes that arrive.
func TestBodyNotAllocatedFromContentLength(t *testing.T) {
	t.Parallel()
	h := New(protocol.NewServer(protocol.Options{Logger: quiet}), Options{Logger: quiet})
	defer h.Close()
	r := httptest.NewRequest(http.MethodPost, "/mcp", &trickle{n: 10})
	r.ContentLength = DefaultMaxBody
	w := httptest.NewRecorder()
	body, ok := h.readBody(w, r)
	if !ok || len(body) != 10 {
		t.Fatalf("read %d bytes, ok %v: %d %s", len(body), ok, w.Code, w.Body)
	}
	if cap(body) > bodyChunk {
		t.Fatalf("a body of 10 bytes declared %d took a buffer of %d bytes", r.ContentLength, cap(body))
	}
}

// TestBodyReadTimeout: a client that declares a body and sends it too
// slowly gets 400 and its connection closed, and the log says why.
func TestBodyReadTimeout(t *testing.T) {
	t.Parallel()
	log, buf := logTo()
	base, _ := serveOn(t, Options{ReadTimeout: 300 * time.Millisecond, Logger: log})
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 4000000\r\n\r\n{\"js", strings.TrimPrefix(base, "http://"))
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("slow body: %d", resp.StatusCode)
	}
	waitFor(t, "the refusal in the log", func() bool { return strings.Contains(buf.String(), "read timeout") })
}

// TestSessionCapEvictsIdlest: past MaxSessions the idlest session ends; a
// busy session is never evicted, and when all are busy initialize gets
// 503 with Retry-After.
func TestSessionCapEvictsIdlest(t *testing.T) {
	t.Parallel()
	log, buf := logTo()
	e := newEnv(t, Options{MaxSessions: 2, Logger: log})
	a := e.initialize("2025-11-25", `{}`)
	b := e.initialize("2025-11-25", `{}`)
	time.Sleep(5 * time.Millisecond)
	ping := func(sid string) int {
		return e.post(legacyHdr(sid, "application/json"), `{"jsonrpc":"2.0","id":1,"method":"ping"}`).status
	}
	if ping(a) != 200 { // a is now fresher than b
		t.Fatal("ping a")
	}
	c := e.initialize("2025-11-25", `{}`)
	if ping(b) != 404 {
		t.Fatal("the idlest session (b) was not evicted")
	}
	if ping(a) != 200 || ping(c) != 200 {
		t.Fatal("a fresher session was evicted")
	}
	// Both sessions busy (an open GET stream each): nothing to evict.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, sid := range []string{a, c} {
		resp := e.open(ctx, http.MethodGet, map[string]string{"Mcp-Session-Id": sid, "Accept": "text/event-stream"}, "")
		if resp.StatusCode != 200 {
			t.Fatalf("GET: %d", resp.StatusCode)
		}
	}
	waitFor(t, "the streams", func() bool { return e.h.lookup(a, "").busy.Load() == 1 && e.h.lookup(c, "").busy.Load() == 1 })
	r := e.post(map[string]string{"Accept": "application/json"},
		`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if r.status != 503 || r.header.Get("Retry-After") == "" || r.errorCode(t) != -32603 || r.header.Get("Mcp-Session-Id") != "" {
		t.Fatalf("initialize over a busy cap: %d %v %s", r.status, r.header, r.body)
	}
	if ping(a) != 200 || ping(c) != 200 {
		t.Fatal("a busy session was evicted")
	}
	e.h.mu.Lock()
	n := len(e.h.sessions)
	e.h.mu.Unlock()
	if n != 2 {
		t.Fatalf("%d sessions kept, cap 2", n)
	}
	for _, want := range []string{"session evicted", "session refused"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, buf)
		}
	}
}

// TestSessionCapPerPrincipal: one principal's sessions evict each other,
// not another's.
func TestSessionCapPerPrincipal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{MaxSessionsPerPrincipal: 1, Principal: func(r *http.Request) string { return r.Header.Get("X-User") }})
	open := func(user string) string {
		r := e.post(map[string]string{"Accept": "application/json", "X-User": user},
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		if r.status != 200 {
			t.Fatalf("initialize %s: %d %s", user, r.status, r.body)
		}
		return r.header.Get("Mcp-Session-Id")
	}
	ann := open("ann")
	bob := open("bob")
	ann2 := open("ann")
	if e.h.lookup(ann, "ann") != nil || e.h.lookup(ann2, "ann") == nil || e.h.lookup(bob, "bob") == nil {
		t.Fatal("per-principal eviction picked the wrong session")
	}
}

// TestSessionCapFairDefault: with the default per-principal cap (the
// total), one principal's new sessions at the total cap end its own idle
// sessions, never those of a principal holding fewer: bob's idle session,
// the idlest of all, outlives ann's flood; a newcomer takes a session from
// the biggest holder; a principal whose sessions are all busy is refused
// rather than push out one holding fewer (issue 25 item 7).
func TestSessionCapFairDefault(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{MaxSessions: 4, Principal: func(r *http.Request) string { return r.Header.Get("X-User") }})
	open := func(user string) (string, int) {
		r := e.post(map[string]string{"Accept": "application/json", "X-User": user},
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		return r.header.Get("Mcp-Session-Id"), r.status
	}
	bob, _ := open("bob")
	time.Sleep(2 * time.Millisecond)
	var anns []string
	for i := 0; i < 10; i++ {
		sid, st := open("ann")
		if st != 200 {
			t.Fatalf("ann's session %d: %d", i, st)
		}
		anns = append(anns, sid)
		time.Sleep(time.Millisecond)
	}
	if e.h.lookup(bob, "bob") == nil {
		t.Fatal("ann's new sessions evicted bob's idle session")
	}
	if e.h.lookup(anns[9], "ann") == nil || e.h.lookup(anns[0], "ann") != nil {
		t.Fatal("ann's own idlest session was not the one ended")
	}
	// A newcomer at the cap takes one of ann's (she holds 3), not bob's.
	if _, st := open("cat"); st != 200 {
		t.Fatalf("cat's session: %d", st)
	}
	e.h.mu.Lock()
	counts := map[string]int{"ann": e.h.byOwner["ann"], "bob": e.h.byOwner["bob"], "cat": e.h.byOwner["cat"]}
	e.h.mu.Unlock()
	if counts["ann"] != 2 || counts["bob"] != 1 || counts["cat"] != 1 {
		t.Fatalf("sessions held: %v", counts)
	}
	// Ann's and cat's sessions busy: cat's second would have to push out
	// bob, who holds 1, fewer than cat would: refused.
	e.h.mu.Lock()
	for _, v := range e.h.sessions {
		if v.principal != "bob" {
			v.busy.Add(1)
			defer v.busy.Add(-1)
		}
	}
	e.h.mu.Unlock()
	if _, st := open("cat"); st != 503 {
		t.Fatalf("cat's second session with ann's and cat's busy: %d, want 503 (bob holds fewer)", st)
	}
	if e.h.lookup(bob, "bob") == nil {
		t.Fatal("bob's session was pushed out")
	}
}

// TestStreamCap: past MaxStreams a GET stream gets 503 with Retry-After.
func TestStreamCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{MaxStreams: 1})
	a := e.initialize("2025-11-25", `{}`)
	b := e.initialize("2025-11-25", `{}`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if resp := e.open(ctx, http.MethodGet, map[string]string{"Mcp-Session-Id": a, "Accept": "text/event-stream"}, ""); resp.StatusCode != 200 {
		t.Fatalf("first GET: %d", resp.StatusCode)
	}
	r := e.do(http.MethodGet, e.url, map[string]string{"Mcp-Session-Id": b, "Accept": "text/event-stream"}, "")
	if r.status != 503 || r.header.Get("Retry-After") == "" {
		t.Fatalf("GET over the cap: %d %v", r.status, r.header)
	}
}

// TestBatchCap: a batch larger than MaxBatch is refused whole.
func TestBatchCap(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{MaxBatch: 3})
	sid := e.initialize("2025-03-26", `{}`)
	batch := func(n int) reply {
		els := make([]string, n)
		for i := range els {
			els[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i+1)
		}
		return e.post(legacyHdr(sid, "application/json"), "["+strings.Join(els, ",")+"]")
	}
	if r := batch(3); r.status != 200 {
		t.Fatalf("batch at the cap: %d %s", r.status, r.body)
	}
	if r := batch(4); r.status != 400 || r.errorCode(t) != -32600 || !strings.Contains(string(r.body), "at most 3") {
		t.Fatalf("batch over the cap: %d %s", r.status, r.body)
	}
}

// TestBatchStopsWhenClientLeaves: a batch's remaining elements are not
// run once its client has gone away, nor once its session is deleted.
func TestBatchStopsWhenClientLeaves(t *testing.T) {
	t.Parallel()
	e := newEnv(t, Options{})
	sid := e.initialize("2025-03-26", `{}`)
	spin := `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"spin","arguments":{"ms":1500}}}`
	els := make([]string, 8) // 12 s if run to the end
	for i := range els {
		els[i] = fmt.Sprintf(spin, i+1)
	}
	body := "[" + strings.Join(els, ",") + "]"
	sess := e.h.lookup(sid, "")

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url, strings.NewReader(body))
	for k, v := range legacyHdr(sid, "application/json") {
		req.Header.Set(k, v)
	}
	start := time.Now()
	if resp, err := e.ts.Client().Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("the batch answered %d before the client left", resp.StatusCode)
	}
	waitFor(t, "the batch to stop", func() bool { return sess.busy.Load() == 0 })
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("the batch ran %v after its client left", d)
	}

	// DELETE during a batch: the POST ends at once.
	done := make(chan reply, 1)
	go func() {
		r, _ := http.NewRequest(http.MethodPost, e.url, strings.NewReader(body))
		for k, v := range legacyHdr(sid, "application/json") {
			r.Header.Set(k, v)
		}
		resp, err := e.ts.Client().Do(r)
		if err != nil {
			done <- reply{}
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- reply{status: resp.StatusCode, body: b}
	}()
	waitFor(t, "the batch to start", func() bool { return sess.busy.Load() == 1 })
	time.Sleep(100 * time.Millisecond)
	start = time.Now()
	if r := e.do(http.MethodDelete, e.url, map[string]string{"Mcp-Session-Id": sid}, ""); r.status != 204 {
		t.Fatalf("DELETE: %d", r.status)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the batch kept running after DELETE")
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("the batch ran %v after DELETE", d)
	}
}

// TestShutdownNeverAccepts: a legacy request stopped by shutdown past the
// grace gets an error or a closed connection, never 202.
func TestShutdownNeverAccepts(t *testing.T) {
	t.Parallel()
	base, stop := serveOn(t, Options{ShutdownGrace: 100 * time.Millisecond})
	url := base + "/mcp"
	c := &http.Client{}
	resp, _ := postWith(t, c, url, nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	type result struct {
		status int
		body   string
		err    error
	}
	call := func(body string) chan result {
		ch := make(chan result, 1)
		go func() {
			resp, b, err := postRaw(c, url, legacyHdr(sid, "application/json"), body)
			if err != nil {
				ch <- result{err: err}
				return
			}
			ch <- result{status: resp.StatusCode, body: b}
		}()
		return ch
	}
	single := call(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"spin","arguments":{"ms":60000}}}`)
	batch := call(`[{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"spin","arguments":{"ms":60000}}}]`)
	time.Sleep(300 * time.Millisecond)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for name, ch := range map[string]chan result{"single": single, "batch": batch} {
		r := <-ch
		if r.err != nil {
			continue // the connection closed: allowed
		}
		if r.status == http.StatusAccepted || !strings.Contains(r.body, `"error"`) {
			t.Errorf("%s request stopped by shutdown: %d %q", name, r.status, r.body)
		}
	}
}

// TestMaxHeaderBytes: a header block over the cap gets 431.
func TestMaxHeaderBytes(t *testing.T) {
	t.Parallel()
	base, _ := serveOn(t, Options{})
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader("{}"))
	req.Header.Set("X-Pad", strings.Repeat("a", DefaultMaxHeaderBytes+8<<10))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("oversized headers: %d", resp.StatusCode)
	}
}

// TestLimitListener: connections past the total or per-address cap are
// closed at accept and logged; a place freed is reused.
func TestLimitListener(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("dials from 127.0.0.2 and 127.0.0.3, which only Linux routes by default")
	}
	log, buf := logTo()
	inner := freePort(t)
	ln := newLimitListener(inner, 3, 2, newRateLog(log, time.Hour))
	defer ln.Close()
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	dial := func(from string) net.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// A refused connection ends at once (EOF or reset); an accepted one
	// stays open (the read times out).
	refused := func(c net.Conn) bool {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err := c.Read(make([]byte, 1))
		var ne net.Error
		return err != nil && !(errors.As(err, &ne) && ne.Timeout())
	}
	a1, a2 := dial("127.0.0.1"), dial("127.0.0.1")
	s1, s2 := <-accepted, <-accepted
	if a3 := dial("127.0.0.1"); !refused(a3) {
		t.Fatal("a third connection from one address was accepted")
	}
	_ = dial("127.0.0.2")
	<-accepted
	if b2 := dial("127.0.0.3"); !refused(b2) {
		t.Fatal("a connection past the total cap was accepted")
	}
	if ln.open() != 3 {
		t.Fatalf("%d open, want 3", ln.open())
	}
	s1.Close()
	a1.Close()
	waitFor(t, "the place to free", func() bool { return ln.open() == 2 })
	_ = dial("127.0.0.1")
	select {
	case <-accepted:
	case <-time.After(5 * time.Second):
		t.Fatal("a freed place was not reused")
	}
	_, _ = a2, s2
	for _, want := range []string{"remote address is at its connection cap", "at its connection cap", "level=WARN"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, buf)
		}
	}
}

// failingListener fails every Accept with err.
type failingListener struct {
	net.Listener
	err   error
	calls int
	mu    sync.Mutex
}

func (f *failingListener) Accept() (net.Conn, error) {
	f.mu.Lock()
	f.calls++
	f.mu.Unlock()
	return nil, f.err
}

// TestAcceptErrorsLogged: accept errors (file descriptors exhausted) are
// logged at warning level, once per interval however many there are.
func TestAcceptErrorsLogged(t *testing.T) {
	t.Parallel()
	log, buf := logTo()
	f := &failingListener{Listener: freePort(t), err: &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}}
	defer f.Listener.Close()
	ln := newLimitListener(f, 10, 10, newRateLog(log, time.Hour))
	for range 50 {
		if _, err := ln.Accept(); err == nil {
			t.Fatal("no error")
		}
	}
	out := buf.String()
	if n := strings.Count(out, "accepting a connection failed"); n != 1 || !strings.Contains(out, "level=WARN") || !strings.Contains(out, "too many open files") {
		t.Fatalf("want one warning naming the error, got %d:\n%s", n, out)
	}
	ln.log.keys["accept"].last = time.Time{} // the interval has passed
	_, _ = ln.Accept()
	if !strings.Contains(buf.String(), "suppressed=49") {
		t.Fatalf("the count of suppressed lines is missing:\n%s", buf)
	}
}

// TestDefaultMaxConns follows the file-descriptor limit.
func TestDefaultMaxConns(t *testing.T) {
	n := fdLimit()
	if n <= 0 {
		t.Skip("no file-descriptor limit here")
	}
	got := DefaultMaxConns()
	if got >= n || got < min(16, n) || got != max(16, (n-128)*3/4) {
		t.Fatalf("DefaultMaxConns %d for a limit of %d", got, n)
	}
}

// TestNonLoopbackWarning: Serve warns when its address is not loopback
// and stays quiet on loopback.
func TestNonLoopbackWarning(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{"0.0.0.0:8080": true, "": false} {
		log, buf := logTo()
		_, stop := serveOn(t, Options{Addr: addr, Logger: log})
		_ = stop() // Serve logs the warning before it serves
		if got := strings.Contains(buf.String(), "non-loopback"); got != want {
			t.Errorf("addr %q: warning %v, want %v:\n%s", addr, got, want, buf)
		}
	}
}

func TestBatchCounter(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want bool
	}{
		{`[1,2,3]`, 3, false},
		{`[1,2,3]`, 2, true},
		{`[{"a":[1,2,3,4]},"x,y,z"]`, 2, false},
		{`[{"a":"\",\",\","},2]`, 2, false},
		{`[]`, 1, false},
		{` {"a":[1,2,3]}`, 1, false},
		{`[1,[2,3],{"b":4,"c":5}]`, 3, false},
		{`[1,[2,3],{"b":4,"c":5},6]`, 3, true},
	} {
		var whole, bytewise batchCounter
		if got := whole.feed([]byte(c.in)) > c.max; got != c.want {
			t.Errorf("%s over %d: %v", c.in, c.max, got)
		}
		n := 0
		for i := range len(c.in) {
			n = bytewise.feed([]byte{c.in[i]})
		}
		if got := n > c.max; got != c.want {
			t.Errorf("%s fed byte by byte, over %d: %v", c.in, c.max, got)
		}
	}
}
