package goal

import (
	"encoding/binary"
	"math/bits"
)

// This file holds the reader's fast paths: a parser for the common shapes
// of operation and dependency lines, and a label table that does not
// allocate per label. Anything the fast parser does not recognise (comments,
// wildcards, malformed text, num_ranks, rank and "}" lines) goes to the
// general tokenizer and parseLine, which also produce every error message;
// FuzzFastLine checks that both agree on every line the fast path accepts.

// byteClass classifies each byte for the fast parsers: classWord for the
// bytes of words (isWordByte), classSpace for white space, classIdent for
// the bytes of labels after the first (letters, digits, _).
const byteClass = "\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x02\x02\x02\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x01\x00\x00\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x00\x00\x00\x00\x00\x00" +
	"\x00\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x00\x00\x00\x00\x05" +
	"\x00\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x05\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00" +
	"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"

const (
	classWord  = 1
	classSpace = 2
	classIdent = 4
)

func isSpace(c byte) bool { return byteClass[c]&classSpace != 0 }

// skipSpace returns the index of the first non-space byte of b at or
// after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) && byteClass[b[i]]&classSpace != 0 {
		i++
	}
	return i
}

// word skips white space from i and returns the next run of word bytes
// (empty if none) and the index after it.
func word(b []byte, i int) ([]byte, int) {
	i = skipSpace(b, i)
	j := i
	for j < len(b) && byteClass[b[j]]&classWord != 0 {
		j++
	}
	return b[i:j], j
}

// number skips white space from i and parses a word of at most 19
// decimal digits no larger than max; ok is false for any other word.
func number(b []byte, i int, max uint64) (v uint64, j int, ok bool) {
	i = skipSpace(b, i)
	j = i
	for j < len(b) && j-i < 20 {
		c := b[j] - '0'
		if c > 9 {
			break
		}
		v = v*10 + uint64(c)
		j++
	}
	if j == i || j-i > 19 || v > max || j < len(b) && byteClass[b[j]]&classWord != 0 {
		return 0, j, false
	}
	return v, j, true
}

// digits parses a non-empty run of at most 19 decimal digits no larger
// than max.
func digits(b []byte, max uint64) (uint64, bool) {
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, v <= max
}

// parseFast parses the common forms of an operation or dependency line
// outside a block comment into p. It returns false, leaving p unspecified,
// for anything else; the caller then uses the general parser, which gives
// the same result for every line parseFast accepts.
func parseFast(line []byte, p *parsed) bool {
	b := line
	w, i := word(b, 0)
	if len(w) == 0 || !isIdent(w) {
		return false
	}
	*p = parsed{}
	i = skipSpace(b, i)
	if i < len(b) && b[i] == ':' {
		if isKeyword(w) {
			return false
		}
		p.label = w
		w, i = word(b, i+1)
	} else {
		switch string(w) {
		case "send", "recv", "calc":
		case "num_ranks", "rank":
			return false
		default:
			k, j := word(b, i)
			switch string(k) {
			case "requires":
				p.st.Kind = Requires
			case "irequires":
				p.st.Kind = IRequires
			default:
				return false
			}
			l2, j := word(b, j)
			if !isIdent(l2) || skipSpace(b, j) != len(b) {
				return false
			}
			p.kind, p.label, p.label2 = lineDep, w, l2
			return true
		}
	}
	p.kind = lineOp
	st := &p.st
	var ok bool
	switch string(w) {
	case "send", "recv":
		st.Kind = Send
		dir := "to"
		if w[0] == 'r' {
			st.Kind, dir = Recv, "from"
		}
		// "8b" or "8 b"
		i = skipSpace(b, i)
		j := i
		for j < len(b) && b[j]-'0' <= 9 {
			j++
		}
		if j-i == 0 || j-i > 19 {
			return false
		}
		if st.Size, ok = digits(b[i:j], 1<<62); !ok {
			return false
		}
		if j < len(b) && b[j] == 'b' {
			j++
		} else {
			var u []byte
			if j < len(b) && byteClass[b[j]]&classWord != 0 {
				return false
			}
			if u, j = word(b, j); string(u) != "b" {
				return false
			}
		}
		if j < len(b) && byteClass[b[j]]&classWord != 0 {
			return false
		}
		if w, i = word(b, j); string(w) != dir {
			return false
		}
		var v uint64
		if v, i, ok = number(b, i, 1<<31-1); !ok {
			return false
		}
		st.Peer = uint32(v)
		w, i = word(b, i)
		if string(w) == "tag" {
			if v, i, ok = number(b, i, 1<<32-2); !ok {
				return false
			}
			st.Tag = uint32(v)
			w, i = word(b, i)
		}
	case "calc":
		st.Kind = Calc
		if st.Size, i, ok = number(b, i, 1<<62); !ok {
			return false
		}
		w, i = word(b, i)
	default:
		return false
	}
	if string(w) == "cpu" {
		var v uint64
		if v, i, ok = number(b, i, MaxIndex); !ok {
			return false
		}
		st.CPU = uint8(v)
		w, i = word(b, i)
	}
	if string(w) == "nic" && st.Kind != Calc {
		var v uint64
		if v, i, ok = number(b, i, MaxIndex); !ok {
			return false
		}
		st.NIC = uint8(v)
		w, i = word(b, i)
	}
	return len(w) == 0 && skipSpace(b, i) == len(b)
}

