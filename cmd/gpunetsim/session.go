package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpunetsim/gpunetsim/exp/report"
)

// session is what every command of one invocation shares: the output files
// it has reserved, removed on failure and on SIGINT/SIGTERM. Commands reach
// it through their context (sessionOf), so a new command gets interrupt
// cleanup and up-front output checks by calling reserve.
type session struct {
	stderr io.Writer

	mu          sync.Mutex
	outs        []*outFile
	interrupted bool
	// started is set once a command's own code runs: every error before
	// that (flags, arguments, unknown commands) is bad input.
	started bool
	sig     os.Signal // the interrupting signal, nil if none
	endOnce sync.Once

	// args and start are the command line and when it began, for the
	// provenance every output records.
	args  []string
	start time.Time
}

// ctxProvenance is the provenance of the session in ctx, or, without
// one, of a command line unknown that starts now.
func ctxProvenance(ctx context.Context) *report.Provenance {
	if ctx != nil {
		if s, ok := ctx.Value(sessionKey{}).(*session); ok {
			return s.provenance()
		}
	}
	return provenance(nil, time.Now())
}

// provenance is what every output of the session records about the
// program, the command line, the host and the wall time so far.
func (s *session) provenance() *report.Provenance {
	if s.start.IsZero() {
		return provenance(s.args, time.Now())
	}
	return provenance(s.args, s.start)
}

type sessionKey struct{}

// sessionOf returns the session of the command being run.
func sessionOf(cmd *cobra.Command) *session { return sessionFrom(cmd.Context()) }

// sessionFrom returns the session carried by a command's context.
func sessionFrom(ctx context.Context) *session {
	if s, ok := ctx.Value(sessionKey{}).(*session); ok {
		return s
	}
	panic("gpunetsim: command run without a session")
}

// interruptGrace is how long an interrupted command may take to return on
// its own (commands that watch their context stop between simulations)
// before the session removes its outputs and ends the process anyway.
const interruptGrace = 500 * time.Millisecond

// watchSignals handles SIGINT and SIGTERM, and SIGPIPE (standard output or
// error closed under it, as by `| head`): it cancels the command's context
// and, unless the command returns within interruptGrace (or at a second
// signal), ends the interrupt itself (see endInterrupt). Without the
// SIGPIPE handler Go ends the process on its first write to a closed
// standard output, leaving the reserved outputs' temporaries behind. The
// returned function stops watching.
func (s *session) watchSignals(cancel func(), exit func(int)) (stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGPIPE)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			s.mu.Lock()
			s.sig = sig
			s.mu.Unlock()
			cancel()
			select {
			case <-time.After(interruptGrace):
			case <-ch:
			case <-done:
				return // the command returned: withSession ends the interrupt
			}
			s.endInterrupt(exit)
		case <-done:
		}
	}()
	return func() { signal.Stop(ch); close(done) }
}

// signal returns the signal that interrupted the session, or nil.
func (s *session) signal() os.Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sig
}

// endInterrupt removes every unfinished output, prints "interrupted" and
// calls exit with 128 + the signal number, once.
func (s *session) endInterrupt(exit func(int)) {
	s.endOnce.Do(func() {
		n := s.interrupt()
		msg := "gpunetsim: interrupted"
		if n > 0 {
			msg += fmt.Sprintf("; removed %d unfinished output file(s)", n)
		}
		fmt.Fprintln(s.stderr, msg)
		code := exitInterrupted
		if sig, ok := s.signal().(syscall.Signal); ok {
			code += int(sig)
		}
		exit(code)
	})
}

// interrupt removes every reserved output not yet committed and refuses
// further commits; it returns how many files it removed.
func (s *session) interrupt() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.interrupted = true
	n := 0
	for _, o := range s.outs {
		if o.tmp != nil {
			o.tmp.Close()
			os.Remove(o.tmp.Name())
			o.tmp = nil
			n++
		}
	}
	return n
}

// discard removes every reserved output not yet committed (at the end of
// a command: after a failure, or outputs a successful run did not write).
func (s *session) discard() { s.interrupt() }

// outFile is an output file reserved before the work: its temporary file
// already exists next to the final path, so an unwritable path is found
// before anything runs, and the final file appears whole (by rename) or
// not at all.
type outFile struct {
	s    *session
	flag string // how the user named it, e.g. "--csv"
	path string
	tmp  *os.File // nil once committed or removed
}

