package goal

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
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
	f := &File{}
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
	if err := f.index(io.NewSectionReader(f.ra, 0, size)); err != nil {
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
// to operation numbers.
func (f *File) Rank(r int) (RankReader, error) {
	ri := f.ranks[r]
	bufSize := (32 << 20) / max(f.numRanks, 1)
	bufSize = min(max(bufSize, 512), 64<<10)
	return &fileRank{
		lr:     lineReader{br: bufio.NewReaderSize(io.NewSectionReader(f.ra, ri.off, ri.end-ri.off), bufSize), line: ri.line},
		tz:     tokenizer{inBlock: ri.inBlock},
		labels: newLabelTab(),
		look:   ri.win.Lookahead,
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

func lineErr(line int64, err error) error {
	return fmt.Errorf("%w: line %d: %v", ErrSyntax, line, err)
}

// index is the validating first pass.
func (f *File) index(r io.Reader) error {
	lr := lineReader{br: bufio.NewReaderSize(r, 256<<10)}
	var (
		tz      tokenizer
		p       parsed
		inRank  = -1
		next    = 0 // next expected rank
		labels  = newLabelTab()
		wc      winCalc
		nops    uint64
		seenNum bool
	)
	for {
		startOff := lr.off
		line, err := lr.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("goal: reading line %d: %w", lr.line+1, err)
		}
		wasBlock := tz.inBlock
		if err := tz.parse(line, &p); err != nil {
			return lineErr(lr.line, err)
		}
		switch p.kind {
		case lineEmpty:
		case lineNumRanks:
			if seenNum {
				return lineErr(lr.line, errors.New("num_ranks given twice"))
			}
			if inRank >= 0 {
				return lineErr(lr.line, errors.New("num_ranks inside a rank block"))
			}
			seenNum = true
			f.numRanks = int(p.n)
			f.ranks = make([]rankIndex, 0, min(f.numRanks, 1<<20))
		case lineRank:
			if !seenNum {
				return lineErr(lr.line, errors.New(`rank block before "num_ranks P"`))
			}
			if inRank >= 0 {
				return lineErr(lr.line, fmt.Errorf(`rank %d inside rank %d: want "}" first`, p.n, inRank))
			}
			if next >= f.numRanks || int(p.n) >= f.numRanks {
				return lineErr(lr.line, fmt.Errorf("rank %d out of range: num_ranks is %d, want ranks 0..%d", p.n, f.numRanks, f.numRanks-1))
			}
			if int(p.n) != next {
				return lineErr(lr.line, fmt.Errorf("rank %d out of order: want rank %d", p.n, next))
			}
			inRank = next
			f.ranks = append(f.ranks, rankIndex{off: lr.off, line: lr.line, inBlock: tz.inBlock})
			labels.reset()
			wc.reset()
			nops = 0
		case lineClose:
			if inRank < 0 {
				return lineErr(lr.line, errors.New(`"}" outside a rank block`))
			}
			if wasBlock {
				return lineErr(lr.line, errors.New(`"}" must start its own line, not follow a comment`))
			}
			ri := &f.ranks[inRank]
			ri.end = startOff
			ri.win = wc.window()
			inRank = -1
			next++
		case lineOp, lineDep:
			if inRank < 0 {
				return lineErr(lr.line, errors.New(`statement outside a rank block: want "rank R {" first`))
			}
			if p.kind == lineDep {
				a, _, okA := labels.get(p.label)
				b, _, okB := labels.get(p.label2)
				switch {
				case !okA:
					return lineErr(lr.line, fmt.Errorf("unknown label %q: %s must name a label defined earlier in rank %d", p.label, p.st.Kind, inRank))
				case !okB:
					return lineErr(lr.line, fmt.Errorf("unknown label %q: %s must name a label defined earlier in rank %d", p.label2, p.st.Kind, inRank))
				}
				wc.dep(a, b)
				continue
			}
			st := &p.st
			if st.Peer != AnySource && int(st.Peer) >= f.numRanks {
				return lineErr(lr.line, fmt.Errorf("rank %d out of range: num_ranks is %d, want 0..%d", st.Peer, f.numRanks, f.numRanks-1))
			}
			f.maxCPU = max(f.maxCPU, int(st.CPU))
			f.maxNIC = max(f.maxNIC, int(st.NIC))
			if p.label != nil && labels.put(p.label, nops, 0) {
				return lineErr(lr.line, fmt.Errorf("label %q defined twice in rank %d", p.label, inRank))
			}
			nops++
			wc.op()
		}
	}
	if tz.inBlock {
		return lineErr(lr.line, errors.New("unterminated /* comment"))
	}
	if inRank >= 0 {
		return lineErr(lr.line, fmt.Errorf(`end of input inside rank %d: want "}"`, inRank))
	}
	if !seenNum {
		return fmt.Errorf(`%w: no "num_ranks P" line`, ErrSyntax)
	}
	if next < f.numRanks {
		return lineErr(lr.line, fmt.Errorf("end of input after rank %d: num_ranks is %d, want rank blocks 0..%d", next-1, f.numRanks, f.numRanks-1))
	}
	return nil
}

// fileRank reads one rank block for the simulation.
type fileRank struct {
	lr     lineReader
	tz     tokenizer
	p      parsed
	labels *labelTab
	look   uint64
	pos    uint64 // next statement position
	nops   uint64
	done   bool
}

func (fr *fileRank) Next(s *Stmt) (bool, error) {
	for !fr.done {
		line, err := fr.lr.next()
		if err == io.EOF {
			fr.done = true
			break
		}
		if err != nil {
			return false, fmt.Errorf("goal: reading line %d: %w", fr.lr.line+1, err)
		}
		if err := fr.tz.parse(line, &fr.p); err != nil {
			return false, lineErr(fr.lr.line, err)
		}
		switch fr.p.kind {
		case lineOp:
			*s = fr.p.st
			s.Line = fr.lr.line
			if fr.p.label != nil {
				fr.remember(fr.p.label)
			}
			fr.nops++
			fr.pos++
			return true, nil
		case lineDep:
			a, _, okA := fr.labels.get(fr.p.label)
			b, _, okB := fr.labels.get(fr.p.label2)
			if !okA || !okB {
				return false, lineErr(fr.lr.line, errors.New("label outside the streaming window (file changed since it was indexed?)"))
			}
			*s = Stmt{Kind: fr.p.st.Kind, A: a, B: b, Line: fr.lr.line}
			fr.pos++
			return true, nil
		case lineEmpty:
		default:
			return false, lineErr(fr.lr.line, errors.New("unexpected line inside a rank block (file changed since it was indexed?)"))
		}
	}
	return false, nil
}

// remember records a label, forgetting labels that can no longer be named.
func (fr *fileRank) remember(label []byte) {
	fr.labels.put(label, fr.nops, fr.pos)
	if n := uint64(fr.labels.n); n > 2*fr.look+16 {
		pos, look := fr.pos, fr.look
		fr.labels.rebuild(func(e *labelEnt) bool { return e.pos+look >= pos })
	}
}