// parseCompact parses the exact shape WriteText and Schedgen print, with
// single spaces and nothing else ("l3: send 8b to 1 tag 2",
// "l3 requires l1"), comparing keywords as byte strings. It returns false
// for anything else, leaving p unspecified; parseFast and then the general
// parser take over. Like parseFast it agrees with the general parser on
// every line it accepts (FuzzFastLine).
func parseCompact(b []byte, p *parsed) bool {
	i := 0
	for i < len(b) && byteClass[b[i]]&classIdent != 0 {
		i++
	}
	if i == 0 || i == len(b) || !(b[0] >= 'a' && b[0] <= 'z' || b[0] >= 'A' && b[0] <= 'Z') {
		return false
	}
	w := b[:i]
	*p = parsed{}
	switch b[i] {
	case ':':
		if i+1 == len(b) || b[i+1] != ' ' || isKeyword(w) {
			return false
		}
		p.label = w
		i += 2
	case ' ':
		j := i + 1
		switch {
		case hasPrefix(b[j:], "requires "):
			p.st.Kind, j = Requires, j+len("requires ")
		case hasPrefix(b[j:], "irequires "):
			p.st.Kind, j = IRequires, j+len("irequires ")
		default:
			i = 0 // an operation without a label
		}
		if i == 0 {
			break
		}
		if string(w) == "rank" || string(w) == "num_ranks" {
			return false
		}
		l2 := b[j:]
		if len(l2) == 0 || !(l2[0] >= 'a' && l2[0] <= 'z' || l2[0] >= 'A' && l2[0] <= 'Z') {
			return false
		}
		for _, c := range l2 {
			if byteClass[c]&classIdent == 0 {
				return false
			}
		}
		p.kind, p.label, p.label2 = lineDep, w, l2
		return true
	default:
		return false
	}
	st := &p.st
	p.kind = lineOp
	var dir string
	switch {
	case hasPrefix(b[i:], "send "):
		st.Kind, dir = Send, " to "
	case hasPrefix(b[i:], "recv "):
		st.Kind, dir = Recv, " from "
	case hasPrefix(b[i:], "calc "):
		st.Kind = Calc
	default:
		return false
	}
	i += 5
	var ok bool
	if st.Size, i, ok = compactNum(b, i, 1<<62); !ok {
		return false
	}
	if st.Kind != Calc {
		switch {
		case i < len(b) && b[i] == 'b':
			i++
		case hasPrefix(b[i:], " b"):
			i += 2
		default:
			return false
		}
		if !hasPrefix(b[i:], dir) {
			return false
		}
		v, j, ok := compactNum(b, i+len(dir), 1<<31-1)
		if !ok {
			return false
		}
		st.Peer, i = uint32(v), j
		if hasPrefix(b[i:], " tag ") {
			if v, i, ok = compactNum(b, i+5, 1<<32-2); !ok {
				return false
			}
			st.Tag = uint32(v)
		}
	}
	if hasPrefix(b[i:], " cpu ") {
		v, j, ok := compactNum(b, i+5, MaxIndex)
		if !ok {
			return false
		}
		st.CPU, i = uint8(v), j
	}
	if st.Kind != Calc && hasPrefix(b[i:], " nic ") {
		v, j, ok := compactNum(b, i+5, MaxIndex)
		if !ok {
			return false
		}
		st.NIC, i = uint8(v), j
	}
	return i == len(b)
}

func hasPrefix(b []byte, s string) bool { return len(b) >= len(s) && string(b[:len(s)]) == s }

// compactNum parses 1 to 19 decimal digits at b[i:] no larger than max and
// returns the index after them.
func compactNum(b []byte, i int, max uint64) (uint64, int, bool) {
	var v uint64
	j := i
	for j < len(b) && b[j]-'0' <= 9 && j-i < 19 {
		v = v*10 + uint64(b[j]-'0')
		j++
	}
	return v, j, j > i && v <= max
}

