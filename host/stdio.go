package host

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"syscall"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// inbox is the guest's stdin: the request line first, then the responses to
// the guest's own requests as they arrive. Reads block until data arrives,
// the inbox is closed (EOF), or the call's context ends (EOF). Pushes never
// block.
type inbox struct {
	ctx    context.Context
	mu     sync.Mutex
	buf    []byte
	closed bool
	ready  chan struct{} // signalled (non-blocking) when buf gains data or on close

	// Input-required tracking: busy counts the guest's requests the peer
	// is still serving, held those it left to the client's retry. When the
	// guest waits on an empty inbox with none busy and some held, nothing
	// can ever arrive: onStall ends the call (once).
	busy, held int
	waiting    bool
	stalled    bool
	onStall    func()

	// nonblock: the guest was told its stdin is non-blocking (an MCP
	// server's call, see stdinListener): an empty inbox reads as EAGAIN
	// and the guest waits in Poll.
	nonblock bool

	// guest, for a run at load, counts the guest's waits here as its own
	// time (guesttime.go); nil for a tools/call.
	guest *guestTime

	// Answers not yet read: total counts the bytes ever added, read
	// those the guest has read, and ends holds, in order, the offset
	// where each answer (answer) not yet wholly read ends. A request
	// stays outstanding for the guest until it has read its answer
	// (unreadAnswers), so a guest that floods requests without reading
	// meets the cap however fast they are answered, and the answers it
	// leaves unread stay bounded.
	total, read int64
	ends        []int64
}

func newInbox(ctx context.Context, first []byte) *inbox {
	return &inbox{ctx: ctx, buf: first, ready: make(chan struct{}, 1), total: int64(len(first))}
}

// unreadAnswers is the number of answers added that the guest has not yet
// read whole.
func (in *inbox) unreadAnswers() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.ends)
}

// consumed records n bytes read; called with in.mu held.
func (in *inbox) consumed(n int) {
	in.read += int64(n)
	k := 0
	for k < len(in.ends) && in.ends[k] <= in.read {
		k++
	}
	if k > 0 {
		in.ends = append(in.ends[:0], in.ends[k:]...)
	}
}

func (in *inbox) Read(p []byte) (int, error) {
	for {
		in.mu.Lock()
		in.waiting = false
		if len(in.buf) > 0 {
			n := copy(p, in.buf)
			in.buf = in.buf[n:]
			in.consumed(n)
			in.mu.Unlock()
			return n, nil
		}
		if in.closed {
			in.mu.Unlock()
			return 0, io.EOF
		}
		if in.busy == 0 && in.held > 0 {
			in.stall()
			return 0, io.EOF
		}
		if in.nonblock {
			in.mu.Unlock()
			if in.ctx.Err() != nil {
				return 0, io.EOF
			}
			return 0, syscall.EAGAIN
		}
		in.waiting = true
		in.mu.Unlock()
		waited := in.guest.wait()
		select {
		case <-in.ready:
			waited()
		case <-in.ctx.Done():
			waited()
			return 0, io.EOF
		}
	}
}

// stall ends a call whose guest waits for input only a retry can give;
// called with in.mu held, it releases it.
func (in *inbox) stall() {
	fire := !in.stalled
	in.stalled = true
	in.mu.Unlock()
	if fire && in.onStall != nil {
		in.onStall()
	}
}

// setNonblock switches the inbox to non-blocking reads.
func (in *inbox) setNonblock() {
	in.mu.Lock()
	in.nonblock = true
	in.mu.Unlock()
}

// Poll is stdin's poll_oneoff (wazero's sys.Pollable): it reports whether a
// read would not block — data, end of file, or the call's end — waiting
// up to timeoutMillis (forever when negative). A guest with non-blocking
// stdin waits here with all of its goroutines parked.
func (in *inbox) Poll(flag experimentalsys.Pflag, timeoutMillis int32) (bool, experimentalsys.Errno) {
	if flag != experimentalsys.POLLIN {
		return false, experimentalsys.ENOTSUP
	}
	var timeout <-chan time.Time
	if timeoutMillis > 0 {
		t := time.NewTimer(time.Duration(timeoutMillis) * time.Millisecond)
		defer t.Stop()
		timeout = t.C
	}
	for {
		in.mu.Lock()
		in.waiting = false
		if len(in.buf) > 0 || in.closed || in.ctx.Err() != nil {
			in.mu.Unlock()
			return true, 0
		}
		if in.busy == 0 && in.held > 0 {
			in.stall()
			return true, 0
		}
		if timeoutMillis == 0 {
			in.mu.Unlock()
			return false, 0
		}
		in.waiting = true
		in.mu.Unlock()
		waited := in.guest.wait()
		select {
		case <-in.ready:
			waited()
		case <-in.ctx.Done():
			waited()
		case <-timeout:
			waited()
			in.mu.Lock()
			in.waiting = false
			in.mu.Unlock()
			return false, 0
		}
	}
}

