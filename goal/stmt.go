package goal

import (
	"fmt"
	"math"
	"strconv"
)

// Kind is the kind of a GOAL statement.
type Kind uint8

// Statement kinds. The operation kinds are ordered as LogGOPSim orders
// operations that become ready together: sends, then receives, then calcs.
const (
	Send      Kind = iota // send S b to R
	Recv                  // recv S b from R
	Calc                  // calc D
	Requires              // A requires B: A starts after B completes
	IRequires             // A irequires B: A starts once B has started
)

// String returns the GOAL keyword of k.
func (k Kind) String() string {
	switch k {
	case Send:
		return "send"
	case Recv:
		return "recv"
	case Calc:
		return "calc"
	case Requires:
		return "requires"
	case IRequires:
		return "irequires"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// IsOp reports whether k is an operation (send, recv, calc) rather than a
// dependency.
func (k Kind) IsOp() bool { return k <= Calc }

// Wildcards for Stmt.Peer and Stmt.Tag of a receive ("-1" in GOAL).
const (
	AnySource uint32 = math.MaxUint32
	AnyTag    uint32 = math.MaxUint32
)

// MaxIndex is the largest cpu or nic index a statement may use.
const MaxIndex = 255

// Stmt is one GOAL statement of a rank's program. Operations are numbered
// 0, 1, 2, ... in the order they appear in the rank block; dependencies name
// operations by that number.
type Stmt struct {
	Kind Kind
	// Size is the message size in bytes (send, recv) or the calc duration
	// in the schedule's time unit (calc).
	Size uint64
	// Peer is the destination (send) or source (recv) rank; AnySource for
	// "recv ... from -1".
	Peer uint32
	// Tag is the message tag; AnyTag for "tag -1" on a receive.
	Tag uint32
	// CPU and NIC are the host-local processor and network interface.
	// Invariant: ≤ MaxIndex.
	CPU, NIC uint8
	// A and B are operation numbers for Requires and IRequires: A waits for B.
	A, B uint64
	// Line is the 1-based line in the source text, 0 for generated
	// statements.
	Line int64
}

// AppendText appends s as one GOAL line (without newline) to buf. Operation
// number i is labelled "l<i>"; op is the number of this statement if it is an
// operation.
func (s *Stmt) AppendText(buf []byte, op uint64) []byte {
	switch s.Kind {
	case Requires, IRequires:
		buf = append(buf, 'l')
		buf = strconv.AppendUint(buf, s.A, 10)
		buf = append(buf, ' ')
		buf = append(buf, s.Kind.String()...)
		buf = append(buf, " l"...)
		return strconv.AppendUint(buf, s.B, 10)
	}
	buf = append(buf, 'l')
	buf = strconv.AppendUint(buf, op, 10)
	buf = append(buf, ": "...)
	buf = append(buf, s.Kind.String()...)
	buf = append(buf, ' ')
	buf = strconv.AppendUint(buf, s.Size, 10)
	switch s.Kind {
	case Send, Recv:
		if s.Kind == Send {
			buf = append(buf, "b to "...)
		} else {
			buf = append(buf, "b from "...)
		}
		buf = appendWild(buf, s.Peer)
		if s.Tag != 0 {
			buf = append(buf, " tag "...)
			buf = appendWild(buf, s.Tag)
		}
	}
	if s.CPU != 0 {
		buf = append(buf, " cpu "...)
		buf = strconv.AppendUint(buf, uint64(s.CPU), 10)
	}
	if s.NIC != 0 && s.Kind != Calc {
		buf = append(buf, " nic "...)
		buf = strconv.AppendUint(buf, uint64(s.NIC), 10)
	}
	return buf
}

func appendWild(buf []byte, v uint32) []byte {
	if v == math.MaxUint32 {
		return append(buf, "-1"...)
	}
	return strconv.AppendUint(buf, uint64(v), 10)
}

// Describe returns a short human description of an operation, e.g.
// "send 8b to 1 tag 0".
func (s *Stmt) Describe() string {
	w := func(v uint32) string {
		if v == math.MaxUint32 {
			return "-1"
		}
		return strconv.FormatUint(uint64(v), 10)
	}
	switch s.Kind {
	case Send:
		return fmt.Sprintf("send %db to %s tag %s cpu %d nic %d", s.Size, w(s.Peer), w(s.Tag), s.CPU, s.NIC)
	case Recv:
		return fmt.Sprintf("recv %db from %s tag %s cpu %d nic %d", s.Size, w(s.Peer), w(s.Tag), s.CPU, s.NIC)
	case Calc:
		return fmt.Sprintf("calc %d cpu %d", s.Size, s.CPU)
	}
	return fmt.Sprintf("op %d %s op %d", s.A, s.Kind, s.B)
}

// RankReader yields one rank's statements in program order.
type RankReader interface {
	// Next fills s with the next statement and reports false at the end of
	// the rank block.
	Next(s *Stmt) (bool, error)
}

// Window bounds how far ahead of the simulation a rank's program must be
// read for the simulation to be exact while streaming. Statements are
// numbered from 0 within the rank block.
type Window struct {
	// Lookahead bounds, in statements, how far ahead a dependency can
	// reach: for every dependency "A requires B" (or irequires) it is at
	// least fin(A) − min(pos(A), pos(B)), where fin(A) is the position of
	// the last dependency line naming A as the waiting operation.
	Lookahead uint64
	// Roots is one past the position of the last operation without
	// dependencies (0 if none).
	Roots uint64
	// Stmts is the number of statements of the rank.
	Stmts uint64
}

// Program is a GOAL schedule that can be read one rank at a time, in any
// order and concurrently for different ranks.
type Program interface {
	// NumRanks is the number of ranks (num_ranks).
	NumRanks() int
	// NumCPU and NumNIC are the CPUs and NICs per host: the highest index
	// used plus one.
	NumCPU() int
	NumNIC() int
	// Rank returns a fresh reader of rank r's statements.
	Rank(r int) (RankReader, error)
	// Window returns rank r's streaming window.
	Window(r int) Window
}
