package goal

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrSyntax marks malformed GOAL text; errors wrap it with the line number.
var ErrSyntax = errors.New("goal: bad schedule")

// lineKind classifies a parsed line.
type lineKind uint8

const (
	lineEmpty lineKind = iota
	lineNumRanks
	lineRank
	lineClose
	lineOp
	lineDep
)

// parsed is one parsed line. Byte slices alias the line buffer.
type parsed struct {
	kind   lineKind
	n      uint64 // num_ranks value or rank number
	label  []byte // op label, or A of a dependency
	label2 []byte // B of a dependency
	st     Stmt   // the operation, or Kind for a dependency
}

// tokenizer splits a GOAL line into tokens without allocating. It strips
// comments and keeps the block-comment state across lines.
type tokenizer struct {
	inBlock bool // inside /* ... */
	toks    [][]byte
}

func isWordByte(c byte) bool {
	return c == '_' || c == '-' || c == '+' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// split tokenizes line. ':' '{' '}' are tokens of their own; "8b" becomes
// "8" "b".
func (z *tokenizer) split(line []byte) ([][]byte, error) {
	z.toks = z.toks[:0]
	i := 0
	for i < len(line) {
		c := line[i]
		if z.inBlock {
			if c == '*' && i+1 < len(line) && line[i+1] == '/' {
				z.inBlock = false
				i += 2
				continue
			}
			i++
			continue
		}
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v':
			i++
		case c == '/' && i+1 < len(line) && line[i+1] == '/':
			return z.toks, nil
		case c == '/' && i+1 < len(line) && line[i+1] == '*':
			z.inBlock = true
			i += 2
		case c == ':' || c == '{' || c == '}':
			z.toks = append(z.toks, line[i:i+1])
			i++
		case isWordByte(c):
			j := i
			for j < len(line) && isWordByte(line[j]) {
				j++
			}
			w := line[i:j]
			if n := len(w); n >= 2 && w[n-1] == 'b' && isDigits(w[:n-1]) {
				z.toks = append(z.toks, w[:n-1], w[n-1:])
			} else {
				z.toks = append(z.toks, w)
			}
			i = j
		default:
			return nil, fmt.Errorf("unexpected character %q", c)
		}
	}
	return z.toks, nil
}

