package host

import (
	"sync"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/tetratelabs/wazero"
)

// callIO is a module config for one code's instances with the stdio and
// nanosleep it names, reused from call to call (compiled.ios): wazero's
// ModuleConfig copies itself, a struct and a map, on every With…, and
// naming a call's own stdin, stdout, stderr and sleep took four copies
// per call. The config names these forwarders instead, which point at the
// call running on them for the time of its instance; a callIO goes back
// to the pool only after that instance is closed, so no two calls share
// one. A module with mounts builds its config per call (its FSConfig is
// per call), as before.
type callIO struct {
	base wazero.ModuleConfig // the config cfg was made from
	cfg  wazero.ModuleConfig
	c    *call
}

// ioStdin, ioStdout and ioStderr forward to the current call's streams.
type (
	ioStdin  struct{ io *callIO }
	ioStdout struct{ io *callIO }
	ioStderr struct{ io *callIO }
)

func (s ioStdin) Read(p []byte) (int, error) { return s.io.c.stdin.Read(p) }

// Poll is the call's stdin's poll_oneoff: the forwarder must be Pollable
// as the inbox is, or wazero would take stdin for always ready.
func (s ioStdin) Poll(flag experimentalsys.Pflag, timeoutMillis int32) (bool, experimentalsys.Errno) {
	return s.io.c.stdin.Poll(flag, timeoutMillis)
}

func (s ioStdout) Write(p []byte) (int, error) { return s.io.c.stdout.Write(p) }
func (s ioStderr) Write(p []byte) (int, error) { return s.io.c.stderr.Write(p) }

// callIOs is compiled's pool of callIO.
type callIOs struct{ pool sync.Pool }

// get is a callIO made from base, pointed at c.
func (p *callIOs) get(base wazero.ModuleConfig, c *call) *callIO {
	io, _ := p.pool.Get().(*callIO)
	if io == nil || io.base != base {
		io = &callIO{base: base}
		io.cfg = base.WithStdin(ioStdin{io}).WithStdout(ioStdout{io}).WithStderr(ioStderr{io}).
			WithNanosleep(func(ns int64) { io.c.sleep(ns) })
	}
	io.c = c
	return io
}

// put returns io once its call's instance is closed.
func (p *callIOs) put(io *callIO) {
	io.c = nil
	p.pool.Put(io)
}
