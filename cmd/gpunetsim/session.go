package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gpunetsim/gpunetsim/exp"
	"github.com/gpunetsim/gpunetsim/exp/report"
	"github.com/gpunetsim/gpunetsim/exp/study"
)

// session is what every command of one invocation shares: the input files
// it reads, the output files it has reserved (removed on failure and on
// SIGINT/SIGTERM), the output directories it created (removed again while
// empty) and what to do on an interrupt. Commands reach it through their
// context (sessionOf), so a new command gets interrupt cleanup and up-front
// output checks by calling input and reserve.
type session struct {
	stderr io.Writer
	stdout io.Writer // standard output, for an output named "-" (nil: os.Stdout)

	mu          sync.Mutex
	ins         []inFile
	outs        []*outFile
	dirs        []string        // directories this session created, parents first
	notes       []func() string // run on an interrupt; their text joins the message
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

// endInterrupt runs the commands' interrupt notes, removes every
// unfinished output, prints "interrupted" (with the notes) and calls exit
// with 128 + the signal number, once.
func (s *session) endInterrupt(exit func(int)) {
	s.endOnce.Do(func() {
		s.mu.Lock()
		notes := append([]func() string(nil), s.notes...)
		s.mu.Unlock()
		msg := "gpunetsim: interrupted"
		for _, note := range notes {
			if n := note(); n != "" {
				msg += ": " + n
			}
		}
		if n := s.interrupt(); n > 0 {
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

// onInterrupt adds note to what an interrupt does before it removes the
// unfinished outputs: note releases what the command holds (a cache's
// temporary entries) and returns a few words for the "interrupted" line
// (or "").
func (s *session) onInterrupt(note func() string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notes = append(s.notes, note)
}

// interrupt removes every reserved output not yet committed, and the
// directories this session created if they are empty, and refuses further
// commits; it returns how many files it removed.
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
	s.removeEmptyDirs()
	return n
}

// removeEmptyDirs removes the directories this session created that hold
// nothing, deepest first (a directory that holds files stays).
func (s *session) removeEmptyDirs() {
	for i := len(s.dirs) - 1; i >= 0; i-- {
		os.Remove(s.dirs[i]) // fails, harmlessly, when the directory holds files
	}
}

// discard removes every reserved output not yet committed (at the end of
// a command: after a failure, or outputs a successful run did not write),
// and the directories the session created that stayed empty.
func (s *session) discard() { s.interrupt() }

// inFile is an input file of the command: no output may be the same file.
type inFile struct {
	flag, path string
	id         fileID
}

// fileID identifies a file for comparisons: by device and inode when it
// exists (so a hard link, a symbolic link or another spelling of the path
// is the same file), else by its absolute path with the directory's
// symbolic links resolved.
type fileID struct {
	fi   os.FileInfo // nil when the file does not exist
	path string
}

// identify returns path's identity now.
func identify(path string) fileID {
	id := fileID{path: canonicalPath(path)}
	if fi, err := os.Stat(path); err == nil {
		id.fi = fi
	}
	return id
}

// canonicalPath is path made absolute, with its directory's symbolic
// links resolved where they resolve.
func canonicalPath(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	dir, base := filepath.Split(abs)
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		dir = d
	}
	return filepath.Join(dir, base)
}

// same reports whether a and b are the same file.
func (a fileID) same(b fileID) bool {
	if a.fi != nil && b.fi != nil {
		return os.SameFile(a.fi, b.fi)
	}
	return a.path == b.path
}

// input registers path, named by flag (e.g. "--config"), as a file the
// command reads: an output that is the same file is bad input, whether it
// was reserved before or is reserved after. "" and "-" (standard input)
// are no files.
func (s *session) input(flag, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	in := inFile{flag: flag, path: path, id: identify(path)}
	if out, err := os.Stdout.Stat(); err == nil && out.Mode().IsRegular() && in.id.fi != nil && os.SameFile(out, in.id.fi) {
		// gpunetsim config --config c.toml > c.toml: the shell has
		// emptied the input already; at least say so instead of
		// writing defaults over it.
		what := flag + " " + path
		return badInput(fmt.Errorf("standard output is the same file as %s, an input (a shell's > empties it before gpunetsim starts): redirect to another file", what))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.outs {
		if o.open == nil && o.id.same(in.id) {
			return badInput(sameAsInput(o.flag, o.path, in))
		}
	}
	s.ins = append(s.ins, in)
	return nil
}

// sameAsInput is the error of an output that would overwrite an input.
func sameAsInput(flag, path string, in inFile) error {
	what := in.flag + " " + in.path
	if in.flag == "" {
		what = in.path
	}
	return fmt.Errorf("%s %s: the same file as %s, an input; writing it would destroy the input: choose another name", flag, path, what)
}

// outFile is an output file reserved before the work: its temporary file
// already exists next to the final path, so an unwritable path is found
// before anything runs, and the final file appears whole (by rename) or
// not at all.
type outFile struct {
	s     *session
	flag  string // how the user named it, e.g. "--csv"
	path  string // as the user named it
	final string // the file renamed into place: path, or the file a symbolic link at path names
	id    fileID
	tmp   *os.File // nil once committed or removed
	// open, for an output that is written in place rather than replaced
	// (a stream: standard output, /dev/fd/N, a character device, a named
	// pipe), opens it when the output is committed; tmp stays nil and
	// pending says whether it is still to be written.
	open    opener
	pending bool
	// stale are the table files of a --csv main file that its old
	// sidecar listed (reserveCSVFiles): once the new files are in place,
	// those the new run did not write are removed (commitAll), so no
	// table of an earlier run lies beside the new ones as theirs.
	stale []string
}

// reserve checks that path can be written as the output named by flag,
// that it is no input and no other output of the command, and creates its
// temporary file. Its errors are bad input (exit code 2).
func (s *session) reserve(flag, path string) (*outFile, error) {
	return s.reserveOut(flag, path, true)
}

// reserveFile is reserve of an output that must be a regular file (a CSV
// output's sidecar and table files, named after it): a stream there is
// refused as not a regular file.
func (s *session) reserveFile(flag, path string) (*outFile, error) {
	return s.reserveOut(flag, path, false)
}

// reserveOut is reserve, taking streams (streamOutput) where streams is
// set.
func (s *session) reserveOut(flag, path string, streams bool) (*outFile, error) {
	if !streams {
		// checkOutputPath refuses a stream.
	} else if open, err := s.streamOutput(flag, path); err != nil {
		return nil, badInput(err)
	} else if open != nil {
		o := &outFile{s: s, flag: flag, path: path, final: path, open: open, pending: true}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.outs = append(s.outs, o)
		return o, nil
	}
	final, err := checkOutputPath(flag, path)
	if err != nil {
		return nil, badInput(err)
	}
	id := identify(final)
	if out, err := os.Stdout.Stat(); err == nil && out.Mode().IsRegular() && id.fi != nil && os.SameFile(out, id.fi) {
		// --csv o.csv > o.csv: the rename would put the output over the
		// file the text report goes to, which then goes to the old,
		// unlinked file: both lost without a word.
		return nil, badInput(fmt.Errorf("%s %s: the same file as standard output, which the run writes too: redirect standard output to another file, or name the output - to have it there", flag, path))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, in := range s.ins {
		if in.id.same(id) {
			return nil, badInput(sameAsInput(flag, path, in))
		}
	}
	for _, o := range s.outs {
		if o.open == nil && o.id.same(id) {
			return nil, badInput(fmt.Errorf("%s %s: the same file as %s", flag, path, o.flag))
		}
	}
	dir, base := filepath.Split(final)
	if dir == "" {
		dir = "."
	}
	tmp, err := report.CreateOutputTemp(dir, base) // removes a killed run's temporaries of base
	if err != nil {
		return nil, badInput(fmt.Errorf("%s %s: cannot write in %s: %w", flag, path, dir, unwrapPath(err)))
	}
	o := &outFile{s: s, flag: flag, path: path, final: final, id: id, tmp: tmp}
	s.outs = append(s.outs, o)
	return o, nil
}

// reserveCSVFiles reserves what report.CSVFiles writes beside the CSV
// output main: the sidecar now (its name is known before the run) and,
// for the files of the further tables, named after tables only the run
// makes, the checks reserve makes on any name they may take (main's stem,
// a table slug, .csv): no input and no other output of the command may
// have such a name, and an existing file with one must be a writable
// regular file that is no input or output. So a collision is bad input
// before any work, not a failure after it. Call it after the command's
// other outputs are reserved.
func (s *session) reserveCSVFiles(main *outFile) (sidecar *outFile, err error) {
	if main.open != nil {
		// The CSV output is several files named after main's, which a
		// stream has no name for; "-" was a file named "-".
		return nil, badInput(fmt.Errorf("%s %s: a CSV output is several files (the main table, %s and one file per further table), which standard output or another stream cannot hold: give a file name (--json - writes the whole result to standard output)", main.flag, main.path, report.CSVSidecar("FILE")))
	}
	dir := filepath.Dir(canonicalPath(main.path))
	mainPath := filepath.Join(dir, filepath.Base(main.path))
	family := func(p string) bool { return report.IsCSVTableFile(mainPath, p) }
	tables := main.flag + " " + main.path + " (" + strings.TrimSuffix(report.CSVSidecar(main.path), ".meta.json") + ".TABLE.csv)"
	s.mu.Lock()
	for _, in := range s.ins {
		if family(in.id.path) {
			s.mu.Unlock()
			return nil, badInput(fmt.Errorf("%s %s: an input named like a table file of %s, which the run may overwrite: choose another %s name", in.flag, in.path, tables, main.flag))
		}
	}
	for _, o := range s.outs {
		if o != main && o.open == nil && (family(o.id.path) || family(canonicalPath(o.path))) {
			s.mu.Unlock()
			return nil, badInput(fmt.Errorf("%s %s: named like a table file of %s: choose other names", o.flag, o.path, tables))
		}
	}
	s.mu.Unlock()
	main.stale = listedTables(main.path)
	entries, _ := os.ReadDir(dir) // an unreadable directory: reserve found it writable; the end's reserve checks again
	for _, de := range entries {
		p := filepath.Join(dir, de.Name())
		if !family(p) {
			continue
		}
		shown := filepath.Join(filepath.Dir(main.path), de.Name()) // as the user named the directory
		final, err := checkOutputPath(main.flag+" table file", shown)
		if err != nil {
			return nil, badInput(err)
		}
		id := identify(final)
		s.mu.Lock()
		for _, in := range s.ins {
			if in.id.same(id) {
				s.mu.Unlock()
				return nil, badInput(sameAsInput(main.flag+" table file", shown, in))
			}
		}
		for _, o := range s.outs {
			if o.open == nil && o.id.same(id) {
				s.mu.Unlock()
				return nil, badInput(fmt.Errorf("%s table file %s: the same file as %s %s", main.flag, shown, o.flag, o.path))
			}
		}
		s.mu.Unlock()
	}
	return s.reserveFile(main.flag, report.CSVSidecar(main.path))
}

// checkOutputPath rejects a path that names a directory, a device, a pipe
// or anything else but a regular file (the rename that puts the output in
// place would replace /dev/null with a regular file), a read-only file, or
// whose directory does not exist or cannot be written. A symbolic link is
// followed: the output replaces the file it names. It returns the path of
// the file to replace.
func checkOutputPath(flag, path string) (final string, err error) {
	if path == "" {
		return "", fmt.Errorf("%s: empty file name", flag)
	}
	final, err = followLinks(path)
	if err != nil {
		return "", fmt.Errorf("%s %s: a symbolic link that cannot be followed (%w); remove it or choose another name", flag, path, unwrapPath(err))
	}
	if fi, err := os.Stat(final); err == nil {
		switch {
		case fi.IsDir():
			return "", fmt.Errorf("%s %s: is a directory, want a file name", flag, path)
		case !fi.Mode().IsRegular():
			return "", fmt.Errorf("%s %s: not a regular file (%s); outputs are regular files: choose a file name", flag, path, fileKind(fi.Mode()))
		case fi.Mode().Perm()&0o222 == 0:
			// The rename that puts the output in place would replace a
			// read-only file silently (even for a user who could not write it).
			return "", fmt.Errorf("%s %s: the file is read-only; remove it or choose another name", flag, path)
		}
	}
	dir := filepath.Dir(final)
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return "", fmt.Errorf("%s %s: directory %s does not exist", flag, path, dir)
	case !fi.IsDir():
		// A file where the directory should be: saying the directory
		// does not exist sent the user looking for a missing one.
		return "", fmt.Errorf("%s %s: %s is not a directory", flag, path, dir)
	case fi.Mode().Perm()&0o222 == 0:
		return "", fmt.Errorf("%s %s: directory %s is read-only", flag, path, dir)
	}
	return final, nil
}

// maxLinks bounds the symbolic links followed from an output path (as
// the kernel's ELOOP limit does).
const maxLinks = 40

// followLinks returns the file a path names after its symbolic links, as
// opening it for writing would create or replace it: the target of a
// dangling link is the file to create.
func followLinks(path string) (string, error) {
	for range maxLinks {
		li, err := os.Lstat(path)
		if err != nil || li.Mode()&fs.ModeSymlink == 0 {
			return path, nil
		}
		target, err := os.Readlink(path)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(path), target)
		}
		path = target
	}
	return "", syscall.ELOOP
}

// fileKind names a file type that is not a regular file.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "a special file"
}

// unwrapPath drops the temporary file's name from a *fs.PathError.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// pending is an output with the function that writes its content.
type pending struct {
	out   *outFile
	write func(io.Writer) error
}

// commit writes the file's content with write and renames it into place
// (commitAll of one file).
func (o *outFile) commit(write func(io.Writer) error) error {
	return o.s.commitAll([]pending{{o, write}})
}

// commitAll puts a run's outputs in place together or not at all: it
// fills every temporary file first, and only when all are written renames
// them over their final paths, under the session's lock (an interrupt
// waits for the renames). A write error removes every temporary and leaves
// every final path as it was: a failed run never leaves a new CSV beside
// an old JSON. Should a rename fail part way, the files already renamed
// are put back from hard-linked copies of what they replaced. Errors are
// run failures (exit 1).
func (s *session) commitAll(list []pending) error {
	var streams []pending
	list = slices.DeleteFunc(slices.Clone(list), func(p pending) bool {
		if p.out.open != nil {
			streams = append(streams, p)
			return true
		}
		return false
	})
	// The streams are opened first (a named pipe's open waits for its
	// reader; an interrupt then finds no file renamed yet) and written
	// last, once every file is in place.
	var open []*openStream
	closeAll := func() {
		for _, o := range open {
			o.close()
		}
		for _, p := range streams {
			p.out.drop()
		}
	}
	for _, p := range streams {
		o, err := p.out.openStream()
		if err != nil {
			closeAll()
			for _, q := range list {
				q.out.drop()
			}
			return err
		}
		open = append(open, o)
	}
	if err := s.commitFiles(list); err != nil {
		closeAll()
		return err
	}
	for i, p := range streams {
		if err := open[i].write(p.write); err != nil {
			for _, o := range open[i+1:] {
				o.close()
			}
			return err
		}
	}
	return nil
}

// commitFiles is commitAll of regular files (no streams).
func (s *session) commitFiles(list []pending) error {
	if len(list) == 0 {
		return nil
	}
	for _, p := range list {
		if err := p.out.fill(p.write); err != nil {
			for _, q := range list {
				q.out.drop()
			}
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.interrupted {
		return errors.New("interrupted")
	}
	type step struct {
		o       *outFile
		backup  string // a hard link to the file the rename replaced, "" if none
		existed bool
	}
	var done []step
	undo := func() {
		for i := len(done) - 1; i >= 0; i-- {
			d := done[i]
			switch {
			case d.backup != "":
				os.Rename(d.backup, d.o.final)
			case !d.existed:
				os.Remove(d.o.final)
			}
		}
		for _, p := range list {
			if p.out.tmp != nil {
				os.Remove(p.out.tmp.Name())
				p.out.tmp = nil
			}
		}
	}
	for _, p := range list {
		o := p.out
		if o.tmp == nil {
			undo()
			return fmt.Errorf("%s %s: already written or discarded", o.flag, o.path)
		}
		st := step{o: o}
		if _, err := os.Lstat(o.final); err == nil {
			st.existed = true
			if b := o.tmp.Name() + ".old"; os.Link(o.final, b) == nil {
				st.backup = b
			}
		}
		if err := os.Rename(o.tmp.Name(), o.final); err != nil {
			if st.backup != "" {
				os.Remove(st.backup)
			}
			undo()
			return fmt.Errorf("writing %s: %w", o.path, unwrapPath(err))
		}
		o.tmp = nil
		done = append(done, st)
	}
	for _, d := range done {
		if d.backup != "" {
			os.Remove(d.backup)
		}
	}
	removeStale(list)
	return nil
}

// removeStale removes the stale table files of the committed outputs
// (outFile.stale) that none of them replaced.
func removeStale(list []pending) {
	written := map[string]bool{}
	for _, p := range list {
		written[canonicalPath(p.out.path)] = true
	}
	for _, p := range list {
		for _, f := range p.out.stale {
			if !written[canonicalPath(f)] {
				os.Remove(f)
			}
		}
	}
}

// listedTables returns the table files (named like main's, report.
// IsCSVTableFile) that the sidecar of --csv file main lists, as paths
// beside main: the files an earlier run wrote for the same name. A
// missing, unreadable or foreign sidecar lists none.
func listedTables(main string) []string {
	b, err := exp.ReadInputFile(report.CSVSidecar(main), exp.MaxInputBytes)
	if err != nil {
		return nil
	}
	var meta struct {
		Tables []struct {
			File string `json:"file"`
		} `json:"tables"`
	}
	if json.Unmarshal(b, &meta) != nil {
		return nil
	}
	var out []string
	for _, t := range meta.Tables {
		f := filepath.Join(filepath.Dir(main), filepath.Base(t.File))
		if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() && report.IsCSVTableFile(main, f) {
			out = append(out, f)
		}
	}
	return out
}

// fill writes the temporary file's content and closes it; the file stays
// reserved (o.tmp) until commitAll renames or drops it. The session's lock
// is not held while writing, so an interrupt during a long write removes
// the temporary at once.
func (o *outFile) fill(write func(io.Writer) error) error {
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
	err := tmp.Chmod(report.OutputPerm(o.final))
	if err == nil {
		err = write(bw)
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", o.path, unwrapPath(err))
	}
	return nil
}

// drop removes the temporary file of an output that will not be written.
func (o *outFile) drop() {
	o.s.mu.Lock()
	defer o.s.mu.Unlock()
	o.pending = false
	if o.tmp != nil {
		o.tmp.Close()
		os.Remove(o.tmp.Name())
		o.tmp = nil
	}
}

// outDir makes dir, named by flag, ready to take output files: an existing
// directory must be writable; a missing one is created (with its missing
// parents), and the session removes what it created again if it is still
// empty when the command ends or is interrupted, so a failed or
// interrupted command leaves no empty directory behind. Errors are bad
// input.
func (s *session) outDir(flag, dir string) error {
	missing, err := checkOutDir(flag, dir)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			s.removeEmptyDirs()
			return badInput(fmt.Errorf("%s %s: %w", flag, dir, unwrapPath(err)))
		}
		s.dirs = append(s.dirs, missing[i])
	}
	probe, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		s.removeEmptyDirs()
		return badInput(fmt.Errorf("%s %s: not writable: %w", flag, dir, unwrapPath(err)))
	}
	probe.Close()
	os.Remove(probe.Name())
	return nil
}

