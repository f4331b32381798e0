package abuse

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// attackTime is how long each attack lasts.
const attackTime = 3 * time.Second

// boundMiB is the bound on the server's peak RSS during an attack. The
// server starts at about 20 MiB serving the test guest and peaks under
// 40 MiB in every attack here; before the limits, the slow bodies alone
// took it past a GiB.
const boundMiB = 64

// dialMany opens n raw connections from ip to addr (fewer when refused at
// dial) and returns them.
func dialMany(t *testing.T, ip, addr string, n int) []net.Conn {
	t.Helper()
	d := from(ip)
	var out []net.Conn
	for range n {
		c, err := d.Dial("tcp", addr)
		if err != nil {
			continue
		}
		out = append(out, c)
	}
	return out
}

func closeAll(cs []net.Conn) {
	for _, c := range cs {
		c.Close()
	}
}

// TestSlowBodies: 300 connections declare a 4 MiB body and send it a
// byte at a time: half hold on past --read-timeout, half close after a few
// hundred milliseconds and come back, declaring a new body each time. The
// server reads bodies as they arrive (a declared length is no allocation)
// and drops the ones slower than --read-timeout.
func TestSlowBodies(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--read-timeout", "1s")
	var declared atomic.Int64
	run(t, s, boundMiB, func() {
		head := "POST /mcp HTTP/1.1\r\nHost: " + s.addr + "\r\nContent-Type: application/json\r\nAccept: application/json\r\nContent-Length: 4194304\r\n\r\n["
		end := time.Now().Add(attackTime)
		var wg sync.WaitGroup
		for i := range 300 {
			ip := []string{"127.0.0.2", "127.0.0.3"}[i%2]
			hold := i%2 == 0
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := from(ip)
				for time.Now().Before(end) {
					c, err := d.Dial("tcp", s.addr)
					if err != nil {
						time.Sleep(50 * time.Millisecond)
						continue
					}
					declared.Add(1)
					_ = c.SetWriteDeadline(end.Add(time.Second))
					_, err = io.WriteString(c, head)
					for n := 0; err == nil && time.Now().Before(end) && (hold || n < 2); n++ {
						time.Sleep(150 * time.Millisecond)
						_, err = c.Write([]byte(" "))
					}
					c.Close()
				}
			}()
		}
		wg.Wait()
	})
	t.Logf("the attacker declared %d bodies of 4 MiB (%.1f GiB)", declared.Load(), float64(declared.Load())*4/1024)
	s.logged(t, "body not received within the read timeout")
}

// sessionCap is the --max-sessions of TestSessionFlood.
const sessionCap = 1000

