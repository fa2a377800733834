package goal

import (
	"bytes"
	"errors"
	"io"
	"unsafe"
)

// stmtSize is the memory one decoded statement takes.
const stmtSize = int(unsafe.Sizeof(Stmt{}))

// fileRank reads one rank block for the simulation: it hands out decoded
// statements from the current chunk while a goroutine decodes the next
// one. The decoder is owned by that goroutine while a decode is pending and
// by the reader otherwise; the channel hands it over.
type fileRank struct {
	dec     rankDecoder
	chunk   int    // statements per chunk
	cur     []Stmt // chunk being consumed
	i       int    // next statement in cur
	pending bool   // a decode into the other chunk is in flight
	ch      chan chunkResult
	err     error
}

// chunkResult is one decoded chunk.
type chunkResult struct {
	stmts []Stmt
	err   error
}

func (fr *fileRank) Next(s *Stmt) (bool, error) {
	if fr.i == len(fr.cur) && !fr.refill() {
		return false, fr.err
	}
	*s = fr.cur[fr.i]
	fr.i++
	return true, nil
}

// refill makes the next chunk current and starts decoding the one after.
// It reports false at the end of the block or on an error (in fr.err).
func (fr *fileRank) refill() bool {
	if fr.err != nil {
		return false
	}
	var res chunkResult
	switch {
	case fr.pending:
		res = <-fr.ch
		fr.pending = false
	case fr.dec.done:
		return false
	default:
		res.stmts, res.err = fr.dec.decode(make([]Stmt, 0, fr.chunk))
	}
	if res.err != nil {
		fr.err = res.err
		fr.cur = nil
		return false
	}
	old := fr.cur
	fr.cur, fr.i = res.stmts, 0
	if !fr.dec.done {
		if old == nil {
			old = make([]Stmt, 0, fr.chunk)
		}
		fr.pending = true
		go func(dec *rankDecoder, buf []Stmt, ch chan<- chunkResult) {
			stmts, err := dec.decode(buf[:0])
			ch <- chunkResult{stmts, err}
		}(&fr.dec, old, fr.ch)
	}
	return len(fr.cur) > 0
}

// ringMax is the largest streaming window for which labels are looked up
// by a backwards scan of the most recent operations instead of a hash
// table.
const ringMax = 64

// rankDecoder is the second-pass parser of one rank block. It reads the
// block with ReadAt through a buffer borrowed for each chunk, so an idle
// rank holds no text, and it remembers only the labels its streaming
// window allows a later dependency to name.
type rankDecoder struct {
	f         *File
	off, end  int64 // unread part of the block body
	line      int64 // number of the line last read
	tz        tokenizer
	look      uint64
	pos, nops uint64 // next statement position and operation number
	readSize  int
	done      bool

	recent []recentLabel // ring of the last look+1 operations, if look ≤ ringMax
	rnext  int           // next slot of recent
	labels *labelTab     // otherwise
}

// recentLabel is one operation in the ring; label is empty if it has none.
type recentLabel struct {
	label []byte
	op    uint64
}

// decode appends up to cap(out) statements to out. At the end of the
// block it sets d.done.
func (d *rankDecoder) decode(out []Stmt) ([]Stmt, error) {
	bp := d.f.bufs.Get().(*[]byte)
	defer d.f.bufs.Put(bp)
	start := d.off
	defer func() {
		// Read about what the next chunk will need: the text is re-read
		// from the first line not decoded.
		if n := d.off - start; len(out) == cap(out) && n > 0 {
			d.readSize = int(min(max(n+n/8+64, 512), 1<<20))
		}
	}()
	for len(out) < cap(out) && !d.done {
		n := int(min(int64(d.readSize), d.end-d.off))
		if len(*bp) < n {
			*bp = make([]byte, n)
		}
		buf := (*bp)[:n]
		if n > 0 {
			if _, err := d.f.ra.ReadAt(buf, d.off); err != nil && err != io.EOF {
				return out, readErr(d.line+1, err)
			}
		}
		last := n == int(d.end-d.off) // buf reaches the end of the block
		used := 0
		for len(out) < cap(out) {
			rest := buf[used:]
			if len(rest) == 0 {
				break
			}
			line := rest
			if j := bytes.IndexByte(rest, '\n'); j >= 0 {
				line = rest[:j]
				used += j + 1
			} else if last {
				used += len(rest)
			} else {
				break // partial line: read again from its start
			}
			d.line++
			var st Stmt
			ok, err := d.stmt(line, &st)
			if err != nil {
				return out, err
			}
			if ok {
				out = append(out, st)
			}
		}
		d.off += int64(used)
		if d.off == d.end {
			d.done = true
		} else if used == 0 {
			d.readSize *= 2 // a line longer than the buffer
		}
	}
	return out, nil
}

// stmt parses one line of the block; it reports false for an empty line.
func (d *rankDecoder) stmt(line []byte, s *Stmt) (bool, error) {
	var p parsed // on the stack: no write barriers for its slices
	if err := d.tz.parse(line, &p); err != nil {
		return false, lineErr(d.line, err)
	}
	switch p.kind {
	case lineOp:
		*s = p.st
		s.Line = d.line
		d.remember(p.label)
		d.nops++
		d.pos++
		return true, nil
	case lineDep:
		a, okA := d.lookup(p.label)
		b, okB := d.lookup(p.label2)
		if !okA || !okB {
			return false, lineErr(d.line, errors.New("label outside the streaming window (file changed since it was indexed?)"))
		}
		*s = Stmt{Kind: p.st.Kind, A: a, B: b, Line: d.line}
		d.pos++
		return true, nil
	case lineEmpty:
		return false, nil
	}
	return false, lineErr(d.line, errors.New("unexpected line inside a rank block (file changed since it was indexed?)"))
}

// remember records the label (possibly empty) of the operation just read,
// forgetting labels that no later statement can name.
func (d *rankDecoder) remember(label []byte) {
	if d.look <= ringMax {
		if d.recent == nil {
			d.recent = make([]recentLabel, d.look+1)
		}
		r := &d.recent[d.rnext]
		r.label, r.op = append(r.label[:0], label...), d.nops
		if d.rnext++; d.rnext == len(d.recent) {
			d.rnext = 0
		}
		return
	}
	if label == nil {
		return
	}
	if d.labels == nil {
		d.labels = newLabelTab()
	}
	d.labels.put(label, d.nops, d.pos)
	if n := uint64(d.labels.n); n > 2*d.look+16 {
		pos, look := d.pos, d.look
		d.labels.rebuild(func(e *labelEnt) bool { return e.pos+look >= pos })
	}
}

// lookup returns the operation number of a label in the window.
func (d *rankDecoder) lookup(label []byte) (uint64, bool) {
	if d.look <= ringMax {
		for k, i := 0, d.rnext; k < len(d.recent); k++ {
			if i--; i < 0 {
				i = len(d.recent) - 1
			}
			if r := &d.recent[i]; len(r.label) > 0 && string(r.label) == string(label) {
				return r.op, true
			}
		}
		return 0, false
	}
	if d.labels == nil {
		return 0, false
	}
	op, _, ok := d.labels.get(label)
	return op, ok
}