// checkOutDir finds, without creating anything, what makes dir unfit
// for output files (outDir), and returns the directories to create,
// deepest first. It is cheap, so a study checks its --out with it before
// planning its points (today's planning takes a minute).
func checkOutDir(flag, dir string) (missing []string, err error) {
	if dir == "" {
		return nil, badInput(fmt.Errorf("%s: empty directory name", flag))
	}
	if dir == "-" {
		// "-" names standard output elsewhere (--json -, report --out -);
		// a directory of files cannot be a stream, and a directory
		// named "-" is not what the Unix convention asks for.
		return nil, badInput(fmt.Errorf("%s -: a directory of output files, which standard output cannot hold: give a directory name (./- for one named -)", flag))
	}
	if ro := study.ReadOnlyDir(dir); ro != "" {
		return nil, badInput(fmt.Errorf("%s %s: directory %s is read-only", flag, dir, ro))
	}
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err == nil {
			if !fi.IsDir() {
				return nil, badInput(fmt.Errorf("%s %s: %s is not a directory", flag, dir, d))
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, badInput(fmt.Errorf("%s %s: %w", flag, dir, unwrapPath(err)))
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	return missing, nil
}

// missingDirs returns dir and those of its parents that do not exist,
// deepest first: what making dir with its parents creates.
func missingDirs(dir string) (missing []string) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); !errors.Is(err, fs.ErrNotExist) {
			return missing
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			return missing
		}
	}
}

