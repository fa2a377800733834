package exp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// MaxInputBytes bounds an input file read whole into memory (a
// configuration, a study file, an ML workload table): real ones are a few
// kilobytes, so 4 MiB leaves room for generated ones while a huge file or
// a stream is refused at once instead of filling the memory.
const MaxInputBytes = 4 << 20

// ReadInputFile reads a small input file whole, at most limit bytes: a
// larger file, or a stream that goes on (/dev/zero, /dev/urandom), is
// refused once limit bytes are read instead of filling the memory. A pipe
// or a named pipe is refused, as is a directory or a socket: the inputs
// read here (a routing or ML table, a study file) are read again by each
// point or task, and a pipe gives its text once (ReadInputOrStdin reads
// an input read once, a pipe included). A leading UTF-8 byte-order mark
// is dropped. Errors name path and say what is allowed.
func ReadInputFile(path string, limit int64) ([]byte, error) {
	if path == "-" {
		// The Unix name of standard input, which reads once: an input
		// read here is read again by each point of a run (a routing
		// table, an ML table), so "-" is refused rather than opened as
		// a file of that name (ReadInputOrStdin reads it where a
		// command reads its input once).
		return nil, errors.New("-: standard input cannot be this input (each point reads it again): give a file name (./- for a file named -)")
	}
	return readInputFile(path, limit, false)
}

// readInputFile reads path whole, at most limit bytes. once says the
// caller reads it once: a pipe or FIFO is then read like a file, and a
// FIFO's open waits for its writer as cat's does (an interrupt ends the
// wait); otherwise a pipe is refused. Anything else is opened
// non-blocking (a device never hangs the open).
func readInputFile(path string, limit int64, once bool) ([]byte, error) {
	flag := os.O_RDONLY | syscall.O_NONBLOCK
	if fi, err := os.Stat(path); err == nil && fi.Mode()&fs.ModeNamedPipe != 0 {
		if !once {
			return nil, fmt.Errorf("%s: is a pipe, and this input is read again by each point or task: give a file", path)
		}
		// Non-blocking, a FIFO without a writer yet read as empty at
		// once: a configuration of nothing, the defaults run silently.
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := checkInput(path, fi, limit); err != nil {
		return nil, err
	}
	return readInput(f, path, limit)
}

// ReadInputOrStdin is ReadInputFile, reading stdin when path is "-" (the
// Unix convention for standard input), so that a command's input flag
// takes a configuration from a pipe; the caller reads it once.
func ReadInputOrStdin(path string, stdin io.Reader, limit int64) ([]byte, error) {
	if path != "-" {
		return readInputFile(path, limit, true)
	}
	if stdin == nil {
		return nil, errors.New("-: standard input is not available here: give a file")
	}
	return readInput(stdin, "- (standard input)", limit)
}

// readInput reads r whole, at most limit bytes, without a leading
// byte-order mark.
func readInput(r io.Reader, path string, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, tooLarge(path, limit)
	}
	// A file saved as "UTF-8 with BOM" (Windows editors, a spreadsheet's
	// CSV UTF-8) starts with U+FEFF, which TOML read as a key's first
	// character: the byte-order mark is not part of the text.
	return bytes.TrimPrefix(b, []byte("\ufeff")), nil
}

// checkInput refuses a directory, a socket, or a regular file over limit.
func checkInput(path string, fi fs.FileInfo, limit int64) error {
	switch m := fi.Mode(); {
	case m.IsDir():
		return fmt.Errorf("%s: is a directory, want a file", path)
	case m&fs.ModeSocket != 0:
		return fmt.Errorf("%s: is a socket, want a file", path)
	case m.IsRegular() && fi.Size() > limit:
		return tooLarge(path, limit)
	}
	return nil
}

// tooLarge is the error of an input over limit bytes.
func tooLarge(path string, limit int64) error {
	return fmt.Errorf("%s: %w: an input file may hold at most %s", path, ErrInputTooLarge, FormatBytes(float64(limit)))
}

// ErrInputTooLarge reports an input file over its size limit.
var ErrInputTooLarge = errors.New("too large")
