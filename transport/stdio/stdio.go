// Package stdio serves MCP over a byte stream pair — the process's stdin
// and stdout — with newline-delimited JSON-RPC messages, several requests in
// flight at once, admitted per module.
package stdio

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/wasmcp/wasmcp/protocol"
)

// Options configure Serve.
type Options struct {
	// Workers is the number of requests of one module (and of the
	// requests the host answers itself) served at once; 0 means 16.
	// Each module has its own admission, so a module whose calls are slow
	// or many never delays another's.
	Workers int
	// Queue is the number of requests of one module waiting for one of
	// its workers; past it a request for that module is refused at once
	// with -32603, and only that module's. 0 means 64.
	Queue int
	// MaxMessage caps one incoming line; 0 means DefaultMaxMessage. A
	// longer line is answered -32600 with its id when the id can be read
	// from the line's start or end.
	MaxMessage int
	// MaxBatch caps the elements of one JSON-RPC batch; larger batches
	// are refused with -32600. 0 means 100.
	MaxBatch int
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Principal is the client's principal (the local user); it owns the
	// session and its tasks. "" means none.
	Principal string
}

// DefaultMaxMessage is the default cap on one incoming line: the same as
// the HTTP transport's default body cap.
const DefaultMaxMessage = 4 << 20

// Serve reads messages from in and writes answers to out until in ends or
// ctx is done. Requests still running when in ends are finished first;
// when ctx is done they are canceled.
func Serve(ctx context.Context, srv *protocol.Server, in io.Reader, out io.Writer, opts Options) error {
	if opts.Workers <= 0 {
		opts.Workers = 16
	}
	if opts.Queue <= 0 {
		opts.Queue = 64
	}
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = DefaultMaxMessage
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 100
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	c := &conn{
		srv:       srv,
		w:         &writer{w: bufio.NewWriter(out)},
		sess:      protocol.NewSession(),
		log:       opts.Logger,
		maxBatch:  opts.MaxBatch,
		workers:   opts.Workers,
		queueCap:  opts.Queue,
		lanes:     map[string]*lane{},
		principal: opts.Principal,
	}
	c.sess.Principal = opts.Principal
	defer c.sess.Close()
	remove := srv.AddListener(&protocol.Listener{
		Session: c.sess, Tools: true, Prompts: true, Resources: true,
		Send: func(msg []byte) { _ = c.w.Send(context.Background(), msg) },
	})
	defer remove()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.ctx = ctx
	err := c.read(ctx, in, opts.MaxMessage)
	// The client is gone: no answer to a request sent to it can arrive,
	// so those requests fail now (their calls finish instead of waiting
	// for their deadline), and subscriptions/listen requests, which never
	// finish by themselves, end; Serve returns once the other requests
	// are done.
	c.sess.EndInput()
	if ctx.Err() != nil {
		c.sess.Close()
	}
	c.wg.Wait()
	return err
}

type conn struct {
	srv      *protocol.Server
	w        *writer
	sess     *protocol.Session
	log      *slog.Logger
	maxBatch int
	// principal is the client's principal (Options.Principal).
	principal string
	ctx       context.Context // the requests' context

	// Admission: one lane per module (by protocol.Server.ModuleOf; ""
	// for what the host answers itself), each with at most workers
	// requests running and queueCap waiting.
	workers, queueCap int
	mu                sync.Mutex
	lanes             map[string]*lane
	loadWaiting       int            // requests waiting for the initial load (awaitLoad); under mu
	wg                sync.WaitGroup // running requests
}

// lane is one module's admission: how many of its requests run, and those
// waiting, in arrival order.
type lane struct {
	running int
	pending []job
}

// job is a request or a batch waiting for a worker.
type job struct {
	msg   *protocol.Message
	batch []byte
	// loadWaited: the request already waited for the initial load.
	loadWaited bool
}

