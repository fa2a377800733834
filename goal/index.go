package goal

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"sync"
)

// lineError is an error on one line of the text. Line numbers are
// relative to the stretch of text an indexer reads until index makes them
// absolute.
type lineError struct {
	line int64
	err  error
	io   bool // a read error rather than malformed text
}

func (e *lineError) Error() string {
	if e.io {
		return fmt.Sprintf("goal: reading line %d: %v", e.line, e.err)
	}
	return fmt.Sprintf("%v: line %d: %v", ErrSyntax, e.line, e.err)
}

// Unwrap returns ErrSyntax for malformed text and the read error
// otherwise.
func (e *lineError) Unwrap() error {
	if e.io {
		return e.err
	}
	return ErrSyntax
}

func lineErr(line int64, err error) error { return &lineError{line: line, err: err} }

func readErr(line int64, err error) error { return &lineError{line: line, err: err, io: true} }

// indexer is the validating first pass over a stretch of the text. The
// text is split at "rank R {" lines into stretches indexed in parallel,
// each from the state a sequential pass would have there (index checks
// that afterwards).
type indexer struct {
	numRanks       int
	seenNum        bool
	inRank         int // rank whose block is open, or -1
	next           int // next expected rank
	maxCPU, maxNIC int
	ranks          []rankIndex // blocks found, line numbers relative
	tz             tokenizer
	labels         *labelTab
	recent         [4]shortLabel // the last labelled operations, checked before labels
	canon          []uint64      // bit k: operation k is labelled "lk" (kept out of labels)
	rnext          int
	wc             winCalc
	nops           uint64
	lines          int64 // lines read
	header         bool  // stop before the first rank line
	headerEnd      int64 // offset of that line
	sp             *spool
	prevLine       int64  // line of the previous statement of the open block
	fused          bool   // take common lines through indexLines
	bufSize        int    // the line buffer's initial size, 0 for the default
	lineBuf        []byte // the line buffer, if given by the caller
}

func newIndexer(opts openOpts) *indexer {
	return &indexer{inRank: -1, labels: newLabelTab(), sp: newSpool(opts.spoolMem), fused: !opts.unfused, bufSize: opts.bufSize}
}