// parse parses one line into p, through the fast paths when it can.
func (z *tokenizer) parse(line []byte, p *parsed) error {
	if !z.inBlock && (parseCompact(line, p) || parseFast(line, p)) {
		return nil
	}
	toks, err := z.split(line)
	if err != nil {
		return err
	}
	return parseLine(toks, p)
}

// hashLabel is a fast hash of a short byte string (labels are a few bytes):
// 8-byte words folded with 128-bit multiplications, wyhash-style. Quality
// only matters for the table's probe lengths; results never depend on it.
func hashLabel(b []byte) uint64 {
	const (
		k0 = 0xa0761d6478bd642f
		k1 = 0xe7037ed1a0b428db
	)
	h := uint64(len(b)) ^ k0
	for len(b) >= 8 {
		hi, lo := bits.Mul64(h^binary.LittleEndian.Uint64(b), k1)
		h = hi ^ lo
		b = b[8:]
	}
	var w uint64
	for i, c := range b {
		w |= uint64(c) << (8 * i)
	}
	hi, lo := bits.Mul64(h^w, k1)
	hi, lo = bits.Mul64(hi^lo^k0, k1)
	return hi ^ lo
}

// labelTab maps labels to an operation number and statement position
// without allocating per label: label bytes go to an arena, entries to an
// open-addressed table. Its memory is proportional to the labels it holds.
type labelTab struct {
	arena []byte
	ents  []labelEnt // length a power of two, at most half full
	n     int

	spare      []labelEnt // the previous table, reused by rebuild
	spareArena []byte
}

// labelEnt is one table slot; n == 0 marks an empty slot (labels are never
// empty).
type labelEnt struct {
	off     int
	n       int32
	h       uint32
	op, pos uint64
}

func newLabelTab() *labelTab {
	return &labelTab{ents: make([]labelEnt, 64)}
}

func (t *labelTab) reset() {
	if t.n == 0 {
		return
	}
	clear(t.ents)
	t.arena = t.arena[:0]
	t.n = 0
}

func (t *labelTab) slot(label []byte, h uint64) (int, bool) {
	mask := len(t.ents) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		e := &t.ents[i]
		if e.n == 0 {
			return i, false
		}
		if e.h == uint32(h>>32) && string(t.arena[e.off:e.off+int(e.n)]) == string(label) {
			return i, true
		}
	}
}

// get returns the entry of label.
func (t *labelTab) get(label []byte) (op, pos uint64, ok bool) {
	i, ok := t.slot(label, hashLabel(label))
	if !ok {
		return 0, 0, false
	}
	return t.ents[i].op, t.ents[i].pos, true
}

// put sets label's entry and reports whether the label was already there.
func (t *labelTab) put(label []byte, op, pos uint64) bool {
	h := hashLabel(label)
	i, ok := t.slot(label, h)
	if ok {
		t.ents[i].op, t.ents[i].pos = op, pos
		return true
	}
	t.ents[i] = labelEnt{off: len(t.arena), n: int32(len(label)), h: uint32(h >> 32), op: op, pos: pos}
	t.arena = append(t.arena, label...)
	t.n++
	if 2*t.n > len(t.ents) {
		t.rebuild(func(*labelEnt) bool { return true })
	}
	return false
}

// rebuild keeps the entries for which keep is true, compacting the arena
// and resizing the table to at least twice their number. It reuses the
// previous table's memory, so a table that is trimmed regularly (a rank
// read through its streaming window) stops allocating.
func (t *labelTab) rebuild(keep func(*labelEnt) bool) {
	old, oldArena := t.ents, t.arena
	n := 0
	for i := range old {
		if old[i].n != 0 && keep(&old[i]) {
			n++
		}
	}
	size := 64
	for size < 4*n {
		size *= 2
	}
	if cap(t.spare) >= size {
		t.ents = t.spare[:size]
		clear(t.ents)
	} else {
		t.ents = make([]labelEnt, size)
	}
	t.arena = t.spareArena[:0]
	t.n = 0
	for i := range old {
		e := &old[i]
		if e.n == 0 || !keep(e) {
			continue
		}
		lb := oldArena[e.off : e.off+int(e.n)]
		j, _ := t.slot(lb, hashLabel(lb))
		t.ents[j] = labelEnt{off: len(t.arena), n: e.n, h: e.h, op: e.op, pos: e.pos}
		t.arena = append(t.arena, lb...)
		t.n++
	}
	t.spare, t.spareArena = old, oldArena[:0]
}