// read is the reader loop: it answers what can be answered at once and
// queues requests for the workers.
func (c *conn) read(ctx context.Context, in io.Reader, max int) error {
	r := bufio.NewReaderSize(in, 64<<10)
	lines := make(chan []byte)
	errc := make(chan error, 1)
	go func() {
		defer close(lines)
		for {
			line, err := readLine(r, max)
			var long *tooLong
			if errors.As(err, &long) {
				c.log.Warn("message refused: longer than the cap", "max_message", max)
				c.write(protocol.ErrorResponse(long.id(), &protocol.Error{Code: protocol.CodeInvalidRequest,
					Message: fmt.Sprintf("Invalid request: message longer than %d bytes (--max-body)", max)}))
				if long.err != nil {
					if !errors.Is(long.err, io.EOF) {
						errc <- long.err
					}
					return
				}
				continue
			}
			if len(line) > 0 {
				select {
				case lines <- line:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				if !errors.Is(err, io.EOF) {
					errc <- err
				}
				return
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case line, ok := <-lines:
			if !ok {
				select {
				case err := <-errc:
					return err
				default:
					return nil
				}
			}
			c.dispatch(ctx, line)
		}
	}
}

// tooLong is a line over the cap, discarded but for its first and last
// bytes, which may hold its id; err is the read error that ended it.
type tooLong struct {
	head, tail []byte
	err        error
}

func (e *tooLong) Error() string { return "line too long" }

// keepEnds is how much of each end of an oversized line is kept to find
// its id.
const keepEnds = 4 << 10

// id is the oversized message's id when it can be read: an "id" member of
// the top-level object in the kept head, or the last member of the line
// (`"id":7}` at its very end); nil otherwise.
func (e *tooLong) id() []byte {
	if id := headID(e.head); id != nil {
		return id
	}
	return tailID(bytes.TrimSpace(e.tail))
}

// readLine reads one line (without its newline) of at most max bytes. An
// oversized line is discarded up to its newline; the error is a *tooLong.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		frag, err := r.ReadSlice('\n')
		if len(line)+len(frag) > max+1 {
			long := &tooLong{head: append(line, frag...)}
			if len(long.head) > keepEnds {
				long.head = long.head[:keepEnds:keepEnds]
			}
			long.tail = keepTail(long.tail, frag)
			for errors.Is(err, bufio.ErrBufferFull) {
				frag, err = r.ReadSlice('\n')
				long.tail = keepTail(long.tail, frag)
			}
			if err != nil {
				long.err = err
			}
			return nil, long
		}
		line = append(line, frag...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSpace(line), err
	}
}

// dispatch classifies one line: batches, responses, notifications and
// initialize are handled in order on the reader; other requests go to the
// worker pool.
func (c *conn) dispatch(ctx context.Context, line []byte) {
	if protocol.IsBatch(line) {
		c.queue("", job{batch: line}, nil)
		return
	}
	msg, id, perr := protocol.Decode(line)
	if perr != nil {
		c.write(protocol.ErrorResponse(id, perr))
		return
	}
	if !msg.IsRequest() || msg.Method == "initialize" {
		c.respond(c.srv.Handle(ctx, c.sess, msg, c.w, protocol.Hint{Principal: c.principal}))
		return
	}
	key := c.srv.ModuleOf(msg)
	if key == "" && c.srv.AwaitsLoad(msg) {
		c.awaitLoad(msg)
		return
	}
	c.queue(key, job{msg: msg}, msg.ID)
}

// maxLoadWaiting bounds the requests of one connection waiting for the
// server's initial load (protocol.Server.AwaitsLoad); past it a request is
// refused as overloaded.
const maxLoadWaiting = 1024

// awaitLoad holds a request that waits for the server's initial load on a
// goroutine of its own, then admits it to the lane of the module that
// serves it (known by then), so it holds no lane while it waits.
func (c *conn) awaitLoad(msg *protocol.Message) {
	c.mu.Lock()
	if c.loadWaiting >= maxLoadWaiting {
		c.mu.Unlock()
		c.write(protocol.ErrorResponse(msg.ID, &protocol.Error{Code: protocol.CodeInternalError,
			Message: "Server overloaded: too many requests waiting for the modules to load"}))
		return
	}
	c.loadWaiting++
	c.wg.Add(1)
	c.mu.Unlock()
	go func() {
		defer c.wg.Done()
		c.srv.AwaitLoad(c.ctx, msg)
		c.mu.Lock()
		c.loadWaiting--
		c.mu.Unlock()
		c.queue(c.srv.ModuleOf(msg), job{msg: msg, loadWaited: true}, msg.ID)
	}()
}

// queue admits a job to its module's lane: it starts at once when the lane
// has a free worker, waits when the lane's queue has room, and is refused
// otherwise.
func (c *conn) queue(key string, j job, id []byte) {
	c.mu.Lock()
	l := c.lanes[key]
	if l == nil {
		l = &lane{}
		c.lanes[key] = l
	}
	switch {
	case l.running < c.workers:
		l.running++
		c.wg.Add(1)
		c.mu.Unlock()
		go c.run(key, l, j)
	case len(l.pending) < c.queueCap:
		l.pending = append(l.pending, j)
		c.mu.Unlock()
	default:
		c.mu.Unlock()
		msg := "Server overloaded: too many requests in flight"
		if key != "" {
			msg += " for module " + key
		}
		c.write(protocol.ErrorResponse(id, &protocol.Error{Code: protocol.CodeInternalError, Message: msg}))
	}
}

// run serves j, then the lane's waiting jobs in order, and leaves the lane
// when none waits (dropping a lane that is idle).
func (c *conn) run(key string, l *lane, j job) {
	defer c.wg.Done()
	for {
		if j.batch != nil {
			c.serveBatch(c.ctx, j.batch)
		} else {
			c.respond(c.srv.Handle(c.ctx, c.sess, j.msg, c.w, protocol.Hint{Principal: c.principal, LoadWaited: j.loadWaited}))
		}
		c.mu.Lock()
		if len(l.pending) == 0 {
			l.running--
			if l.running == 0 {
				delete(c.lanes, key)
			}
			c.mu.Unlock()
			return
		}
		j = l.pending[0]
		l.pending[0] = job{}
		l.pending = l.pending[1:]
		c.mu.Unlock()
	}
}

// serveBatch answers a JSON-RPC batch, which only 2025-03-26 and earlier
// allow.
func (c *conn) serveBatch(ctx context.Context, line []byte) {
	if v := c.sess.Version(); !protocol.BatchAllowed(v) {
		c.write(protocol.ErrorResponse(nil, &protocol.Error{Code: protocol.CodeInvalidRequest,
			Message: "Invalid request: batches are not supported by protocol revision " + v}))
		return
	}
	elems, perr := protocol.SplitBatch(line)
	if perr != nil {
		c.write(protocol.ErrorResponse(nil, perr))
		return
	}
	if len(elems) > c.maxBatch {
		c.log.Warn("batch refused: more elements than the cap", "elements", len(elems), "max_batch", c.maxBatch)
		c.write(protocol.ErrorResponse(nil, &protocol.Error{Code: protocol.CodeInvalidRequest,
			Message: fmt.Sprintf("Invalid request: a batch may hold at most %d messages", c.maxBatch)}))
		return
	}
	if out := c.srv.HandleBatch(ctx, c.sess, elems, c.w, protocol.Hint{Principal: c.principal}); out != nil {
		c.write(out)
	}
}

func (c *conn) respond(r protocol.Response) {
	if r.Body != nil {
		c.write(r.Body)
	}
}

func (c *conn) write(msg []byte) {
	if err := c.w.Send(context.Background(), msg); err != nil {
		c.log.Warn("stdio write failed", "err", err)
	}
}

// writer serialises messages onto the output, one per line. It is the
// Stream of every request: notifications and requests to the client go out
// on the same pipe as responses.
type writer struct {
	mu sync.Mutex
	w  *bufio.Writer
}

// Send writes one message and a newline, and flushes.
func (w *writer) Send(_ context.Context, msg []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.w.Write(msg); err != nil {
		return err
	}
	if err := w.w.WriteByte('\n'); err != nil {
		return err
	}
	return w.w.Flush()
}

// keepTail appends frag to the kept tail, keeping its last keepEnds bytes.
func keepTail(tail, frag []byte) []byte {
	if len(frag) >= keepEnds {
		return append(tail[:0], frag[len(frag)-keepEnds:]...)
	}
	tail = append(tail, frag...)
	if len(tail) > keepEnds {
		tail = append(tail[:0], tail[len(tail)-keepEnds:]...)
	}
	return tail
}

// headID finds the "id" member of the top-level object at the start of a
// truncated JSON text: it walks the members at depth one, skipping nested
// values and strings, until the id or the end of what was kept.
func headID(b []byte) []byte {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil
	}
	depth := 0
	key := true // at depth 1, the next string is a member name
	for ; i < len(b); i++ {
		switch c := b[i]; c {
		case '{', '[':
			depth++
			key = depth == 1 && c == '{'
		case '}', ']':
			depth--
		case ',':
			key = depth == 1
		case ':':
			key = false
		case '"':
			end := stringEnd(b, i)
			if end < 0 {
				return nil
			}
			if depth == 1 && key && string(b[i:end]) == `"id"` {
				j := skipWS(b, end)
				if j < len(b) && b[j] == ':' {
					return scalarID(b[skipWS(b, j+1):])
				}
				return nil
			}
			i = end - 1
		}
	}
	return nil
}

