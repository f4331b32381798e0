package logbatch

import (
	"io"
	"sync"
	"time"
)

// DefaultInterval is the longest a line waits in the buffer.
const DefaultInterval = 100 * time.Millisecond

// DefaultSize is the buffered size at which a batch is written at once.
const DefaultSize = 64 << 10

// Writer buffers whole lines for a destination writer. It is safe for
// concurrent use.
type Writer struct {
	dst      io.Writer
	interval time.Duration
	size     int

	wmu sync.Mutex // held while a batch is written: batches stay in order

	mu     sync.Mutex
	buf    []byte
	spare  []byte
	timer  *time.Timer
	armed  bool
	closed bool
	err    error // the destination's first error
}

// New returns a Writer for dst that writes a batch after interval (0:
// DefaultInterval) or once size bytes (0: DefaultSize) are buffered.
func New(dst io.Writer, interval time.Duration, size int) *Writer {
	if interval <= 0 {
		interval = DefaultInterval
	}
	if size <= 0 {
		size = DefaultSize
	}
	w := &Writer{dst: dst, interval: interval, size: size, buf: make([]byte, 0, size)}
	w.timer = time.AfterFunc(time.Hour, func() { _ = w.Flush() })
	w.timer.Stop()
	return w
}

// Write buffers p, which should be one or more whole lines. After Close
// it writes p through at once.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		w.wmu.Lock()
		defer w.wmu.Unlock()
		return w.dst.Write(p)
	}
	w.buf = append(w.buf, p...)
	full := len(w.buf) >= w.size
	if !full && !w.armed {
		w.armed = true
		w.timer.Reset(w.interval)
	}
	w.mu.Unlock()
	if full {
		if err := w.Flush(); err != nil {
			return len(p), err
		}
	}
	return len(p), nil
}

// Flush writes what is buffered now and returns the destination's first
// error so far.
func (w *Writer) Flush() error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	w.mu.Lock()
	b := w.buf
	w.buf, w.spare = w.spare[:0], nil
	if w.armed {
		w.armed = false
		w.timer.Stop()
	}
	w.mu.Unlock()
	if len(b) > 0 {
		if _, err := w.dst.Write(b); err != nil {
			w.mu.Lock()
			if w.err == nil {
				w.err = err
			}
			w.mu.Unlock()
		}
	}
	w.mu.Lock()
	if w.spare == nil && cap(b) <= 4*w.size {
		w.spare = b[:0]
	}
	err := w.err
	w.mu.Unlock()
	return err
}

// Close writes what is buffered; later Writes go straight through.
func (w *Writer) Close() error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	return w.Flush()
}