// TestSessionFlood: eight clients call initialize as fast as they can
// until they have opened three times --max-sessions
// (at most 8 s). The sessions stay under the cap, the idlest evicted
// first; the ordinary client's session, in use, survives.
func TestSessionFlood(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--max-sessions", fmt.Sprint(sessionCap))
	var made atomic.Int64
	var first string
	run(t, s, boundMiB, func() {
		var err error
		if first, err = initialize(clientFrom("127.0.0.2", 5*time.Second), s.url, "2025-11-25"); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := clientFrom("127.0.0.2", 5*time.Second)
				defer c.CloseIdleConnections()
				for ctx.Err() == nil && made.Load() < sessionCap*3 {
					st, _, _, err := post(c, s.url, nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`)
					if err == nil && st == 200 {
						made.Add(1)
					}
				}
			}()
		}
		wg.Wait()
	})
	t.Logf("the attacker opened %d sessions", made.Load())
	if made.Load() <= sessionCap {
		t.Fatalf("the flood made only %d sessions: it never reached the cap", made.Load())
	}
	// The attacker's first session, idle since, made room for the others.
	if st, _, body, err := post(clientFrom("127.0.0.2", 5*time.Second), s.url, map[string]string{"Mcp-Session-Id": first, "Accept": "application/json"},
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`); err != nil || st != 404 {
		t.Errorf("the idlest session still answers after the flood: %d %.200s %v", st, body, err)
	}
	s.logged(t, "session evicted")
}

// batchOf is a batch of n tools/call requests of the test guest.
func batchOf(n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"small_hello","arguments":{}}}`, i)
	}
	b.WriteByte(']')
	return b.String()
}

// TestBatchAbuse: batches of 40,000 tool calls (what fits in the default
// body) are refused whole; batches within --max-batch whose client leaves
// after 200 ms, or deletes the session, stop with it instead of running
// on.
func TestBatchAbuse(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	huge, small := batchOf(40_000), batchOf(100)
	run(t, s, boundMiB, func() {
		c := clientFrom("127.0.0.2", 10*time.Second)
		sid, err := initialize(c, s.url, "2025-03-26")
		if err != nil {
			t.Fatal(err)
		}
		hdr := map[string]string{"Mcp-Session-Id": sid, "Accept": "application/json"}
		if st, _, body, err := post(c, s.url, hdr, huge); err != nil || st != 400 || !strings.Contains(body, "-32600") {
			t.Errorf("a batch of 40,000: %d %.200s %v", st, body, err)
		}
		// Clients that leave: two sending the huge batch, six sending
		// batches within the cap.
		ctx, cancel := context.WithTimeout(context.Background(), attackTime-500*time.Millisecond)
		defer cancel()
		var wg sync.WaitGroup
		for i := range 8 {
			body := small
			if i < 2 {
				body = huge
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				leaver := clientFrom("127.0.0.2", 200*time.Millisecond)
				for ctx.Err() == nil {
					_, _, _, _ = post(leaver, s.url, hdr, body)
				}
			}()
		}
		wg.Wait()
		// Batches in flight, then DELETE: they end with the session.
		for _, body := range []string{huge, small, small, small} {
			go post(clientFrom("127.0.0.2", 10*time.Second), s.url, hdr, body)
		}
		time.Sleep(100 * time.Millisecond)
		req, _ := http.NewRequest(http.MethodDelete, s.url, nil)
		req.Header.Set("Mcp-Session-Id", sid)
		if resp, err := c.Do(req); err != nil || resp.StatusCode != 204 {
			t.Errorf("DELETE: %v %v", resp, err)
		} else {
			resp.Body.Close()
		}
	})
	s.logged(t, "batch refused")
}

// TestConnectionFlood: two attacking addresses open 300 connections each
// and hold them; each is capped at --max-conns-per-addr, under the total
// cap, so the ordinary client still connects.
func TestConnectionFlood(t *testing.T) {
	t.Parallel()
	s := startServer(t, "--max-conns", "600", "--max-conns-per-addr", "200")
	var held, refused int
	run(t, s, boundMiB, func() {
		var conns []net.Conn
		for _, ip := range []string{"127.0.0.2", "127.0.0.3"} {
			conns = append(conns, dialMany(t, ip, s.addr, 300)...)
		}
		defer closeAll(conns)
		// A refused connection ends at once; an accepted one waits for its
		// request.
		time.Sleep(500 * time.Millisecond)
		var mu sync.Mutex
		var wg sync.WaitGroup
		for _, c := range conns {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
				_, err := c.Read(make([]byte, 1))
				ne, ok := err.(net.Error)
				mu.Lock()
				if ok && ne.Timeout() {
					held++
				} else {
					refused++
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
		time.Sleep(attackTime - 800*time.Millisecond)
	})
	t.Logf("connections held %d, refused %d", held, refused)
	if held != 400 || refused != 200 {
		t.Errorf("held %d and refused %d connections, want 400 and 200", held, refused)
	}
	s.logged(t, "connection refused: the remote address is at its connection cap")
}

// TestHeaderFlood: 300 connections from one address send headers of 15 KiB
// a KiB at a time and hold them; 50 more send 40 KiB and get 431. Header
// memory is bounded by --max-header-bytes and the connection caps.
func TestHeaderFlood(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	var tooLarge atomic.Int64
	run(t, s, boundMiB, func() {
		conns := dialMany(t, "127.0.0.2", s.addr, 300)
		defer closeAll(conns)
		big := dialMany(t, "127.0.0.3", s.addr, 50)
		defer closeAll(big)
		line := "X-Pad: " + strings.Repeat("a", 1015) + "\r\n"
		for _, c := range append(conns, big...) {
			_ = c.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: "+s.addr+"\r\n")
		}
		var wg sync.WaitGroup
		for _, c := range big {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = c.SetDeadline(time.Now().Add(attackTime))
				for range 40 {
					if _, err := io.WriteString(c, line); err != nil {
						break
					}
				}
				if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
					resp.Body.Close()
					if resp.StatusCode == http.StatusRequestHeaderFieldsTooLarge {
						tooLarge.Add(1)
					}
				}
			}()
		}
		for range 15 {
			for _, c := range conns {
				_ = c.SetWriteDeadline(time.Now().Add(10 * time.Millisecond))
				_, _ = io.WriteString(c, line)
			}
			time.Sleep(attackTime / 16)
		}
		wg.Wait()
	})
	if tooLarge.Load() != 50 {
		t.Errorf("%d of 50 oversized header blocks got 431", tooLarge.Load())
	}
	s.logged(t, "connection refused: the remote address is at its connection cap")
}

// TestBadInput: a string id that is not UTF-8 gets -32600 in valid JSON;
// a browser origin (even localhost) is refused unless listed.
func TestBadInput(t *testing.T) {
	t.Parallel()
	s := startServer(t)
	c := clientFrom("127.0.0.1", 5*time.Second)
	st, _, body, err := post(c, s.url, nil, "{\"jsonrpc\":\"2.0\",\"id\":\"x\xff\",\"method\":\"initialize\",\"params\":{}}")
	if err != nil || st != 400 || !json.Valid([]byte(body)) || !strings.Contains(body, "-32600") {
		t.Errorf("invalid UTF-8 id: %d %q %v", st, body, err)
	}
	st, _, body, err = post(c, s.url, map[string]string{"Origin": "http://localhost:3000"}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
	if err != nil || st != 403 {
		t.Errorf("a localhost Origin: %d %q %v", st, body, err)
	}
}
