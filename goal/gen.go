package goal

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"sort"
	"strconv"
	"strings"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// ErrPattern reports a bad generator specification.
var ErrPattern = errors.New("goal: bad pattern")

// Patterns lists the generator names accepted by ParsePattern, with their
// parameters.
var Patterns = []struct{ Name, Params, Doc string }{
	{"ring", "ranks, size", "ring allreduce: reduce-scatter then allgather, 2(N-1) steps of ceil(size/N)-byte chunks"},
	{"recdoub", "ranks (power of two), size", "recursive-doubling allreduce: log2 N exchanges of size bytes"},
	{"bcast", "ranks, size", "binomial-tree broadcast of size bytes from rank 0"},
	{"halo", "ranks or x,y; size, iters, compute", "2-D periodic halo exchange: per iteration a calc, then 4 neighbour exchanges"},
	{"alltoall", "ranks, size", "linear all-to-all: every rank sends size bytes to every other rank"},
}

// Generated is a schedule produced on the fly by a generator. It implements
// Program; its operations use cpu 0 and nic 0.
type Generated struct {
	name  string
	n     int
	spec  string
	newRR func(r int) RankReader
	win   func(r int) Window // nil: scan the rank
}

// NumRanks returns the number of ranks.
func (g *Generated) NumRanks() int { return g.n }

// NumCPU returns 1.
func (g *Generated) NumCPU() int { return 1 }

// NumNIC returns 1.
func (g *Generated) NumNIC() int { return 1 }

// Rank returns a reader of rank r's statements.
func (g *Generated) Rank(r int) (RankReader, error) { return g.newRR(r), nil }

// Window returns rank r's window, computed by generating the rank once
// unless the pattern knows it in closed form.
func (g *Generated) Window(r int) Window {
	if g.win != nil {
		return g.win(r)
	}
	w, _ := ScanWindow(g.newRR(r))
	return w
}

// exchangeWindow is the window of exchange(steps, ...): step 0 is a send
// and a receive (the roots); each later step is a send, its dependency, a
// receive and its dependency, both naming the previous receive.
func exchangeWindow(steps int) Window {
	switch {
	case steps <= 0:
		return Window{}
	case steps == 1:
		return Window{Roots: 2, Stmts: 2}
	case steps == 2:
		return Window{Lookahead: 4, Roots: 2, Stmts: 6}
	}
	return Window{Lookahead: 5, Roots: 2, Stmts: 2 + 4*uint64(steps-1)}
}

// String returns the canonical specification, e.g. "ring:ranks=4,size=1KiB".
func (g *Generated) String() string { return g.spec }

// stmtList is a rank reader over a small closure-driven statement stream:
// fill appends the statements of step i to buf and reports false when done.
type stmtList struct {
	buf  []Stmt
	i    int
	step int
	fill func(step int, buf []Stmt) ([]Stmt, bool)
	end  bool
}

func (l *stmtList) Next(s *Stmt) (bool, error) {
	for l.i >= len(l.buf) {
		if l.end {
			return false, nil
		}
		var more bool
		l.buf, more = l.fill(l.step, l.buf[:0])
		l.i = 0
		l.step++
		if !more {
			l.end = true
		}
	}
	*s = l.buf[l.i]
	l.i++
	return true, nil
}

func op(k Kind, size uint64, peer, tag uint32) Stmt {
	return Stmt{Kind: k, Size: size, Peer: peer, Tag: tag}
}

func dep(k Kind, a, b uint64) Stmt { return Stmt{Kind: k, A: a, B: b} }

// exchange is a program of steps: in step i the rank sends size bytes to
// peer(i) and receives from the matching peer; both wait for the previous
// step's receive. It is a plain struct, not a closure over a buffer: a
// 65,536-rank ring holds one per rank and reads one per simulated event.
type exchange struct {
	steps int
	size  uint64
	rank  uint32
	right uint32 // ring: the send peer; 0 for recursive doubling
	left  uint32 // ring: the receive peer
	xor   bool   // recursive doubling: the peer is rank xor 2^i
	step  int    // current step
	pos   int    // next statement within the step
}

func (e *exchange) peers(i int) (to, from uint32) {
	if e.xor {
		p := e.rank ^ 1<<i
		return p, p
	}
	return e.right, e.left
}

