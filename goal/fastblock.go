package goal

import "encoding/binary"

// indexLines is the index pass's fused loop for the bulk of a Schedgen-
// style file: the statement lines inside a rank block in the exact shape
// WriteText and Schedgen print, with the labels "lk" on operation k
// ("l3: send 8b to 1 tag 2", "l3 requires l1"). For each such line it
// parses, checks, defines or looks up the labels, feeds the window and
// appends the binary record in one scan, with the hot state in local
// variables rather than in the indexer (which also keeps the two stretches
// indexed in parallel from writing to shared cache lines).
//
// b holds complete lines (it ends with a newline) and line is the number
// of the line before b. indexLines stops before the first line it does not
// take whole (a "}", a comment, another label, anything that might be an
// error) and returns the bytes and lines it consumed; the general path then
// reads that line, so the result, including every error and its line, is
// the one the general path alone gives (FuzzOpen checks that, with the
// fused loop on and off). The indexer must be inside a rank block and
// outside a block comment.
func (ix *indexer) indexLines(b []byte, line int64) (consumed int, lines int64, err error) {
	var (
		nops     = ix.nops
		canon    = ix.canon
		prev     = ix.prevLine
		ln       = line
		rec      = ix.sp.buf
		limit    = ix.sp.limit
		maxCPU   = ix.maxCPU
		maxNIC   = ix.maxNIC
		numRanks = uint64(ix.numRanks)
		wc       = &ix.wc
		i        int
	)
	defer func() {
		ix.nops, ix.canon, ix.prevLine, ix.sp.buf = nops, canon, prev, rec
		ix.maxCPU, ix.maxNIC = maxCPU, maxNIC
		consumed, lines = i, ln-line
	}()
	// A label "lk" defined in the hash table (a file that labels
	// operations out of order) would make "lk" on operation k a duplicate:
	// leave such blocks to the general path.
	if ix.labels.n != 0 {
		return
	}
	for i < len(b) && b[i] == 'l' {
		k, j, ok := labelNum(b, i+1)
		if !ok {
			return
		}
		var r record
		switch b[j] {
		case ':':
			// "lk: " on operation k, then the operation.
			if k != nops || b[j+1] != ' ' {
				return
			}
			if j, ok = r.op(b, j+2, numRanks); !ok {
				return
			}
			maxCPU, maxNIC = max(maxCPU, int(r.cpu)), max(maxNIC, int(r.nic))
			if nops%64 == 0 {
				canon = append(canon, 0)
			}
			canon[nops/64] |= 1 << (nops % 64)
			ln++
			rec = r.appendOp(rec, uint64(ln-prev))
			nops++
			wc.op()
		case ' ':
			// "la requires lb" or "la irequires lb", both labels defined.
			kind := Requires
			switch {
			case hasPrefix(b[j+1:], "requires l"):
				j += len(" requires l")
			case hasPrefix(b[j+1:], "irequires l"):
				j += len(" irequires l")
				kind = IRequires
			default:
				return
			}
			a := k
			bb, j2, ok := labelNum(b, j)
			if !ok || b[j2] != '\n' || !defined(canon, a, nops) || !defined(canon, bb, nops) {
				return
			}
			j = j2
			ln++
			rec = appendDep(rec, kind, uint64(ln-prev), nops-a, nops-bb)
			wc.dep(a, bb)
		default:
			return
		}
		prev = ln
		i = j + 1
		if len(rec) >= limit {
			ix.sp.buf = rec
			err = ix.sp.spill()
			rec, limit = ix.sp.buf, ix.sp.limit
			if err != nil {
				return
			}
		}
	}
	return
}

// defined reports whether canonical label k names one of the first nops
// operations that carries it.
func defined(canon []uint64, k, nops uint64) bool {
	return k < nops && canon[k/64]&(1<<(k%64)) != 0
}