// run indexes the text of r, which starts at offset base of the file.
func (ix *indexer) run(r io.Reader, base int64) error {
	if ix.lineBuf == nil {
		ix.lineBuf = make([]byte, cmp.Or(ix.bufSize, 512<<10))
	}
	lr := lineScanner{r: r, buf: ix.lineBuf, off: base}
	defer func() { ix.lineBuf = lr.buf }()
	var pl parsed // on the stack: no write barriers for its slices
	p := &pl
	for {
		if ix.fused && ix.inRank >= 0 && !ix.tz.inBlock && lr.lo < lr.end {
			n, m, err := ix.indexLines(lr.buf[lr.lo:lr.end], lr.line)
			lr.lo += n
			lr.off += int64(n)
			lr.line += m
			ix.lines = lr.line
			if err != nil {
				return err
			}
		}
		startOff := lr.off
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return readErr(lr.line+1, err)
		}
		ix.lines = lr.line
		wasBlock := ix.tz.inBlock
		if err := ix.tz.parse(line, p); err != nil {
			return lineErr(lr.line, err)
		}
		switch p.kind {
		case lineEmpty:
		case lineNumRanks:
			if ix.seenNum {
				return lineErr(lr.line, errors.New("num_ranks given twice"))
			}
			if ix.inRank >= 0 {
				return lineErr(lr.line, errors.New("num_ranks inside a rank block"))
			}
			ix.seenNum = true
			ix.numRanks = int(p.n)
			if ix.ranks == nil && !ix.header {
				ix.ranks = make([]rankIndex, 0, min(ix.numRanks, 1<<20))
			}
		case lineRank:
			if ix.header {
				ix.headerEnd, ix.lines = startOff, lr.line-1
				return nil
			}
			if !ix.seenNum {
				return lineErr(lr.line, errors.New(`rank block before "num_ranks P"`))
			}
			if ix.inRank >= 0 {
				return lineErr(lr.line, fmt.Errorf(`rank %d inside rank %d: want "}" first`, p.n, ix.inRank))
			}
			if ix.next >= ix.numRanks || int(p.n) >= ix.numRanks {
				return lineErr(lr.line, fmt.Errorf("rank %d out of range: num_ranks is %d, want ranks 0..%d", p.n, ix.numRanks, ix.numRanks-1))
			}
			if int(p.n) != ix.next {
				return lineErr(lr.line, fmt.Errorf("rank %d out of order: want rank %d", p.n, ix.next))
			}
			ix.inRank = ix.next
			ix.ranks = append(ix.ranks, rankIndex{sp: ix.sp, boff: ix.sp.size(), line: lr.line})
			ix.prevLine = lr.line
			ix.labels.reset()
			ix.recent = [4]shortLabel{}
			ix.canon = ix.canon[:0]
			ix.wc.reset()
			ix.nops = 0
		case lineClose:
			if ix.inRank < 0 {
				return lineErr(lr.line, errors.New(`"}" outside a rank block`))
			}
			if wasBlock {
				return lineErr(lr.line, errors.New(`"}" must start its own line, not follow a comment`))
			}
			ri := &ix.ranks[len(ix.ranks)-1]
			ri.bend = ix.sp.size()
			ri.win = ix.wc.window()
			ix.inRank = -1
			ix.next++
		case lineOp, lineDep:
			if ix.inRank < 0 {
				return lineErr(lr.line, errors.New(`statement outside a rank block: want "rank R {" first`))
			}
			if p.kind == lineDep {
				a, okA := ix.lookup(p.label)
				b, okB := ix.lookup(p.label2)
				switch {
				case !okA:
					return lineErr(lr.line, fmt.Errorf("unknown label %q: %s must name a label defined earlier in rank %d", p.label, p.st.Kind, ix.inRank))
				case !okB:
					return lineErr(lr.line, fmt.Errorf("unknown label %q: %s must name a label defined earlier in rank %d", p.label2, p.st.Kind, ix.inRank))
				}
				ix.wc.dep(a, b)
				if err := ix.spoolStmt(&Stmt{Kind: p.st.Kind, A: a, B: b}, lr.line); err != nil {
					return err
				}
				continue
			}
			st := &p.st
			if st.Peer != AnySource && int(st.Peer) >= ix.numRanks {
				return lineErr(lr.line, fmt.Errorf("rank %d out of range: num_ranks is %d, want 0..%d", st.Peer, ix.numRanks, ix.numRanks-1))
			}
			ix.maxCPU = max(ix.maxCPU, int(st.CPU))
			ix.maxNIC = max(ix.maxNIC, int(st.NIC))
			if ix.nops%64 == 0 {
				ix.canon = append(ix.canon, 0)
			}
			if p.label != nil {
				if ix.define(p.label) {
					return lineErr(lr.line, fmt.Errorf("label %q defined twice in rank %d", p.label, ix.inRank))
				}
				if len(p.label) <= len(shortLabel{}.b) {
					r := &ix.recent[ix.rnext%len(ix.recent)]
					r.n, r.op = uint8(copy(r.b[:], p.label)), ix.nops
					ix.rnext++
				}
			}
			if err := ix.spoolStmt(st, lr.line); err != nil {
				return err
			}
			ix.nops++
			ix.wc.op()
		}
	}
	ix.lines = lr.line
	return nil
}

// spoolStmt writes st, read on line, to the spool.
func (ix *indexer) spoolStmt(st *Stmt, line int64) error {
	ix.sp.buf = appendRecord(ix.sp.buf, st, line, ix.prevLine, ix.nops)
	ix.prevLine = line
	if len(ix.sp.buf) >= ix.sp.limit {
		return ix.sp.spill()
	}
	return nil
}

// shortLabel is a copy of a short label and its operation number; n == 0
// marks an unused slot.
type shortLabel struct {
	b  [22]byte
	n  uint8
	op uint64
}

// canonNum returns k if label is "lk" (k in decimal without leading
// zeros), the labels WriteText and Schedgen write.
func canonNum(label []byte) (uint64, bool) {
	if len(label) < 2 || label[0] != 'l' || label[1] == '0' && len(label) > 2 {
		return 0, false
	}
	return digits(label[1:], 1<<62)
}

// define records the label of operation ix.nops and reports whether it
// was already defined. A label "lk" on operation k only sets a bit, so
// Schedgen-style files need no hash table.
func (ix *indexer) define(label []byte) (dup bool) {
	k, canon := canonNum(label)
	switch {
	case canon && k == ix.nops:
		if ix.labels.n > 0 {
			if _, _, ok := ix.labels.get(label); ok {
				return true
			}
		}
		ix.canon[k/64] |= 1 << (k % 64)
		return false
	case canon && k < ix.nops && ix.canon[k/64]&(1<<(k%64)) != 0:
		return true
	}
	return ix.labels.put(label, ix.nops, 0)
}