// Next produces step i's statements: send, then (for i > 0) its dependency
// on receive i−1, then the receive and its dependency.
func (e *exchange) Next(st *Stmt) (bool, error) {
	i := e.step
	if i >= e.steps {
		return false, nil
	}
	s, r := uint64(2*i), uint64(2*i+1)
	to, from := e.peers(i)
	j := e.pos
	if i == 0 && j == 1 {
		j = 2 // step 0 has no dependencies
	}
	switch j {
	case 0:
		*st = op(Send, e.size, to, uint32(i))
	case 1:
		*st = dep(Requires, s, r-2)
	case 2:
		*st = op(Recv, e.size, from, uint32(i))
	case 3:
		*st = dep(Requires, r, r-2)
	}
	e.pos = j + 1
	if e.pos == 4 || i == 0 && e.pos == 3 {
		e.step, e.pos = i+1, 0
	}
	return true, nil
}

// Ring returns a ring allreduce of size bytes on n ranks: n−1 reduce-scatter
// steps and n−1 allgather steps, each passing a ⌈size/n⌉-byte chunk to the
// right neighbour. Each step's send and receive wait for the previous
// step's receive.
func Ring(n int, size uint64) *Generated {
	chunk := (size + uint64(n) - 1) / uint64(n)
	steps := 2 * (n - 1)
	return &Generated{name: "ring", n: n, spec: fmt.Sprintf("ring:ranks=%d,size=%s", n, unit.Bytes(size)),
		newRR: func(r int) RankReader {
			return &exchange{steps: steps, size: chunk, rank: uint32(r), right: uint32((r + 1) % n), left: uint32((r - 1 + n) % n)}
		},
		win: func(int) Window { return exchangeWindow(steps) }}
}

// RecDoub returns a recursive-doubling allreduce of size bytes on n = 2^k
// ranks: in round i each rank exchanges size bytes with rank r xor 2^i.
func RecDoub(n int, size uint64) *Generated {
	k := bits.Len(uint(n)) - 1
	return &Generated{name: "recdoub", n: n, spec: fmt.Sprintf("recdoub:ranks=%d,size=%s", n, unit.Bytes(size)),
		newRR: func(r int) RankReader {
			return &exchange{steps: k, size: size, rank: uint32(r), xor: true}
		},
		win: func(int) Window { return exchangeWindow(k) }}
}

// Bcast returns a binomial-tree broadcast of size bytes from rank 0 on n
// ranks. Rank r ≠ 0 receives from r − 2^j (2^j ≤ r < 2^(j+1)) and then
// sends to r + 2^i for i = j+1, j+2, ... while below n; the root sends to
// 2^i for i = 0, 1, .... Sends wait for the receive.
func Bcast(n int, size uint64) *Generated {
	return &Generated{name: "bcast", n: n, spec: fmt.Sprintf("bcast:ranks=%d,size=%s", n, unit.Bytes(size)),
		newRR: func(r int) RankReader { return &bcastReader{n: n, r: r, size: size} },
		win: func(r int) Window {
			if r == 0 {
				k := uint64(bits.Len(uint(n - 1)))
				return Window{Roots: k, Stmts: k}
			}
			m := uint64(0) // children
			for e := bits.Len(uint(r)); r+1<<e < n; e++ {
				m++
			}
			if m == 0 {
				return Window{Roots: 1, Stmts: 1}
			}
			return Window{Lookahead: 2 * m, Roots: 1, Stmts: 1 + 2*m}
		}}
}

// bcastReader produces rank r's part of Bcast: a plain struct rather than
// a closure over a buffer, since a million-rank broadcast holds one per
// rank at once.
type bcastReader struct {
	n, r  int
	size  uint64
	i     int  // operations produced
	dep   bool // the dependency of send i−1 is next
	first int  // rank r ≠ 0: exponent of its first child
}

func (b *bcastReader) Next(st *Stmt) (bool, error) {
	if b.dep {
		b.dep = false
		*st = dep(Requires, uint64(b.i-1), 0)
		return true, nil
	}
	if b.r == 0 {
		if 1<<b.i >= b.n {
			return false, nil
		}
		*st = op(Send, b.size, uint32(1<<b.i), 0)
		b.i++
		return true, nil
	}
	if b.i == 0 {
		j := bits.Len(uint(b.r)) - 1
		b.first = j + 1
		*st = op(Recv, b.size, uint32(b.r-1<<j), 0)
		b.i++
		return true, nil
	}
	e := b.first + b.i - 1
	if b.r+1<<e >= b.n {
		return false, nil
	}
	*st = op(Send, b.size, uint32(b.r+1<<e), 0)
	b.i++
	b.dep = true
	return true, nil
}