// labelNum parses the k of a label "lk" whose digits start at b[i]: 1 to
// 18 digits without a leading zero (canonNum's labels, short enough never
// to overflow). b must end with a newline; j is the index after the
// digits.
func labelNum(b []byte, i int) (k uint64, j int, ok bool) {
	j = i
	for j < len(b) && b[j]-'0' <= 9 {
		k = k*10 + uint64(b[j]-'0')
		j++
	}
	n := j - i
	return k, j, n > 0 && n <= 18 && (b[i] != '0' || n == 1) && j < len(b)
}

// decimalAt parses 1 to 19 decimal digits at b[i:] no larger than max
// and returns the index after them. It accepts what compactNum accepts,
// with one test per digit instead of two.
func decimalAt(b []byte, i int, max uint64) (uint64, int, bool) {
	var v uint64
	j := i
	for ; j < len(b); j++ {
		c := b[j] - '0'
		if c > 9 {
			break
		}
		v = v*10 + uint64(c)
	}
	return v, j, j > i && j-i <= 19 && v <= max
}

// record is an operation parsed by record.op.
type record struct {
	kind      Kind
	size      uint64
	peer, tag uint32
	cpu, nic  uint8
}

// op parses the rest of an operation line at b[i:] in parseCompact's
// shape, up to and including its newline, and returns the index of the
// newline. It refuses what the general parser would word as an error (a
// peer of num_ranks or more, say) and the wildcards.
func (r *record) op(b []byte, i int, numRanks uint64) (int, bool) {
	if len(b)-i < 6 {
		return 0, false
	}
	var dir string
	switch string(b[i : i+5]) {
	case "send ":
		r.kind, dir = Send, " to "
	case "recv ":
		r.kind, dir = Recv, " from "
	case "calc ":
		r.kind = Calc
	default:
		return 0, false
	}
	var ok bool
	if r.size, i, ok = decimalAt(b, i+5, 1<<62); !ok {
		return 0, false
	}
	if r.kind != Calc {
		switch {
		case b[i] == 'b':
			i++
		case b[i] == ' ' && b[i+1] == 'b':
			i += 2
		default:
			return 0, false
		}
		if !hasPrefix(b[i:], dir) {
			return 0, false
		}
		var v uint64
		if v, i, ok = decimalAt(b, i+len(dir), numRanks-1); !ok {
			return 0, false
		}
		r.peer = uint32(v)
		if hasPrefix(b[i:], " tag ") {
			if v, i, ok = decimalAt(b, i+5, 1<<32-2); !ok {
				return 0, false
			}
			r.tag = uint32(v)
		}
	}
	if hasPrefix(b[i:], " cpu ") {
		v, j, ok := decimalAt(b, i+5, MaxIndex)
		if !ok {
			return 0, false
		}
		r.cpu, i = uint8(v), j
	}
	if r.kind != Calc && hasPrefix(b[i:], " nic ") {
		v, j, ok := decimalAt(b, i+5, MaxIndex)
		if !ok {
			return 0, false
		}
		r.nic, i = uint8(v), j
	}
	return i, b[i] == '\n'
}

// appendOp appends r's spool record (appendRecord's format); dl is the
// line distance to the previous statement.
func (r *record) appendOp(buf []byte, dl uint64) []byte {
	flags := byte(r.kind)
	if r.tag != 0 {
		flags |= recTag
	}
	if r.cpu != 0 {
		flags |= recCPU
	}
	if r.nic != 0 {
		flags |= recNIC
	}
	buf = append(buf, flags)
	buf = binary.AppendUvarint(buf, dl)
	buf = binary.AppendUvarint(buf, r.size)
	buf = binary.AppendUvarint(buf, uint64(r.peer))
	if r.tag != 0 {
		buf = binary.AppendUvarint(buf, uint64(r.tag))
	}
	if r.cpu != 0 {
		buf = append(buf, r.cpu)
	}
	if r.nic != 0 {
		buf = append(buf, r.nic)
	}
	return buf
}

// appendDep appends a dependency's spool record (appendRecord's format).
func appendDep(buf []byte, kind Kind, dl, da, db uint64) []byte {
	buf = append(buf, byte(kind))
	buf = binary.AppendUvarint(buf, dl)
	buf = binary.AppendUvarint(buf, da)
	return binary.AppendUvarint(buf, db)
}