// lookup returns the operation number of a label of the open rank block,
// checking the most recent labels first (dependencies usually name them).
func (ix *indexer) lookup(label []byte) (uint64, bool) {
	if k, ok := canonNum(label); ok && k < ix.nops && ix.canon[k/64]&(1<<(k%64)) != 0 {
		return k, true
	}
	for i := range ix.recent {
		if r := &ix.recent[i]; r.n != 0 && string(r.b[:r.n]) == string(label) {
			return r.op, true
		}
	}
	op, _, ok := ix.labels.get(label)
	return op, ok
}

// lineScanner reads lines of any length through one large buffer, tracking
// the line number and the offset of the next line: the index pass's
// lighter bufio.Reader.ReadSlice.
type lineScanner struct {
	r      io.Reader
	buf    []byte
	lo, hi int // buf[lo:hi] is unread
	end    int // buf[lo:end] holds complete lines
	eof    bool
	line   int64 // number of the line last returned
	off    int64 // offset just past the line last returned
}

// next returns the next line without its newline, or io.EOF.
func (l *lineScanner) next() ([]byte, error) {
	for {
		if j := bytes.IndexByte(l.buf[l.lo:l.hi], '\n'); j >= 0 {
			b := l.buf[l.lo : l.lo+j]
			l.lo += j + 1
			l.off += int64(j + 1)
			l.line++
			return b, nil
		}
		if l.eof {
			if l.lo == l.hi {
				return nil, io.EOF
			}
			b := l.buf[l.lo:l.hi]
			l.off += int64(len(b))
			l.lo = l.hi
			l.line++
			return b, nil
		}
		if err := l.fill(); err != nil {
			return nil, err
		}
	}
}

// fill moves the unread bytes to the front and reads more, growing the
// buffer for a line longer than it.
func (l *lineScanner) fill() error {
	n := copy(l.buf, l.buf[l.lo:l.hi])
	l.lo, l.hi = 0, n
	if n == len(l.buf) {
		l.buf = append(l.buf, make([]byte, len(l.buf))...)
	}
	m, err := l.r.Read(l.buf[n:])
	l.hi += m
	l.end = bytes.LastIndexByte(l.buf[:l.hi], '\n') + 1
	if err == io.EOF {
		l.eof = true
		return nil
	}
	return err
}

// finish checks the state at the end of the input.
func (ix *indexer) finish() error {
	if ix.tz.inBlock {
		return lineErr(ix.lines, errors.New("unterminated /* comment"))
	}
	if ix.inRank >= 0 {
		return lineErr(ix.lines, fmt.Errorf(`end of input inside rank %d: want "}"`, ix.inRank))
	}
	if !ix.seenNum {
		return fmt.Errorf(`%w: no "num_ranks P" line`, ErrSyntax)
	}
	if ix.next < ix.numRanks {
		return lineErr(ix.lines, fmt.Errorf("end of input after rank %d: num_ranks is %d, want rank blocks 0..%d", ix.next-1, ix.numRanks, ix.numRanks-1))
	}
	return nil
}

// parallelMin is the smallest text indexed in parallel.
const parallelMin = 4 << 20

// index is the validating first pass over the size bytes of f.ra. Large
// texts are split at "rank R {" lines and the stretches indexed in
// parallel; the result, including which error is reported, is that of one
// sequential pass, which index falls back to if a split turns out not to be
// at the start of a rank block (inside a comment, say).
func (f *File) index(size int64) error {
	var ix *indexer
	var err error
	if size >= f.opts.parMin && f.opts.stretches >= 2 {
		ix, err = f.indexParallel(size, min(f.opts.stretches, 16))
	}
	if ix == nil && err == nil {
		ix = newIndexer(f.opts)
		f.spools = []*spool{ix.sp}
		err = ix.run(io.NewSectionReader(f.ra, 0, size), 0)
	}
	if err == nil {
		err = ix.finish()
	}
	for _, sp := range f.spools {
		if err == nil {
			err = sp.finish()
		}
	}
	if err != nil {
		return err
	}
	f.numRanks, f.maxCPU, f.maxNIC, f.ranks = ix.numRanks, ix.maxCPU, ix.maxNIC, ix.ranks
	return nil
}