// createdDirs records the directories the command created (a new result
// cache and its new parents: missingDirs taken before it was made), to be
// removed again, deepest first, if they are empty at the end (recording
// the cache alone left its new parents behind).
func (s *session) createdDirs(missing []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(missing) - 1; i >= 0; i-- {
		s.dirs = append(s.dirs, missing[i])
	}
}

// withSession runs the root command with a fresh session in its context,
// watching SIGINT/SIGTERM, and removes reserved outputs that were not
// committed when the command ends.
func withSession(root *cobra.Command, stderr io.Writer, exit func(int), args ...string) (err error) {
	s := &session{stderr: stderr, stdout: root.OutOrStdout(), args: args, start: time.Now()}
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
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		s.started = true
		if err := givenTwice(cmd, s.args); err != nil {
			return badInput(err)
		}
		if err := givenEmpty(cmd); err != nil {
			return badInput(err)
		}
		if err := s.inputFlags(cmd); err != nil {
			return err
		}
		return readConfigFlag(cmd)
	}
	return root.ExecuteContext(ctx)
}

// givenEmpty refuses a string flag given with an empty value (--csv ""
// or --csv "$OUT" with OUT unset): the commands read "" as "not given",
// so such a run wrote no file and still exited 0. --cache is left to the
// commands, which name it with --fresh (checkCacheFlags).
func givenEmpty(cmd *cobra.Command) error {
	var err error
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if err == nil && f.Name != "cache" && f.Value.Type() == "string" && f.Value.String() == "" {
			err = fmt.Errorf("--%s: empty value: give one, or leave --%s out", f.Name, f.Name)
		}
	})
	return err
}