// Halo returns a 2-D periodic halo exchange on an x × y grid: per
// iteration each rank runs calc compute (in GOAL time units), posts
// receives from its four neighbours once the calc starts, and sends size
// bytes to each neighbour once it ends; the next calc waits for all eight
// transfers.
func Halo(x, y, iters int, size, compute uint64) *Generated {
	n := x * y
	return &Generated{name: "halo", n: n,
		spec: fmt.Sprintf("halo:x=%d,y=%d,iters=%d,size=%s,compute=%d", x, y, iters, unit.Bytes(size), compute),
		newRR: func(r int) RankReader {
			cx, cy := r%x, r/x
			at := func(dx, dy int) uint32 { return uint32(((cy+dy+y)%y)*x + (cx+dx+x)%x) }
			// Directions W, E, N, S; a message sent towards d carries tag d.
			nb := [4]uint32{at(-1, 0), at(1, 0), at(0, -1), at(0, 1)}
			opposite := [4]uint32{1, 0, 3, 2}
			return &stmtList{fill: func(i int, buf []Stmt) ([]Stmt, bool) {
				if i >= iters {
					return buf, false
				}
				base := uint64(i * 9)
				buf = append(buf, op(Calc, compute, 0, 0))
				if i > 0 {
					for k := uint64(1); k <= 8; k++ {
						buf = append(buf, dep(Requires, base, base-9+k))
					}
				}
				for d := range 4 {
					buf = append(buf, op(Recv, size, nb[d], opposite[d]), dep(IRequires, base+1+uint64(d), base))
				}
				for d := range 4 {
					buf = append(buf, op(Send, size, nb[d], uint32(d)), dep(Requires, base+5+uint64(d), base))
				}
				return buf, i+1 < iters
			}}
		}}
}

// AllToAll returns a linear all-to-all: in step j = 1..n−1 each rank posts
// a receive from r − j and a send of size bytes to r + j; nothing waits.
func AllToAll(n int, size uint64) *Generated {
	// Every operation is a root (nothing waits): a rank's whole block is
	// in memory from the start, 2(n−1) operations.
	win := Window{Roots: 2 * uint64(max(n-1, 0)), Stmts: 2 * uint64(max(n-1, 0))}
	return &Generated{name: "alltoall", n: n, spec: fmt.Sprintf("alltoall:ranks=%d,size=%s", n, unit.Bytes(size)),
		win: func(int) Window { return win },
		newRR: func(r int) RankReader {
			return &stmtList{fill: func(i int, buf []Stmt) ([]Stmt, bool) {
				j := i + 1
				if j >= n {
					return buf, false
				}
				buf = append(buf, op(Recv, size, uint32((r-j+n)%n), 0), op(Send, size, uint32((r+j)%n), 0))
				return buf, j+1 < n
			}}
		}}
}

// maxRanks bounds generated rank counts.
const maxRanks = 1 << 26