// reserve checks that path can be written as the output named by flag and
// creates its temporary file. Its errors are bad input (exit code 2).
func (s *session) reserve(flag, path string) (*outFile, error) {
	if err := checkOutputPath(flag, path); err != nil {
		return nil, badInput(err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.outs {
		if sameFile(o.path, path) {
			return nil, badInput(fmt.Errorf("%s %s: the same file as %s", flag, path, o.flag))
		}
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp*")
	if err != nil {
		return nil, badInput(fmt.Errorf("%s %s: cannot write in %s: %w", flag, path, dir, unwrapPath(err)))
	}
	o := &outFile{s: s, flag: flag, path: path, tmp: tmp}
	s.outs = append(s.outs, o)
	return o, nil
}

// checkOutputPath rejects a path that names a directory or whose
// directory does not exist.
func checkOutputPath(flag, path string) error {
	if path == "" {
		return fmt.Errorf("%s: empty file name", flag)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s %s: is a directory, want a file name", flag, path)
	} else if err == nil && fi.Mode().Perm()&0o222 == 0 {
		// The rename that puts the output in place would replace a
		// read-only file silently (even for a user who could not write it).
		return fmt.Errorf("%s %s: the file is read-only; remove it or choose another name", flag, path)
	}
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("%s %s: directory %s does not exist", flag, path, dir)
	} else if fi.Mode().Perm()&0o222 == 0 {
		return fmt.Errorf("%s %s: directory %s is read-only", flag, path, dir)
	}
	return nil
}

// sameFile reports whether a and b name the same file (existing or not).
func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// unwrapPath drops the temporary file's name from a *fs.PathError.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// commit writes the file's content with write and renames it into place.
// A write error removes the temporary file and is a run failure (exit 1).
// The session's lock is held only to check and to rename, so an interrupt
// during a long write removes the temporary at once.
func (o *outFile) commit(write func(io.Writer) error) error {
	o.s.mu.Lock()
	tmp, interrupted := o.tmp, o.s.interrupted
	o.s.mu.Unlock()
	if interrupted {
		return errors.New("interrupted")
	}
	if tmp == nil {
		return fmt.Errorf("%s %s: already written or discarded", o.flag, o.path)
	}
	bw := bufio.NewWriterSize(tmp, 256<<10)
	err := tmp.Chmod(0o644)
	if err == nil {
		err = write(bw)
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	o.s.mu.Lock()
	defer o.s.mu.Unlock()
	if o.s.interrupted {
		return errors.New("interrupted")
	}
	o.tmp = nil
	if err == nil {
		err = os.Rename(tmp.Name(), o.path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", o.path, unwrapPath(err))
	}
	return nil
}

// withSession runs the root command with a fresh session in its context,
// watching SIGINT/SIGTERM, and removes reserved outputs that were not
// committed when the command ends.
func withSession(root *cobra.Command, stderr io.Writer, exit func(int), args ...string) (err error) {
	s := &session{stderr: stderr, args: args, start: time.Now()}
	ctx, cancel := context.WithCancel(context.WithValue(context.Background(), sessionKey{}, s))
	defer cancel()
	stop := s.watchSignals(cancel, exit)
	defer stop()
	defer func() {
		if r := recover(); r != nil {
			err = panicError(r)
		}
		if s.signal() != nil {
			s.endInterrupt(exit) // does not return, except in tests
			err = errInterrupted
		}
		s.discard() // outputs not committed by now are unfinished
		if err != nil && !s.started {
			if _, internal := asInternal(err); !internal {
				err = badInput(err)
			}
		}
	}()
	root.PersistentPreRun = func(*cobra.Command, []string) { s.started = true }
	return root.ExecuteContext(ctx)
}

// errInterrupted is what withSession returns after an interrupt when exit
// returns (in tests).
var errInterrupted = errors.New("interrupted")

// openInput opens an input file named on the command line; a missing,
// unreadable or directory path is bad input.
func openInput(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, badInput(fmt.Errorf("%s: %w", path, unwrapPath(err)))
	}
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		f.Close()
		return nil, badInput(fmt.Errorf("%s: is a directory, want a file", path))
	}
	return f, nil
}
