package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// opener opens a stream output for writing and returns how to close it.
type opener func() (w io.Writer, closeFn func() error, err error)

// streamOutput returns how to open the output path names when it is a
// stream, written in place rather than replaced by a rename: "-" and the
// names of standard output and error (/dev/stdout, /dev/fd/1,
// /proc/self/fd/2, or a symbolic link to one) write to the command's own
// standard output or error, so `--json /dev/stdout > f` appends the JSON
// to the text report in f, as the shell's redirection promises, instead
// of renaming a new file over f; a character device (/dev/null) or a pipe
// (a named pipe, /dev/fd/3 of `3>&1 | ...`) is opened for writing when
// the output is committed. It returns nil for a path that is to be a
// regular file (reserve's temporary and rename: /dev/fd/3 of `3>f` is
// f), and an error for a stream that cannot be written.
func (s *session) streamOutput(flag, path string) (opener, error) {
	if path == "-" {
		return s.descriptor(flag, path, 1)
	}
	p := path
	for range maxLinks {
		if fd, ok := descriptorPath(p); ok && fd <= 2 {
			return s.descriptor(flag, path, fd)
		}
		li, err := os.Lstat(p)
		if err != nil || li.Mode()&fs.ModeSymlink == 0 {
			break
		}
		target, err := os.Readlink(p)
		if err != nil || !filepath.IsAbs(target) && strings.ContainsRune(target, ':') {
			break // a descriptor's "pipe:[N]": Stat below follows it
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = target
	}
	fi, err := os.Stat(path) // follows every link, a descriptor's too
	if err != nil {
		if fd, ok := descriptorPath(p); ok {
			return nil, fmt.Errorf("%s %s: descriptor %d is not open: open it in the shell (%d>file) or choose a file name", flag, path, fd, fd)
		}
		return nil, nil // a new file, or a link checkOutputPath names
	}
	return deviceOutput(flag, path, fi)
}

// descriptorPath reports whether path names an open descriptor of this
// process, and which.
func descriptorPath(path string) (int, bool) {
	p := filepath.Clean(path)
	switch p {
	case "/dev/stdin":
		return 0, true
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/"} {
		if n, ok := strings.CutPrefix(p, dir); ok {
			if fd, err := strconv.Atoi(n); err == nil && fd >= 0 {
				return fd, true
			}
		}
	}
	return 0, false
}

// descriptor is the opener of an output on standard output (fd 1) or
// error (2), the command's own writers; standard input is bad input.
func (s *session) descriptor(flag, path string, fd int) (opener, error) {
	noClose := func() error { return nil }
	switch fd {
	case 1:
		return func() (io.Writer, func() error, error) { return s.out(), noClose, nil }, nil
	case 2:
		return func() (io.Writer, func() error, error) { return s.stderr, noClose, nil }, nil
	}
	return nil, fmt.Errorf("%s %s: standard input is no output: choose a file name or - (standard output)", flag, path)
}

// out is the command's standard output.
func (s *session) out() io.Writer {
	if s.stdout != nil {
		return s.stdout
	}
	return os.Stdout
}

// deviceOutput is the opener of the output path names when the file it
// names (fi, after every link) is a character device or a pipe: opened
// for writing, never truncated or replaced. A regular file or a directory
// is left to checkOutputPath (nil); a block device or a socket is bad
// input.
func deviceOutput(flag, path string, fi fs.FileInfo) (opener, error) {
	m := fi.Mode()
	switch {
	case m.IsRegular(), m.IsDir():
		return nil, nil
	case m&fs.ModeCharDevice != 0, m&fs.ModeNamedPipe != 0:
	default:
		return nil, fmt.Errorf("%s %s: %s; outputs are files, standard output (-), character devices or pipes", flag, path, fileKind(m))
	}
	if m.Perm()&0o222 == 0 {
		return nil, fmt.Errorf("%s %s: %s that is read-only", flag, path, fileKind(m))
	}
	return func() (io.Writer, func() error, error) {
		// A named pipe's open waits for its reader, as a shell's does.
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, nil, err
		}
		return f, f.Close, nil
	}, nil
}

// openStream is a stream output opened for writing (commitAll).
type openStream struct {
	o       *outFile
	w       io.Writer
	closeFn func() error
}

// openStream opens a stream output that is still to be written.
func (o *outFile) openStream() (*openStream, error) {
	o.s.mu.Lock()
	pending, interrupted := o.pending, o.s.interrupted
	o.pending = false
	o.s.mu.Unlock()
	if interrupted {
		return nil, errors.New("interrupted")
	}
	if !pending {
		return nil, fmt.Errorf("%s %s: already written or discarded", o.flag, o.path)
	}
	w, closeFn, err := o.open()
	if err != nil {
		return nil, fmt.Errorf("writing %s: %w", o.path, unwrapPath(err))
	}
	return &openStream{o: o, w: w, closeFn: closeFn}, nil
}

// close closes a stream that will not be written.
func (st *openStream) close() { st.closeFn() }

// write writes a stream output's content and closes it: a stream is not
// replaced, so what a failed write left in it cannot be taken back.
func (st *openStream) write(write func(io.Writer) error) error {
	bw := bufio.NewWriterSize(st.w, 256<<10)
	err := write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := st.closeFn(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", st.o.path, unwrapPath(err))
	}
	return nil
}
