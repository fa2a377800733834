package goal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
)

// File is a GOAL text schedule indexed for streaming. Open reads the text
// once, checks it completely, records each rank's Window and spools the
// statements in binary; Rank then decodes one rank at a time through a
// small buffer. Memory is proportional to the number of ranks, not to the
// size of the text. Close removes the temporary files.
type File struct {
	ra       io.ReaderAt
	spool    *os.File // temporary copy of a non-seekable input, removed by Close
	numRanks int
	maxCPU   int
	maxNIC   int
	ranks    []rankIndex
	spools   []*spool // the statements in binary, written by the index pass
	opts     openOpts
}

// rankIndex locates one rank block's statements in a spool.
type rankIndex struct {
	sp         *spool
	boff, bend int64 // byte range of the records
	line       int64 // line number of the "rank R {" line
	win        Window
}

// Open reads a GOAL schedule from r, validates it and indexes its rank
// blocks. A regular *os.File is read in place (with ReadAt, so r's offset
// is not used); any other reader is first copied to a temporary file, so
// multi-gigabyte inputs never need to fit in memory. Errors wrap ErrSyntax
// and name the 1-based line and what was expected; on an error no
// temporary file is left behind. Call Close when done.
func Open(r io.Reader) (*File, error) {
	workers := runtime.GOMAXPROCS(0)
	stretches := 1
	if workers > 1 {
		stretches = 4 * workers
	}
	return open(r, openOpts{parMin: parallelMin, stretches: stretches, workers: workers, spoolMem: spoolMem})
}

// openOpts are Open's tuning knobs, varied by the tests.
type openOpts struct {
	parMin    int64 // index texts of at least parMin bytes in parallel
	stretches int   // in up to this many stretches (at most 16)
	workers   int   // by this many goroutines
	spoolMem  int   // binary kept in memory per stretch before a temp file
	unfused   bool  // every line through the general path (no indexLines)
	bufSize   int   // initial line buffer per stretch, 0 for the default
}

func open(r io.Reader, opts openOpts) (*File, error) {
	f := &File{opts: opts}
	var size int64
	if osf, ok := r.(*os.File); ok {
		if st, err := osf.Stat(); err == nil && st.Mode().IsRegular() {
			f.ra, size = osf, st.Size()
		}
	}
	if f.ra == nil {
		tmp, err := tempFile("gpunetsim-goal-*")
		if err != nil {
			return nil, fmt.Errorf("goal: spooling input: %w", err)
		}
		f.spool = tmp
		n, err := io.Copy(tmp, &textReader{r: r, max: maxSpoolLine})
		if err != nil {
			f.Close()
			if errors.Is(err, ErrSyntax) {
				return nil, err
			}
			return nil, fmt.Errorf("goal: spooling input: %w", err)
		}
		f.ra, size = tmp, n
	}
	if err := f.index(size); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Close releases the temporary files, if any. It does not close the
// reader passed to Open.
func (f *File) Close() error {
	err := f.closeSpools()
	if f.spool == nil {
		return err
	}
	if cerr := closeTemp(f.spool); err == nil {
		err = cerr
	}
	f.spool = nil
	return err
}

func (f *File) closeSpools() error {
	var err error
	for _, sp := range f.spools {
		if cerr := sp.close(); err == nil {
			err = cerr
		}
	}
	f.spools = nil
	return err
}

// NumRanks returns num_ranks.
func (f *File) NumRanks() int { return f.numRanks }

// NumCPU returns the highest cpu index used plus one.
func (f *File) NumCPU() int { return f.maxCPU + 1 }

// NumNIC returns the highest nic index used plus one.
func (f *File) NumNIC() int { return f.maxNIC + 1 }

// Window returns rank r's streaming window.
func (f *File) Window(r int) Window { return f.ranks[r].win }

// Rank returns a reader of rank r's statements; dependencies are resolved
// to operation numbers. It decodes the binary form the index pass wrote,
// through a buffer of at most 16 KiB (8 MiB over all ranks).
func (f *File) Rank(r int) (RankReader, error) {
	ri := &f.ranks[r]
	size := min(max((8<<20)/max(f.numRanks, 1), 4*maxRecord), 16<<10)
	return &fileRank{sp: ri.sp, off: ri.boff, end: ri.bend, buf: make([]byte, size), line: ri.line, remaining: ri.win.Stmts}, nil
}

// maxSpoolLine bounds a line of a spooled stream: comments and labels may
// be long (megabytes, in the tests), but a longer run of bytes without a
// newline is not GOAL text.
const maxSpoolLine = 256 << 20

// textReader passes a stream through while it looks like GOAL text: a NUL
// byte or a line longer than max is a syntax error at once, so a
// stream such as /dev/zero is refused after its first bytes instead of
// being spooled until the disk is full.
type textReader struct {
	r    io.Reader
	max  int   // longest line accepted
	line int   // bytes since the last newline
	off  int64 // bytes passed
}

func (t *textReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	chunk := p[:n]
	if i := bytes.IndexByte(chunk, 0); i >= 0 {
		return i, fmt.Errorf("%w: a NUL byte at offset %d: the input is not GOAL text", ErrSyntax, t.off+int64(i))
	}
	for at := 0; at < n; {
		j := bytes.IndexByte(chunk[at:], '\n')
		if j < 0 {
			j = n - at // the line goes on past this chunk
		}
		if t.line+j > t.max {
			return at, fmt.Errorf("%w: a line longer than %d bytes at offset %d: the input is not GOAL text", ErrSyntax, t.max, t.off+int64(at))
		}
		if at+j < n { // a newline ends the line
			t.line, at = 0, at+j+1
		} else {
			t.line, at = t.line+j, n
		}
	}
	t.off += int64(n)
	return n, err
}
