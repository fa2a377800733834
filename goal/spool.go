package goal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// The index pass parses every statement anyway, so it also writes it to a
// spool in a compact binary form (about 6 bytes a statement, a quarter of
// the text) with dependencies already resolved to operation numbers. Rank
// readers decode the spool instead of parsing the text a second time, and
// need neither labels nor a tokenizer.
//
// Record: a flags byte, then uvarints. Flags: bits 0-2 the Kind, then
// recAnySource, recTag, recAnyTag, recCPU, recNIC. Fields: the line
// distance to the previous statement (or the "rank R {" line); for an
// operation the size, the peer (unless any source), the tag (if recTag and
// not recAnyTag), then a cpu and a nic byte if flagged; for a dependency
// nops−A and nops−B, where nops counts the operations before it.
const (
	recAnySource = 1 << (3 + iota)
	recTag
	recAnyTag
	recCPU
	recNIC
)

// maxRecord bounds the length of one record.
const maxRecord = 1 + 4*binary.MaxVarintLen64 + 2

// spoolMem is how much binary a spool keeps in memory before it moves to a
// temporary file.
const spoolMem = 1 << 20

// spool holds the binary statements of a stretch of the text: in memory
// while small, else in a temporary file removed by close. Records are
// appended straight to buf; whoever appends calls spill once len(buf)
// reaches limit.
type spool struct {
	max     int    // bytes kept in memory, normally spoolMem
	buf     []byte // all records (in memory), or those not yet written to f
	f       *os.File
	written int64 // bytes of records written to f
	limit   int   // spill when len(buf) reaches this
}

// spoolChunk is the size of the writes to a spool's file.
const spoolChunk = 256 << 10

func newSpool(max int) *spool {
	return &spool{max: max, limit: max + 1}
}

// size returns the bytes of records in all.
func (s *spool) size() int64 { return s.written + int64(len(s.buf)) }

// spill moves the buffered records to the temporary file, creating it the
// first time (when the records no longer fit in s.max bytes).
func (s *spool) spill() error {
	if s.f == nil {
		f, err := tempFile("gpunetsim-goal-*.bin")
		if err != nil {
			return fmt.Errorf("goal: spooling statements: %w", err)
		}
		s.f = f
		s.limit = spoolChunk
	}
	return s.flush()
}

func (s *spool) flush() error {
	if _, err := s.f.Write(s.buf); err != nil {
		return fmt.Errorf("goal: spooling statements: %w", err)
	}
	s.written += int64(len(s.buf))
	if cap(s.buf) < spoolChunk+maxRecord {
		s.buf = make([]byte, 0, spoolChunk+maxRecord)
	}
	s.buf = s.buf[:0]
	return nil
}

// finish writes out what is buffered, for reading, and releases the
// buffer of a spool in a file.
func (s *spool) finish() error {
	if s.f == nil {
		return nil
	}
	var err error
	if len(s.buf) > 0 {
		err = s.flush()
	}
	s.buf = nil
	return err
}

