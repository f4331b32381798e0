package regfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is a name that reaches something other than a regular
// file: a directory, a FIFO, a socket, a device.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is a file over the cap its reader gave.
var ErrTooLarge = errors.New("larger than allowed")

// flags open a file for reading without waiting on a FIFO's writer.
const flags = os.O_RDONLY | syscall.O_NONBLOCK

// Read reads the regular file at path, at most max bytes.
func Read(path string, max int64) ([]byte, error) {
	f, info, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, info, max)
}

// ReadIn reads the regular file name inside root, at most max bytes.
func ReadIn(root *os.Root, name string, max int64) ([]byte, error) {
	f, info, err := OpenIn(root, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadAll(f, info, max)
}

// Open opens path for reading without blocking and returns it with what
// fstat says of it; what is not a regular file is closed and refused.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, flags, 0)
	if err != nil {
		return nil, nil, err
	}
	return checked(f, path)
}

// OpenIn is Open of the name inside root.
func OpenIn(root *os.Root, name string) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(name, flags, 0)
	if err != nil {
		return nil, nil, err
	}
	return checked(f, name)
}

func checked(f *os.File, name string) (*os.File, fs.FileInfo, error) {
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		f.Close()
		return nil, nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w (%s)", ErrNotRegular, kind(info.Mode()))}
	}
	return f, info, nil
}

// kind names a file mode's type.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.Type().String()
}

// ReadAll reads f, opened by Open or OpenIn with its info, whole: at most
// max bytes, refused with ErrTooLarge when its size says more or when it
// holds more (it grew while read).
func ReadAll(f *os.File, info fs.FileInfo, max int64) ([]byte, error) {
	if info.Size() > max {
		return nil, tooLarge(f.Name(), max)
	}
	var buf bytes.Buffer
	buf.Grow(int(info.Size()) + bytes.MinRead) // one allocation when the size holds
	if _, err := buf.ReadFrom(io.LimitReader(f, max+1)); err != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	if int64(buf.Len()) > max {
		return nil, tooLarge(f.Name(), max)
	}
	return buf.Bytes(), nil
}

func tooLarge(name string, max int64) error {
	return fmt.Errorf("%s: %w: at most %d bytes", name, ErrTooLarge, max)
}