// givenTwice refuses a flag of one value given twice with different
// values in args (cmd's command line): the flag package keeps the last
// silently, so --csv a.csv --csv b.csv wrote b.csv alone. Repeatable
// flags (--set, --sweep, lists) take every value.
func givenTwice(cmd *cobra.Command, args []string) error {
	fs := cmd.Flags()
	seen := map[string]string{}
	note := func(f *pflag.Flag, v string) error {
		if f == nil {
			return nil
		}
		if _, list := f.Value.(pflag.SliceValue); list {
			return nil
		}
		if prev, ok := seen[f.Name]; ok && prev != v {
			return fmt.Errorf("--%s given twice (%s, then %s): give it once", f.Name, prev, v)
		}
		seen[f.Name] = v
		return nil
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return nil
		case strings.HasPrefix(a, "--"):
			name, v, eq := strings.Cut(a[2:], "=")
			f := fs.Lookup(name)
			if f != nil && !eq {
				if f.NoOptDefVal != "" {
					v = f.NoOptDefVal
				} else if i+1 < len(args) {
					i++
					v = args[i]
				}
			}
			if err := note(f, v); err != nil {
				return err
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// Shorthands: -q, -qv, -L 1us, -L1us.
			for j := 1; j < len(a); j++ {
				f := fs.ShorthandLookup(a[j : j+1])
				if f == nil {
					break
				}
				v := f.NoOptDefVal
				if v == "" {
					v = strings.TrimPrefix(a[j+1:], "=")
					if v == "" && i+1 < len(args) {
						i++
						v = args[i]
					}
					if err := note(f, v); err != nil {
						return err
					}
					break
				}
				if err := note(f, v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// inputFileFlags are the flags that name an input file, whatever the
// command: each given one is registered (session.input) before the command
// runs, so that no output of any command, present or future, replaces it.
// The result cache is a directory the command reads: an output file of its
// name ran every point and then failed to take its place.
var inputFileFlags = []string{"config", "file", "cache"}

// inputFlags registers cmd's input-file flags that were given, and the
// running executable (an output over it would replace the program).
func (s *session) inputFlags(cmd *cobra.Command) error {
	if exe, err := os.Executable(); err == nil {
		if err := s.input("the running gpunetsim", exe); err != nil {
			return err
		}
	}
	for _, name := range inputFileFlags {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed && f.Value.Type() == "string" {
			if err := s.input("--"+name, f.Value.String()); err != nil {
				return err
			}
		}
	}
	return nil
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