// ParsePattern builds a generator from "name:key=value,key=value", e.g.
// "ring:ranks=1024,size=8MiB" or "halo:x=8,y=8,iters=10,size=4KiB,compute=20us".
// Sizes take units (unit.ParseBytes); compute is a duration (sim.ParseDuration)
// written to GOAL as whole nanoseconds, LogGOPSim's time unit.
func ParsePattern(spec string) (*Generated, error) {
	name, args, _ := strings.Cut(spec, ":")
	kv := map[string]string{}
	if args != "" {
		for _, f := range strings.Split(args, ",") {
			k, v, ok := strings.Cut(f, "=")
			if !ok || k == "" {
				return nil, fmt.Errorf("%w %q: parameter %q: want key=value", ErrPattern, spec, f)
			}
			kv[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return NewPattern(name, kv)
}

// maxCompute is the largest halo compute time: the largest simulated time
// in whole nanoseconds.
const maxCompute = sim.MaxTime / sim.Nanosecond * sim.Nanosecond

// parseCompute parses a halo compute time, saying which bound a bad one
// breaks: the range [0, maxCompute] or whole nanoseconds.
func parseCompute(v string) (sim.Time, error) {
	c, err := sim.ParseDuration(v)
	rng := fmt.Sprintf("[0, %dns]", maxCompute/sim.Nanosecond)
	switch {
	case errors.Is(err, sim.ErrDurationTooLarge) && !strings.HasPrefix(strings.TrimSpace(v), "-"), err == nil && c > maxCompute:
		return 0, fmt.Errorf("too large: want at most %dns", maxCompute/sim.Nanosecond)
	case err == nil && c < 0, errors.Is(err, sim.ErrDurationTooLarge):
		return 0, fmt.Errorf("want a duration in %s", rng)
	case err != nil || c%sim.Nanosecond != 0:
		return 0, fmt.Errorf("want a duration in whole nanoseconds in %s, e.g. 20us", rng)
	}
	return c, nil
}

// NewPattern builds the named generator from its parameters (see Patterns).
func NewPattern(name string, kv map[string]string) (*Generated, error) {
	used := map[string]bool{}
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w %s: %s", ErrPattern, name, fmt.Sprintf(format, a...))
	}
	getInt := func(k string, def int) (int, error) {
		used[k] = true
		v, ok := kv[k]
		if !ok {
			if def < 0 {
				return 0, bad("missing %s=N", k)
			}
			return def, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxRanks {
			return 0, bad("%s=%q: want an integer 1..%d", k, v, maxRanks)
		}
		return n, nil
	}
	getSize := func(k, def string) (uint64, error) {
		used[k] = true
		v, ok := kv[k]
		if !ok {
			v = def
		}
		b, err := unit.ParseBytes(v)
		if err != nil {
			return 0, bad("%s: %v", k, err)
		}
		return uint64(b), nil
	}
	var (
		g   *Generated
		err error
	)
	switch name {
	case "ring", "recdoub", "bcast", "alltoall":
		var n int
		var size uint64
		if n, err = getInt("ranks", -1); err != nil {
			return nil, err
		}
		if size, err = getSize("size", "8B"); err != nil {
			return nil, err
		}
		switch name {
		case "ring":
			g = Ring(n, size)
		case "recdoub":
			if n&(n-1) != 0 {
				return nil, bad("ranks=%d: want a power of two", n)
			}
			g = RecDoub(n, size)
		case "bcast":
			g = Bcast(n, size)
		case "alltoall":
			g = AllToAll(n, size)
		}
	case "halo":
		x, y := 0, 0
		_, hasX := kv["x"]
		_, hasY := kv["y"]
		if _, ok := kv["ranks"]; ok && (hasX || hasY) {
			// Not "unknown parameter x": x and y are the grid's other spelling.
			return nil, bad("ranks=%s with x or y: give ranks (a near-square grid) or x and y, not both", kv["ranks"])
		}
		if _, ok := kv["ranks"]; ok {
			n, err := getInt("ranks", -1)
			if err != nil {
				return nil, err
			}
			x = 1
			for d := 1; d*d <= n; d++ {
				if n%d == 0 {
					x = d
				}
			}
			y = n / x
		} else {
			if x, err = getInt("x", -1); err != nil {
				return nil, err
			}
			if y, err = getInt("y", -1); err != nil {
				return nil, err
			}
			if x*y > maxRanks {
				return nil, bad("x*y = %d: at most %d ranks", x*y, maxRanks)
			}
		}
		iters, err := getInt("iters", 1)
		if err != nil {
			return nil, err
		}
		size, err := getSize("size", "8B")
		if err != nil {
			return nil, err
		}
		used["compute"] = true
		c := sim.Time(0)
		if v, ok := kv["compute"]; ok {
			if c, err = parseCompute(v); err != nil {
				return nil, bad("compute=%q: %v", v, err)
			}
		}
		g = Halo(x, y, iters, size, uint64(c/sim.Nanosecond))
	default:
		names := make([]string, len(Patterns))
		for i, p := range Patterns {
			names[i] = p.Name
		}
		return nil, fmt.Errorf("%w %q: want one of %s", ErrPattern, name, strings.Join(names, ", "))
	}
	var unknown []string
	for k := range kv {
		if !used[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, bad("unknown parameter %q", unknown[0])
	}
	return g, nil
}

// WriteText writes p as GOAL text: num_ranks, then each rank block with
// operations labelled l0, l1, ... and dependencies on their own lines.
func WriteText(w io.Writer, p Program) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	buf := make([]byte, 0, 128)
	fmt.Fprintf(bw, "num_ranks %d\n", p.NumRanks())
	var s Stmt
	for r := range p.NumRanks() {
		rr, err := p.Rank(r)
		if err != nil {
			return err
		}
		fmt.Fprintf(bw, "rank %d {\n", r)
		var nops uint64
		for {
			ok, err := rr.Next(&s)
			if err != nil {
				return err
			}
			if !ok {
				break
			}
			buf = s.AppendText(buf[:0], nops)
			buf = append(buf, '\n')
			if _, err := bw.Write(buf); err != nil {
				return err
			}
			if s.Kind.IsOp() {
				nops++
			}
		}
		bw.WriteString("}\n")
	}
	return bw.Flush()
}
