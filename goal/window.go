package goal

import "math"

// winCalc computes a rank's Window from its statements as they are read.
// It needs memory proportional to the rank block (one entry per
// operation), and is used once per rank (while indexing a file, or on
// demand for a generator).
type winCalc struct {
	pos uint64  // position of the next statement
	ops []winOp // one per operation
}

// winOp is what the window needs of one operation. Instead of keeping
// every dependency edge (a, b) until the end of the block, it keeps the
// smallest min(pos(a), pos(b)) over a's edges: the Lookahead term of a's
// edges is fin(a) minus that, whatever fin(a) turns out to be.
type winOp struct {
	pos   uint64 // position of the operation
	fin   uint64 // last position at which it gained a dependency
	minLo uint64 // smallest min(pos(a), pos(b)) over its edges; noDeps if none
}

// noDeps marks an operation without dependencies.
const noDeps = math.MaxUint64

func (w *winCalc) reset() {
	w.pos = 0
	w.ops = w.ops[:0]
}

func (w *winCalc) op() {
	w.ops = append(w.ops, winOp{pos: w.pos, fin: w.pos, minLo: noDeps})
	w.pos++
}

// dep records "a requires b"; both must be operation numbers already seen.
func (w *winCalc) dep(a, b uint64) {
	oa := &w.ops[a]
	oa.fin = w.pos
	oa.minLo = min(oa.minLo, oa.pos, w.ops[b].pos)
	w.pos++
}

func (w *winCalc) window() Window {
	win := Window{Stmts: w.pos}
	for i := range w.ops {
		if o := &w.ops[i]; o.minLo != noDeps {
			win.Lookahead = max(win.Lookahead, o.fin-o.minLo)
		}
	}
	for i := len(w.ops) - 1; i >= 0; i-- {
		if w.ops[i].minLo == noDeps {
			win.Roots = w.ops[i].pos + 1
			break
		}
	}
	return win
}

// ScanWindow reads all of rr and returns its Window.
func ScanWindow(rr RankReader) (Window, error) {
	var w winCalc
	var s Stmt
	for {
		ok, err := rr.Next(&s)
		if err != nil {
			return Window{}, err
		}
		if !ok {
			return w.window(), nil
		}
		if s.Kind.IsOp() {
			w.op()
		} else {
			w.dep(s.A, s.B)
		}
	}
}
