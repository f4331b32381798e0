// Package stdioserve runs `wasmcp serve --stdio` as a child process with
// one initialized session, for the benches that time a server's start and
// its lists (bench/manymodules, bench/manyscripts). A failure to talk to
// the server ends the bench (log.Fatal) with the server's stderr.
package stdioserve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server is a running `wasmcp serve --stdio` and its session.
type Server struct {
	// Cmd is the server's process.
	Cmd *exec.Cmd
	// Stderr is what the server wrote to its stderr so far.
	Stderr *SyncBuffer
	in     io.WriteCloser
	out    *bufio.Reader
	id     int
}

// Start starts bin with args (after "serve --stdio"), env added to this
// process's environment, its stderr also copied to log when not nil, and
// initializes a session.
func Start(bin string, args, env []string, logTo io.Writer) (*Server, error) {
	s := &Server{Stderr: &SyncBuffer{}}
	s.Cmd = exec.Command(bin, append([]string{"serve", "--stdio"}, args...)...)
	s.Cmd.Env = append(os.Environ(), env...)
	s.Cmd.Stderr = s.Stderr
	if logTo != nil {
		s.Cmd.Stderr = io.MultiWriter(s.Stderr, logTo)
	}
	var err error
	if s.in, err = s.Cmd.StdinPipe(); err != nil {
		return nil, err
	}
	out, err := s.Cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s.out = bufio.NewReaderSize(out, 1<<20)
	if err := s.Cmd.Start(); err != nil {
		return nil, err
	}
	s.Request("initialize", `{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}`)
	return s, nil
}

// Send writes a request and returns its id.
func (s *Server) Send(method, params string) int {
	s.id++
	fmt.Fprintf(s.in, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`+"\n", s.id, method, params)
	return s.id
}

// Recv returns the next response's id and line (notifications skipped).
func (s *Server) Recv() (int, string) {
	for {
		line := s.line()
		var m struct {
			ID     *int   `json:"id"`
			Method string `json:"method"`
		}
		if json.Unmarshal([]byte(line), &m) == nil && m.ID != nil && m.Method == "" {
			return *m.ID, line
		}
	}
}

// Request sends a request and returns its response's line.
func (s *Server) Request(method, params string) string {
	want := `"id":` + strconv.Itoa(s.Send(method, params)) + `,`
	for {
		if line := s.line(); strings.Contains(line, want) {
			return line
		}
	}
}

func (s *Server) line() string {
	line, err := s.out.ReadString('\n')
	if err != nil {
		log.Fatalf("reading the server: %v; stderr:\n%s", err, Tail(s.Stderr.String()))
	}
	return line
}

// ListAll walks every page of tools/list; it returns the tools and the
// pages.
func (s *Server) ListAll() (tools, pages int) {
	cursor := ""
	for {
		params := `{}`
		if cursor != "" {
			params = fmt.Sprintf(`{"cursor":%q}`, cursor)
		}
		var res struct {
			Result struct {
				Tools      []json.RawMessage `json:"tools"`
				NextCursor string            `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(s.Request("tools/list", params)), &res); err != nil {
			log.Fatalf("tools/list: %v", err)
		}
		tools += len(res.Result.Tools)
		pages++
		if cursor = res.Result.NextCursor; cursor == "" {
			return tools, pages
		}
	}
}

// CPUTime is the server's user and system CPU time so far (Linux; 0
// elsewhere): on a busy machine a better measure of the work a start does
// than its wall time.
func (s *Server) CPUTime() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.Cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name, which is in parentheses: utime and
	// stime are the 12th and 13th, in clock ticks (100 a second).
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(u+st) * 10 * time.Millisecond
}

// Close ends the session (stdin closed) and waits for the server, killing
// it after 10 s.
func (s *Server) Close() {
	s.in.Close()
	done := make(chan struct{})
	go func() { _ = s.Cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = s.Cmd.Process.Kill()
		<-done
	}
}

// SyncBuffer is a server's stderr, written by exec's copier and read by
// the bench.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Tail is the last 4 KiB of s.
func Tail(s string) string {
	if len(s) > 4096 {
		return "…" + s[len(s)-4096:]
	}
	return s
}