// begin counts a guest request handed to the peer.
func (in *inbox) begin() {
	in.mu.Lock()
	in.busy++
	in.mu.Unlock()
}

// answer delivers the answer to a request counted by begin.
func (in *inbox) answer(line []byte) {
	in.mu.Lock()
	if !in.closed {
		in.buf = append(in.buf, line...)
		in.total += int64(len(line))
		in.ends = append(in.ends, in.total)
	}
	in.busy--
	in.mu.Unlock()
	in.signal()
}

// deferred notes that a request counted by begin is left to the client's
// retry, and stalls the call if the guest already waits for nothing else.
func (in *inbox) deferred() {
	in.mu.Lock()
	in.busy--
	in.held++
	fire := in.waiting && len(in.buf) == 0 && !in.closed && in.busy == 0 && !in.stalled
	if fire {
		in.stalled = true
	}
	in.mu.Unlock()
	if fire && in.onStall != nil {
		in.onStall()
	}
}

func (in *inbox) push(line []byte) {
	in.mu.Lock()
	if !in.closed {
		in.buf = append(in.buf, line...)
		in.total += int64(len(line))
	}
	in.mu.Unlock()
	in.signal()
}

func (in *inbox) close() {
	in.mu.Lock()
	in.closed = true
	in.mu.Unlock()
	in.signal()
}

func (in *inbox) signal() {
	select {
	case in.ready <- struct{}{}:
	default:
	}
}

// lineWriter is the guest's stdout: it splits the stream into lines,
// enforces the output and line caps, and hands each line to the call.
type lineWriter struct {
	c   *call
	buf []byte // an incomplete line
}

func (w *lineWriter) Write(p []byte) (int, error) {
	if err := w.c.count(len(p)); err != nil {
		return 0, err
	}
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			if len(w.buf)+len(p) > w.c.limits.LineBytes {
				return 0, w.lineTooLong()
			}
			w.buf = append(w.buf, p...)
			break
		}
		line := p[:i]
		if len(w.buf) > 0 {
			if len(w.buf)+i > w.c.limits.LineBytes {
				return 0, w.lineTooLong()
			}
			w.buf = append(w.buf, line...)
			line = w.buf
		} else if i > w.c.limits.LineBytes {
			return 0, w.lineTooLong()
		}
		if err := w.c.handleLine(line); err != nil {
			return 0, err
		}
		w.buf = w.buf[:0]
		p = p[i+1:]
	}
	return n, nil
}

func (w *lineWriter) lineTooLong() error {
	return w.c.protocolErrorKind(KindLimit, "wrote a line longer than %s (limit line)", FormatBytes(int64(w.c.limits.LineBytes)))
}

// maxLogLine caps one logged stderr line.
const maxLogLine = 4096

// logWriter is the guest's stderr: each line goes to the host's log, tagged
// with the module and the call. For error messages it keeps the last line
// and the first line that reads as a fatal error (a runtime's crash report
// ends with a stack trace, whose last line says nothing).
type logWriter struct {
	c       *call
	discard bool
	buf     []byte
	last    string
	fatal   string
}

// fatalPrefixes start the lines runtimes print when they give up: Go
// ("fatal error: out of memory", "panic: …"), Rust ("thread 'main'
// panicked at …"), C and others ("error: …", "Error: …").
var fatalPrefixes = []string{"fatal error:", "panic:", "thread '", "error:", "Error:"}

func (w *logWriter) Write(p []byte) (int, error) {
	if err := w.c.count(len(p)); err != nil {
		return 0, err
	}
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			room := maxLogLine - len(w.buf)
			if room > 0 {
				w.buf = append(w.buf, p[:min(room, len(p))]...)
			}
			break
		}
		room := maxLogLine - len(w.buf)
		if room > 0 {
			w.buf = append(w.buf, p[:min(room, i)]...)
		}
		w.emit()
		p = p[i+1:]
	}
	return n, nil
}

func (w *logWriter) emit() {
	line := string(bytes.TrimRight(w.buf, "\r"))
	w.buf = w.buf[:0]
	if line == "" {
		return
	}
	w.c.mu.Lock()
	w.last = line
	if w.fatal == "" {
		for _, p := range fatalPrefixes {
			if strings.HasPrefix(line, p) {
				w.fatal = line
				break
			}
		}
	}
	w.c.mu.Unlock()
	if !w.discard {
		w.c.log.InfoContext(w.c.ctx, "guest stderr", "module", w.c.m.name, "call", w.c.id, "line", line)
	}
}

func (w *logWriter) flush() {
	if len(w.buf) > 0 {
		w.emit()
	}
}

// lastLine is the line that best explains a crash: the first fatal-error
// line, or else the last line.
func (w *logWriter) lastLine() string {
	w.c.mu.Lock()
	defer w.c.mu.Unlock()
	if w.fatal != "" {
		return shorten(w.fatal)
	}
	return shorten(w.last)
}
