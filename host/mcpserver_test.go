package host

import (
	"context"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

func TestStripEnvelope(t *testing.T) {
	cases := []struct{ in, want string }{
		{``, ``},
		{`{"name":"echo","arguments":{"text":"task"}}`, `{"name":"echo","arguments":{"text":"task"}}`},
		{`{"name":"echo","task":{"ttl":1000},"_meta":{"progressToken":"p"}}`, `{"_meta":{"progressToken":"p"},"name":"echo"}`},
		{`{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`, `{"name":"echo"}`},
		{`{"name":"ask","inputResponses":{"1":{}},"requestState":"x","_meta":{"progressToken":1,"io.modelcontextprotocol/logLevel":"info","wasmcp/principal":{"name":"a"}}}`,
			`{"_meta":{"progressToken":1,"wasmcp/principal":{"name":"a"}},"name":"ask"}`},
		// The same names spelled with escapes are the same names.
		{`{"name":"ask","t\u0061sk":{"ttl":1},"inputR\u0065sponses":{"1":{}},"_meta":{"io.m\u006fdelcontextprotocol/logLevel":"info","progressToken":1}}`,
			`{"_meta":{"progressToken":1},"name":"ask"}`},
	}
	for _, c := range cases {
		got := string(stripEnvelope([]byte(c.in)))
		if c.want == c.in {
			if got != c.in {
				t.Errorf("%s: rewritten to %s", c.in, got)
			}
			continue
		}
		var g, w any
		if err := json.Unmarshal([]byte(got), &g); err != nil {
			t.Fatalf("%s: %v (%s)", c.in, err, got)
		}
		_ = json.Unmarshal([]byte(c.want), &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s:\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}

func TestDiscovery(t *testing.T) {
	var d discovery
	if err := d.initialized([]byte(`{"protocolVersion":"2099-01-01","capabilities":{},"serverInfo":{"name":"x"}}`)); err == nil ||
		!strings.Contains(err.Error(), "2099-01-01") {
		t.Fatalf("unknown revision: %v", err)
	}
	if err := d.initialized([]byte(`{"protocolVersion":"2025-06-18"}`)); err == nil {
		t.Fatal("no capabilities: accepted")
	}
	err := d.initialized([]byte(`{"protocolVersion":"2025-03-26","capabilities":{"tools":{},"prompts":{},"logging":{}},` +
		`"serverInfo":{"name":"srv","version":"2"},"instructions":"hi"}`))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(d.methods, ",") != "tools/list,prompts/list" || !d.info.Logging || d.info.Version != "2025-03-26" {
		t.Fatalf("after initialize: %+v", d)
	}
	next, err := d.add([]byte(`{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":"c2"}`))
	if err != nil || next != "c2" {
		t.Fatalf("page 1: %q %v", next, err)
	}
	if next, err = d.add([]byte(`{"tools":[{"name":"b","inputSchema":{"type":"object"},"execution":{}}]}`)); err != nil || next != "" {
		t.Fatalf("page 2: %q %v", next, err)
	}
	if _, err := d.add([]byte(`{"tools":3}`)); err == nil {
		t.Fatal("malformed page accepted")
	}
	raw, err := d.result()
	if err != nil {
		t.Fatal(err)
	}
	var md mcpDescribed
	if err := json.Unmarshal(raw, &md); err != nil {
		t.Fatal(err)
	}
	if md.Version != "2025-03-26" || !md.Logging || !strings.Contains(string(md.Description), `"name":"srv"`) ||
		!strings.Contains(string(md.Description), `"name":"b"`) || strings.Contains(string(md.Description), "execution") {
		t.Fatalf("result: %s", raw)
	}
}

// TestInboxNonblocking: once non-blocking, an empty inbox reads EAGAIN and
// Poll waits for data, for the call's end, or for its timeout.
func TestInboxNonblocking(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	in := newInbox(ctx, []byte("a\n"))
	in.setNonblock()
	buf := make([]byte, 8)
	if n, err := in.Read(buf); n != 2 || err != nil {
		t.Fatalf("read: %d %v", n, err)
	}
	if _, err := in.Read(buf); err != syscall.EAGAIN {
		t.Fatalf("empty read: %v, want EAGAIN", err)
	}
	if ready, errno := in.Poll(experimentalsys.POLLIN, 0); ready || errno != 0 {
		t.Fatalf("poll empty: %v %v", ready, errno)
	}
	if ready, _ := in.Poll(experimentalsys.POLLIN, 20); ready {
		t.Fatal("poll with a timeout: ready")
	}
	if _, errno := in.Poll(experimentalsys.POLLOUT, 0); errno != experimentalsys.ENOTSUP {
		t.Fatalf("poll for writing: %v", errno)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		in.push([]byte("b\n"))
	}()
	if ready, _ := in.Poll(experimentalsys.POLLIN, -1); !ready {
		t.Fatal("poll: not ready after a push")
	}
	if n, _ := in.Read(buf); n != 2 {
		t.Fatalf("read after poll: %d", n)
	}
	go func() {
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	if ready, _ := in.Poll(experimentalsys.POLLIN, -1); !ready {
		t.Fatal("poll: not ready after the call ended")
	}
	if _, err := in.Read(buf); err != io.EOF {
		t.Fatalf("read after the call ended: %v", err)
	}
}

// TestInboxPollStalls: a guest waiting in Poll with every request left to
// the client's retry ends the call, as one waiting in Read does.
func TestInboxPollStalls(t *testing.T) {
	in := newInbox(context.Background(), nil)
	in.setNonblock()
	stalled := make(chan struct{})
	in.onStall = func() { close(stalled); in.close() }
	in.begin()
	done := make(chan bool)
	go func() {
		ready, _ := in.Poll(experimentalsys.POLLIN, -1)
		done <- ready
	}()
	time.Sleep(10 * time.Millisecond)
	in.deferred()
	select {
	case <-stalled:
	case <-time.After(10 * time.Second):
		t.Fatal("no stall")
	}
	if !<-done {
		t.Fatal("poll not ready after the stall")
	}
	if _, err := in.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read after the stall: %v", err)
	}
}