func (s *spool) ReadAt(p []byte, off int64) (int, error) {
	if s.f != nil {
		return s.f.ReadAt(p, off)
	}
	if off >= int64(len(s.buf)) {
		return 0, io.EOF
	}
	n := copy(p, s.buf[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (s *spool) close() error {
	s.buf = nil
	if s.f == nil {
		return nil
	}
	err := closeTemp(s.f)
	s.f = nil
	return err
}

// appendRecord appends the record of st, read on line line, to buf. prev
// is the line of the previous statement and nops the number of operations
// before st.
func appendRecord(buf []byte, st *Stmt, line, prev int64, nops uint64) []byte {
	flags := byte(st.Kind)
	if !st.Kind.IsOp() {
		buf = append(buf, flags)
		buf = binary.AppendUvarint(buf, uint64(line-prev))
		buf = binary.AppendUvarint(buf, nops-st.A)
		return binary.AppendUvarint(buf, nops-st.B)
	}
	if st.Peer == AnySource {
		flags |= recAnySource
	}
	if st.Tag != 0 {
		flags |= recTag
		if st.Tag == AnyTag {
			flags |= recAnyTag
		}
	}
	if st.CPU != 0 {
		flags |= recCPU
	}
	if st.NIC != 0 {
		flags |= recNIC
	}
	buf = append(buf, flags)
	buf = binary.AppendUvarint(buf, uint64(line-prev))
	buf = binary.AppendUvarint(buf, st.Size)
	if flags&recAnySource == 0 {
		buf = binary.AppendUvarint(buf, uint64(st.Peer))
	}
	if flags&(recTag|recAnyTag) == recTag {
		buf = binary.AppendUvarint(buf, uint64(st.Tag))
	}
	if flags&recCPU != 0 {
		buf = append(buf, st.CPU)
	}
	if flags&recNIC != 0 {
		buf = append(buf, st.NIC)
	}
	return buf
}

var errCorrupt = errors.New("goal: corrupt statement spool")

// uvarint decodes a uvarint at b[i:] and returns the index after it; ok
// is false if there is none. It is small enough to be inlined.
func uvarint(b []byte, i int) (v uint64, j int, ok bool) {
	for s := uint(0); i < len(b) && s < 64; s += 7 {
		c := b[i]
		i++
		v |= uint64(c&0x7f) << s
		if c < 0x80 {
			return v, i, true
		}
	}
	return v, i, false
}

// fileRank reads one rank's statements from the spool through a small
// buffer.
type fileRank struct {
	sp        *spool
	off, end  int64 // unread part of the rank's records
	buf       []byte
	r, w      int // buf[r:w] is unread
	line      int64
	nops      uint64
	remaining uint64 // statements left
}

func (fr *fileRank) Next(s *Stmt) (bool, error) {
	if fr.remaining == 0 {
		fr.buf = nil
		return false, nil
	}
	if fr.w-fr.r < maxRecord && fr.off < fr.end {
		if err := fr.fill(); err != nil {
			return false, err
		}
	}
	b := fr.buf[:fr.w]
	i := fr.r
	if i >= len(b) {
		return false, errCorrupt
	}
	flags := b[i]
	dl, i, ok := uvarint(b, i+1)
	fr.line += int64(dl)
	*s = Stmt{Kind: Kind(flags & 7), Line: fr.line}
	if !s.Kind.IsOp() {
		da, i2, okA := uvarint(b, i)
		db, i3, okB := uvarint(b, i2)
		if !ok || !okA || !okB {
			return false, errCorrupt
		}
		s.A, s.B = fr.nops-da, fr.nops-db
		i = i3
	} else {
		var okS, okP, okT bool
		s.Size, i, okS = uvarint(b, i)
		s.Peer, okP = AnySource, true
		if flags&recAnySource == 0 {
			var v uint64
			v, i, okP = uvarint(b, i)
			s.Peer = uint32(v)
		}
		okT = true
		switch flags & (recTag | recAnyTag) {
		case recTag:
			var v uint64
			v, i, okT = uvarint(b, i)
			s.Tag = uint32(v)
		case recTag | recAnyTag:
			s.Tag = AnyTag
		}
		if flags&recCPU != 0 && i < len(b) {
			s.CPU = b[i]
			i++
		} else if flags&recCPU != 0 {
			okT = false
		}
		if flags&recNIC != 0 && i < len(b) {
			s.NIC = b[i]
			i++
		} else if flags&recNIC != 0 {
			okT = false
		}
		if !ok || !okS || !okP || !okT {
			return false, errCorrupt
		}
		fr.nops++
	}
	fr.r = i
	fr.remaining--
	return true, nil
}

// fill moves the unread records to the front of the buffer and reads
// more.
func (fr *fileRank) fill() error {
	n := copy(fr.buf, fr.buf[fr.r:fr.w])
	m := int(min(int64(len(fr.buf)-n), fr.end-fr.off))
	if _, err := fr.sp.ReadAt(fr.buf[n:n+m], fr.off); err != nil && err != io.EOF {
		return fmt.Errorf("goal: reading the statement spool: %w", err)
	}
	fr.off += int64(m)
	fr.r, fr.w = 0, n+m
	return nil
}
