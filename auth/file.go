package auth

import (
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/wasmcp/wasmcp/internal/regfile"
)

// reloading holds what was parsed from a file and parses it again when the
// file's contents change (compared by SHA-256, so a rewrite in place that
// keeps the size and puts the mtime back counts, as an editor's or a
// deployment's rename does). The file is looked at, at most once per
// interval, by the request that needs its contents. A file that can no
// longer be read or no longer parses fails closed: get returns an error,
// and every credential is refused, until the file is read and parses again
// (looked at once per interval whether it changed or not), so a revocation
// that breaks the file never leaves the revoked credential valid.
type reloading[T any] struct {
	path     string
	parse    func([]byte) (T, error)
	interval time.Duration
	log      *slog.Logger
	onReload func()

	mu      sync.Mutex
	cur     T
	info    os.FileInfo
	sum     [32]byte // SHA-256 of the contents cur was parsed from
	checked time.Time
	err     error // why the file cannot be used now; nil when cur is current
}

// errFileUnusable is what a request gets while the credentials file
// cannot be read or does not parse: 503, since the client is not at fault.
var errFileUnusable = &Error{Status: http.StatusServiceUnavailable,
	Description: "the server's credentials file cannot be used; every credential is refused until an operator fixes it"}

func newReloading[T any](path string, interval time.Duration, log *slog.Logger, parse func([]byte) (T, error)) (*reloading[T], error) {
	if interval <= 0 {
		interval = time.Second
	}
	if log == nil {
		log = slog.Default()
	}
	f := &reloading[T]{path: path, parse: parse, interval: interval, log: log}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	b, err := readCredentials(path)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	v, err := parse(b)
	if err != nil {
		return nil, fmt.Errorf("auth: %s: %w", path, err)
	}
	f.cur, f.info, f.sum, f.checked = v, info, sha256.Sum256(b), time.Now()
	return f, nil
}

// get returns the current contents, reloading them first when the file
// changed (or could not be used) and interval has passed since the last
// look. It returns errFileUnusable, wrapping the reason, while the file
// cannot be read or does not parse.
func (f *reloading[T]) get() (T, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	if now.Sub(f.checked) < f.interval {
		return f.cur, f.err
	}
	f.checked = now
	info, err := os.Stat(f.path)
	if err != nil {
		return f.fail("auth: cannot stat the credentials file; refusing every credential until it can be read", err)
	}
	b, err := readCredentials(f.path)
	if err != nil {
		return f.fail("auth: cannot read the credentials file; refusing every credential until it can be read", err)
	}
	// The contents decide, not the stat: a rewrite in place of the same
	// size with its mtime put back (cp -p, rsync --inplace -t, a coarse
	// mtime) is a change too. The file is small and read once per
	// interval at most.
	sum := sha256.Sum256(b)
	if f.err == nil && sum == f.sum {
		f.info = info
		return f.cur, nil
	}
	v, err := f.parse(b)
	if err != nil {
		return f.fail("auth: the credentials file does not parse; refusing every credential until it is fixed", err)
	}
	recovered := f.err != nil
	f.cur, f.info, f.sum, f.err = v, info, sum, nil
	if f.onReload != nil {
		f.onReload()
	}
	if recovered {
		f.log.Warn("auth: the credentials file is usable again; credentials are accepted", "file", f.path)
	} else {
		f.log.Info("auth: credentials file reloaded", "file", f.path)
	}
	return f.cur, nil
}

// fail records why the file cannot be used and drops what it held: the
// previous contents are not used again.
func (f *reloading[T]) fail(msg string, err error) (T, error) {
	var zero T
	f.cur = zero
	if f.onReload != nil {
		f.onReload()
	}
	f.log.Error(msg, "file", f.path, "err", err)
	f.err = &Error{Status: errFileUnusable.Status, Description: errFileUnusable.Description, cause: fmt.Errorf("%s: %w", f.path, err)}
	return zero, f.err
}

// maxCredentialsFileBytes bounds a credentials file.
const maxCredentialsFileBytes = 64 << 20

// readCredentials reads a credentials file (internal/regfile): opened
// without blocking (a FIFO put in its place must not hold the request that
// looks, and every request behind it), refused unless it is a regular
// file, and at most maxCredentialsFileBytes (a link to an endless device
// must not be read without end).
func readCredentials(path string) ([]byte, error) {
	return regfile.Read(path, maxCredentialsFileBytes)
}
