package goal

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
)

// File is a GOAL text schedule indexed for streaming. Open reads the text
// once, checks it completely and records where each rank block starts; Rank
// then re-reads one block at a time through a small buffer. Memory is
// proportional to the number of ranks, not to the size of the text.
type File struct {
	ra       io.ReaderAt
	spool    *os.File // temporary copy of a non-seekable input, removed by Close
	numRanks int
	maxCPU   int
	maxNIC   int
	ranks    []rankIndex
	bufs     sync.Pool // *[]byte read buffers of the rank decoders
}

// rankIndex locates one rank block.
type rankIndex struct {
	off, end int64 // byte range of the block body (after "rank R {")
	line     int64 // line number of the "rank R {" line
	win      Window
	inBlock  bool // the body starts inside a /* comment
}

// Open reads a GOAL schedule from r, validates it and indexes its rank
// blocks. A regular *os.File is read in place; any other reader is first
// copied to a temporary file (removed by Close), so multi-gigabyte inputs
// never need to fit in memory. Errors wrap ErrSyntax and name the 1-based
// line and what was expected.
func Open(r io.Reader) (*File, error) {
	return open(r, parallelMin, runtime.GOMAXPROCS(0))
}

// open is Open indexing texts of at least parMin bytes in up to stretches
// parallel stretches.
func open(r io.Reader, parMin int64, stretches int) (*File, error) {
	f := &File{}
	f.bufs.New = func() any { return new([]byte) }
	var size int64
	if osf, ok := r.(*os.File); ok {
		if st, err := osf.Stat(); err == nil && st.Mode().IsRegular() {
			f.ra, size = osf, st.Size()
		}
	}
	if f.ra == nil {
		tmp, err := os.CreateTemp("", "gpunetsim-goal-*")
		if err != nil {
			return nil, fmt.Errorf("goal: spooling input: %w", err)
		}
		f.spool = tmp
		n, err := io.Copy(tmp, r)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("goal: spooling input: %w", err)
		}
		f.ra, size = tmp, n
	}
	if err := f.index(size, parMin, stretches); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Close releases the temporary copy, if any. It does not close the reader
// passed to Open.
func (f *File) Close() error {
	if f.spool == nil {
		return nil
	}
	name := f.spool.Name()
	err := f.spool.Close()
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	f.spool = nil
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
// to operation numbers. The reader decodes the block in chunks, the next
// chunk on another goroutine while the caller consumes the current one.
func (f *File) Rank(r int) (RankReader, error) {
	ri := &f.ranks[r]
	// Two chunks per rank, about 32 MB in all, 8 to 1024 statements each.
	chunk := (32 << 20) / (2 * stmtSize * max(f.numRanks, 1))
	chunk = min(max(chunk, 8), 1024)
	return &fileRank{
		dec: rankDecoder{f: f, off: ri.off, end: ri.end, line: ri.line, look: ri.win.Lookahead,
			tz: tokenizer{inBlock: ri.inBlock}, readSize: chunk * 40},
		chunk: chunk,
		ch:    make(chan chunkResult, 1),
	}, nil
}

// lineReader reads lines of any length, tracking the line number and the
// byte offset of the next line.
type lineReader struct {
	br   *bufio.Reader
	long []byte
	line int64 // number of the line last returned
	off  int64 // offset just past the line last returned
}

// next returns the next line without its newline, or io.EOF.
func (l *lineReader) next() ([]byte, error) {
	b, err := l.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		l.long = append(l.long[:0], b...)
		for err == bufio.ErrBufferFull {
			b, err = l.br.ReadSlice('\n')
			l.long = append(l.long, b...)
		}
		b = l.long
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	if len(b) == 0 && err == io.EOF {
		return nil, io.EOF
	}
	l.line++
	l.off += int64(len(b))
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	return b, nil
}