func isDigits(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func isIdent(b []byte) bool {
	if len(b) == 0 || !(b[0] >= 'a' && b[0] <= 'z' || b[0] >= 'A' && b[0] <= 'Z') {
		return false
	}
	for _, c := range b[1:] {
		if !(c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func eq(b []byte, s string) bool { return string(b) == s }

// parseUint parses a decimal number no larger than max.
func parseUint(b []byte, what string, max uint64) (uint64, error) {
	if !isDigits(b) {
		return 0, fmt.Errorf("%s %q: want a non-negative integer", what, b)
	}
	v, err := strconv.ParseUint(string(b), 10, 64)
	if err != nil || v > max {
		return 0, fmt.Errorf("%s %q: want an integer up to %d", what, b, max)
	}
	return v, nil
}

// parseLine parses one tokenized line.
func parseLine(toks [][]byte, p *parsed) error {
	*p = parsed{}
	if len(toks) == 0 {
		return nil
	}
	switch {
	case eq(toks[0], "num_ranks"):
		if len(toks) != 2 {
			return errors.New(`want "num_ranks P"`)
		}
		n, err := parseUint(toks[1], "num_ranks", 1<<31-1)
		if err != nil {
			return err
		}
		if n == 0 {
			return errors.New("num_ranks must be at least 1")
		}
		p.kind, p.n = lineNumRanks, n
		return nil
	case eq(toks[0], "rank"):
		if len(toks) != 3 || !eq(toks[2], "{") {
			return errors.New(`want "rank R {"`)
		}
		n, err := parseUint(toks[1], "rank", 1<<31-1)
		if err != nil {
			return err
		}
		p.kind, p.n = lineRank, n
		return nil
	case eq(toks[0], "}"):
		if len(toks) != 1 {
			return fmt.Errorf(`unexpected %q after "}"`, toks[1])
		}
		p.kind = lineClose
		return nil
	}
	// [label:] op ...   or   A requires B
	rest := toks
	if len(toks) >= 2 && eq(toks[1], ":") {
		if !isIdent(toks[0]) {
			return fmt.Errorf("label %q: want a letter followed by letters, digits or _", toks[0])
		}
		if isKeyword(toks[0]) {
			return fmt.Errorf("label %q is a keyword", toks[0])
		}
		p.label = toks[0]
		rest = toks[2:]
		if len(rest) == 0 {
			return fmt.Errorf("label %q: want send, recv or calc after the colon", toks[0])
		}
	} else if len(toks) >= 2 && (eq(toks[1], "requires") || eq(toks[1], "irequires")) {
		if len(toks) != 3 || !isIdent(toks[0]) || !isIdent(toks[2]) {
			return fmt.Errorf(`want "A %s B" with labels A and B`, toks[1])
		}
		p.kind = lineDep
		p.label, p.label2 = toks[0], toks[2]
		p.st.Kind = Requires
		if eq(toks[1], "irequires") {
			p.st.Kind = IRequires
		}
		return nil
	}
	p.kind = lineOp
	st := &p.st
	switch {
	case eq(rest[0], "send"), eq(rest[0], "recv"):
		st.Kind = Send
		dir := "to"
		if eq(rest[0], "recv") {
			st.Kind, dir = Recv, "from"
		}
		if len(rest) < 5 || !eq(rest[2], "b") || !eq(rest[3], dir) {
			return fmt.Errorf(`want "%s S b %s R [tag T] [cpu C] [nic N]"`, rest[0], dir)
		}
		var err error
		if st.Size, err = parseUint(rest[1], "size", 1<<62); err != nil {
			return err
		}
		if st.Kind == Recv && eq(rest[4], "-1") {
			st.Peer = AnySource
		} else {
			v, err := parseUint(rest[4], "rank", 1<<31-1)
			if err != nil {
				if st.Kind == Recv {
					return fmt.Errorf("%w (or -1 for any source)", err)
				}
				return err
			}
			st.Peer = uint32(v)
		}
		rest = rest[5:]
		if len(rest) > 0 && eq(rest[0], "tag") {
			if len(rest) < 2 {
				return errors.New("tag: want an integer")
			}
			if st.Kind == Recv && eq(rest[1], "-1") {
				st.Tag = AnyTag
			} else {
				v, err := parseUint(rest[1], "tag", 1<<32-2)
				if err != nil {
					if st.Kind == Recv {
						return fmt.Errorf("%w (or -1 for any tag)", err)
					}
					return err
				}
				st.Tag = uint32(v)
			}
			rest = rest[2:]
		}
	case eq(rest[0], "calc"):
		st.Kind = Calc
		if len(rest) < 2 {
			return errors.New(`want "calc D [cpu C]"`)
		}
		var err error
		if st.Size, err = parseUint(rest[1], "calc duration", 1<<62); err != nil {
			return err
		}
		rest = rest[2:]
	default:
		return fmt.Errorf("unexpected %q: want num_ranks, rank, \"}\", [label:] send|recv|calc, or \"A requires|irequires B\"", rest[0])
	}
	if len(rest) > 0 && eq(rest[0], "cpu") {
		if len(rest) < 2 {
			return errors.New("cpu: want an integer")
		}
		v, err := parseUint(rest[1], "cpu", MaxIndex)
		if err != nil {
			return err
		}
		st.CPU = uint8(v)
		rest = rest[2:]
	}
	if len(rest) > 0 && eq(rest[0], "nic") && st.Kind != Calc {
		if len(rest) < 2 {
			return errors.New("nic: want an integer")
		}
		v, err := parseUint(rest[1], "nic", MaxIndex)
		if err != nil {
			return err
		}
		st.NIC = uint8(v)
		rest = rest[2:]
	}
	if len(rest) > 0 {
		if st.Kind == Calc {
			return fmt.Errorf("unexpected %q: calc takes only an optional \"cpu C\"", rest[0])
		}
		return fmt.Errorf("unexpected %q: optional fields are tag, cpu, nic in that order", rest[0])
	}
	return nil
}

func isKeyword(b []byte) bool {
	switch string(b) {
	case "send", "recv", "calc", "requires", "irequires", "rank", "num_ranks":
		return true
	}
	return false
}