// indexParallel indexes a large text in stretches. It returns nil and no
// error if the text should be indexed sequentially instead.
func (f *File) indexParallel(size int64, k int) (*indexer, error) {
	// The header: num_ranks, up to the first rank line.
	hdOpts := f.opts
	hdOpts.bufSize = cmp.Or(hdOpts.bufSize, 64<<10)
	hd := newIndexer(hdOpts)
	hd.header = true
	if err := hd.run(io.NewSectionReader(f.ra, 0, min(size, 1<<20)), 0); err != nil || hd.headerEnd == 0 || !hd.seenNum {
		return nil, nil
	}
	// Split points: the next "\nrank R {" after each k-th of the text.
	type stretch struct {
		off, end int64
		first    int // rank number at off (stretches after the first)
		ix       *indexer
		err      error
	}
	parts := []stretch{{off: 0}}
	buf := make([]byte, 64<<10)
	for i := 1; i < k; i++ {
		at := max(size*int64(i)/int64(k), parts[len(parts)-1].off+1)
		off, r := f.findRank(buf, at, size)
		if off < 0 {
			break
		}
		parts[len(parts)-1].end = off
		parts = append(parts, stretch{off: off, first: r})
	}
	parts[len(parts)-1].end = size
	if len(parts) < 2 {
		return nil, nil
	}
	// More stretches than workers, so that a worker slowed down (by
	// another process on its core, say) leaves the rest to the others. A
	// worker passes its line buffer on to the next stretch.
	var wg sync.WaitGroup
	bufs := make(chan []byte, max(f.opts.workers, 1))
	for range cap(bufs) {
		bufs <- nil
	}
	// Each stretch's binary goes to a file once it passes one write chunk
	// (the text is large), so memory stays a chunk per stretch.
	opts := f.opts
	opts.spoolMem = min(opts.spoolMem, spoolChunk)
	for i := range parts {
		s := &parts[i]
		s.ix = newIndexer(opts)
		s.ix.sp.buf = make([]byte, 0, spoolChunk+maxRecord)
		if i > 0 {
			s.ix.numRanks, s.ix.seenNum, s.ix.next = hd.numRanks, true, s.first
			s.ix.ranks = make([]rankIndex, 0, min(hd.numRanks, 1<<20)/len(parts)+1)
		}
		wg.Go(func() {
			s.ix.lineBuf = <-bufs
			s.err = s.ix.run(io.NewSectionReader(f.ra, s.off, s.end-s.off), s.off)
			bufs <- s.ix.lineBuf
			s.ix.lineBuf = nil
		})
	}
	wg.Wait()
	for i := range parts {
		f.spools = append(f.spools, parts[i].ix.sp)
	}
	// Check each stretch started where a sequential pass would have been,
	// then report the first error or merge.
	all := parts[0].ix
	var lines int64
	for i := range parts {
		s := &parts[i]
		if i > 0 {
			prev := parts[i-1].ix
			if prev.inRank >= 0 || prev.tz.inBlock || prev.next != s.first || !prev.seenNum || prev.numRanks != hd.numRanks {
				f.closeSpools()
				return nil, nil
			}
		}
		if s.err != nil {
			var le *lineError
			if errors.As(s.err, &le) {
				le.line += lines
			}
			return nil, s.err
		}
		if i > 0 {
			for _, ri := range s.ix.ranks {
				ri.line += lines
				all.ranks = append(all.ranks, ri)
			}
			all.maxCPU = max(all.maxCPU, s.ix.maxCPU)
			all.maxNIC = max(all.maxNIC, s.ix.maxNIC)
			all.inRank, all.next, all.tz = s.ix.inRank, s.ix.next, s.ix.tz
		}
		lines += s.ix.lines
	}
	all.lines = lines
	return all, nil
}

// findRank returns the offset of the first line starting "rank R " at or
// after at (and after a newline), with R, or -1.
func (f *File) findRank(buf []byte, at, size int64) (int64, int) {
	const pat = "\nrank "
	for pos := at - 1; pos < size; pos += int64(len(buf) - len(pat) - 24) {
		n, err := f.ra.ReadAt(buf[:min(int64(len(buf)), size-pos)], pos)
		if err != nil && err != io.EOF {
			return -1, 0
		}
		b := buf[:n]
		for i := 0; ; {
			j := bytes.Index(b[i:], []byte(pat))
			if j < 0 {
				break
			}
			j += i
			if r, ok := rankNumber(b[j+len(pat):]); ok {
				return pos + int64(j) + 1, r
			}
			i = j + 1
		}
		if int64(n) < int64(len(buf)) {
			break
		}
	}
	return -1, 0
}

// rankNumber parses the R of "R {" at the start of b.
func rankNumber(b []byte) (int, bool) {
	i := 0
	for i < len(b) && i < 11 && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	if i == 0 || i == len(b) || b[i] != ' ' && b[i] != '{' {
		return 0, false
	}
	v, ok := digits(b[:i], 1<<31-1)
	return int(v), ok
}
