package goal

// winCalc computes a rank's Window from its statements as they are read.
// It needs memory proportional to the rank block, and is used once per rank
// (while indexing a file, or on demand for a generator).
type winCalc struct {
	pos   uint64   // position of the next statement
	opPos []uint64 // position of each operation
	fin   []uint64 // last position at which each operation gained a dependency
	deps  []uint32 // dependencies per operation
	edges []uint64 // pairs (a, b)
}

func (w *winCalc) reset() {
	w.pos = 0
	w.opPos, w.fin, w.deps, w.edges = w.opPos[:0], w.fin[:0], w.deps[:0], w.edges[:0]
}

func (w *winCalc) op() {
	w.opPos = append(w.opPos, w.pos)
	w.fin = append(w.fin, w.pos)
	w.deps = append(w.deps, 0)
	w.pos++
}

// dep records "a requires b"; both must be operation numbers already seen.
func (w *winCalc) dep(a, b uint64) {
	w.fin[a] = w.pos
	w.deps[a]++
	w.edges = append(w.edges, a, b)
	w.pos++
}

func (w *winCalc) window() Window {
	win := Window{Stmts: w.pos}
	for i := 0; i < len(w.edges); i += 2 {
		a, b := w.edges[i], w.edges[i+1]
		lo := min(w.opPos[a], w.opPos[b])
		if d := w.fin[a] - lo; d > win.Lookahead {
			win.Lookahead = d
		}
	}
	for i := len(w.deps) - 1; i >= 0; i-- {
		if w.deps[i] == 0 {
			win.Roots = w.opPos[i] + 1
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