// tailID reads `"id": <scalar> }` at the very end of a line.
func tailID(b []byte) []byte {
	if len(b) == 0 || b[len(b)-1] != '}' {
		return nil
	}
	b = bytes.TrimSpace(b[:len(b)-1])
	colon := bytes.LastIndexByte(b, ':')
	if colon < 0 {
		return nil
	}
	id := scalarID(bytes.TrimSpace(b[colon+1:]))
	if id == nil || len(id) != len(bytes.TrimSpace(b[colon+1:])) {
		return nil
	}
	name := bytes.TrimSpace(b[:colon])
	if !bytes.HasSuffix(name, []byte(`"id"`)) {
		return nil
	}
	before := bytes.TrimSpace(name[:len(name)-4])
	if len(before) == 0 || before[len(before)-1] != ',' {
		return nil
	}
	return id
}

// scalarID returns the JSON string or integer at the start of b (a valid
// JSON-RPC id), or nil.
func scalarID(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	if b[0] == '"' {
		end := stringEnd(b, 0)
		if end < 0 {
			return nil
		}
		return b[:end:end]
	}
	j := 0
	if b[0] == '-' {
		j++
	}
	start := j
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	if j == start || j < len(b) && (b[j] == '.' || b[j] == 'e' || b[j] == 'E') {
		return nil // not an integer
	}
	return b[:j:j]
}

// stringEnd returns the index after the JSON string starting at b[i]
// (a quote), or -1 when it does not end within b.
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
