// Command writer is a guest for the host's write-budget tests: it writes
// to, and grows, files in its mounts, and reports what the host let it do.
// Built with the build tag reactor (reactor.go) it is a reactor that asks
// for a snapshot and, at start-up, writes WRITER_STARTUP bytes to
// /data/startup.
package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	guest "github.com/wasmcp/wasmcp/guest-sdk/go"
)

type writeIn struct {
	Path  string `json:"path"`
	N     int    `json:"n"`               // bytes to write
	Chunk int    `json:"chunk,omitempty"` // bytes per write
	Grow  int64  `json:"grow,omitempty"`  // then truncate the file to this size, if set
	Fail  bool   `json:"fail,omitempty"`  // exit 1 on the first failed write
}

func newServer() *guest.Server {
	s := guest.New("writer", "1.0.0")
	guest.AddTool(s, guest.Tool{Name: "write", Description: "Writes n bytes to path in chunks; reports how many it wrote."},
		func(c *guest.Context, in writeIn) (string, error) {
			f, err := os.OpenFile(in.Path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
			if err != nil {
				return "", err
			}
			defer f.Close()
			if in.Chunk <= 0 {
				in.Chunk = 1 << 20
			}
			buf := make([]byte, in.Chunk)
			done := 0
			for done < in.N {
				k := min(in.Chunk, in.N-done)
				n, err := f.Write(buf[:k])
				done += n
				if err != nil {
					if in.Fail {
						fmt.Fprintln(os.Stderr, "write failed:", err)
						os.Exit(1)
					}
					return fmt.Sprintf("wrote %d then %v", done, err), nil
				}
			}
			if in.Grow > 0 {
				if err := f.Truncate(in.Grow); err != nil {
					return fmt.Sprintf("wrote %d; truncate to %d: %v", done, in.Grow, err), nil
				}
			}
			return fmt.Sprintf("wrote %d", done), nil
		})
	addCreate(s)
	addOps(s)
	return s
}

type createIn struct {
	Dir  string `json:"dir"`
	N    int    `json:"n"`              // entries to create
	Kind string `json:"kind,omitempty"` // "file" (default), "dir" or "symlink"
}

func init() {
	addCreate = func(s *guest.Server) {
		guest.AddTool(s, guest.Tool{Name: "create", Description: "Creates n empty entries in dir; reports how many it created."},
			func(c *guest.Context, in createIn) (string, error) {
				for i := 0; i < in.N; i++ {
					p := fmt.Sprintf("%s/e%d", in.Dir, i)
					var err error
					switch in.Kind {
					case "dir":
						err = os.Mkdir(p, 0o755)
					case "symlink":
						err = os.Symlink("target", p)
					default:
						var f *os.File
						if f, err = os.Create(p); err == nil {
							f.Close()
						}
					}
					if err != nil {
						return fmt.Sprintf("created %d then %v", i, err), nil
					}
				}
				return fmt.Sprintf("created %d", in.N), nil
			})
	}
}

// addCreate adds the create tool (set by init, so newServer stays one
// function).
var addCreate func(*guest.Server)

// fsOp is one step of the ops tool: open (path, as handle h), write n
// bytes at the handle's position, pwrite n bytes at off, truncate to off,
// close, remove, rename (path to to), link (path to to), mkdir.
type fsOp struct {
	Op   string `json:"op"`
	Path string `json:"path,omitempty"`
	To   string `json:"to,omitempty"`
	H    int    `json:"h,omitempty"`
	Off  int64  `json:"off,omitempty"`
	N    int    `json:"n,omitempty"`
}

type opsIn struct {
	Ops []fsOp `json:"ops"`
}

func init() {
	addOps = func(s *guest.Server) {
		guest.AddTool(s, guest.Tool{Name: "ops", Description: "Runs file-system steps; reports each one's outcome, one a line."},
			func(c *guest.Context, in opsIn) (string, error) {
				files := map[int]*os.File{}
				defer func() {
					for _, f := range files {
						f.Close()
					}
				}()
				out := ""
				for _, o := range in.Ops {
					var err error
					f := files[o.H]
					switch o.Op {
					case "open":
						f, err = os.OpenFile(o.Path, os.O_RDWR|os.O_CREATE, 0o644)
						if err == nil {
							files[o.H] = f
						}
					case "write":
						_, err = f.Write(make([]byte, o.N))
					case "pwrite":
						_, err = f.WriteAt(make([]byte, o.N), o.Off)
					case "truncate":
						err = f.Truncate(o.Off)
					case "close":
						err = f.Close()
						delete(files, o.H)
					case "remove":
						err = os.Remove(o.Path)
					case "rename":
						err = os.Rename(o.Path, o.To)
					case "link":
						err = os.Link(o.Path, o.To)
					case "mkdir":
						err = os.Mkdir(o.Path, 0o755)
					default:
						err = fmt.Errorf("unknown op %q", o.Op)
					}
					if errors.Is(err, syscall.ENOSPC) {
						out += o.Op + ": ENOSPC\n"
					} else if err != nil {
						out += o.Op + ": " + err.Error() + "\n"
					} else {
						out += o.Op + ": ok\n"
					}
				}
				return out, nil
			})
	}
}

// addOps adds the ops tool (set by init, so newServer stays one
// function).
var addOps func(*guest.Server)
