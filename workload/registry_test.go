package workload

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/mpi"
	"github.com/gpunetsim/gpunetsim/strategy"
)

// TestMatrixComplete fails when a (strategy, workload) cell has neither an
// implementation nor a written reason it does not apply, or has both.
func TestMatrixComplete(t *testing.T) {
	for _, w := range Registry() {
		for _, s := range strategy.Registry() {
			im, ok := w.Impl(s)
			why, hasWhy := w.NotApplicable[s.Strategy]
			switch {
			case !ok && (!hasWhy || why == ""):
				t.Errorf("%s × %s: no implementation (caps %v) and no reason it does not apply", w.Name, s.Strategy, s.Caps)
			case ok && hasWhy:
				t.Errorf("%s × %s: implementation %q and also a reason it does not apply (%q)", w.Name, s.Strategy, im.Name, why)
			}
		}
		if b, err := strategy.Lookup(string(w.Baseline)); err != nil {
			t.Errorf("%s: baseline: %v", w.Name, err)
		} else if _, ok := w.Impl(b); !ok {
			t.Errorf("%s: baseline %s does not run it", w.Name, b.Strategy)
		}
		for name := range w.NotApplicable {
			if _, err := strategy.Lookup(string(name)); err != nil {
				t.Errorf("%s: NotApplicable names %v", w.Name, err)
			}
		}
	}
}

// TestMatrixCellsRun runs every applicable cell at its small size and checks
// it verifies.
func TestMatrixCellsRun(t *testing.T) {
	cfg := strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()}
	for _, w := range Registry() {
		for _, s := range strategy.Registry() {
			if _, ok := w.Impl(s); !ok {
				continue
			}
			hw, err := cluster.Preset(s.Preset)
			if err != nil {
				t.Fatal(err)
			}
			cell, err := w.Small(s, s.Adjust(hw), cfg, 1, true)
			if err != nil || !cell.Verified || cell.Time <= 0 {
				t.Errorf("%s × %s: %+v, %v", w.Name, s.Strategy, cell, err)
			}
		}
	}
}

func TestStrategyNamesAreUniqueAndParse(t *testing.T) {
	seen := map[strategy.Strategy]bool{}
	for _, s := range strategy.Registry() {
		if seen[s.Strategy] {
			t.Errorf("%s registered twice", s.Strategy)
		}
		seen[s.Strategy] = true
		if s.Setup == nil || s.Caps == 0 || s.Preset == "" {
			t.Errorf("%s: incomplete definition %+v", s.Strategy, s)
		}
		if _, err := cluster.Preset(s.Preset); err != nil {
			t.Errorf("%s: preset: %v", s.Strategy, err)
		}
	}
}

// writtenStrings returns every string the workload package's source spells
// out as a constant expression: literals, named string constants, and
// concatenations of those (every value a name may have, when constants of
// the same name live in different functions).
func writtenStrings(t *testing.T) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string][]ast.Expr{}
	var files []*ast.File
	for _, p := range pkgs {
		for _, f := range p.Files {
			files = append(files, f)
			ast.Inspect(f, func(n ast.Node) bool {
				if d, ok := n.(*ast.GenDecl); ok && d.Tok == token.CONST {
					for _, sp := range d.Specs {
						vs := sp.(*ast.ValueSpec)
						for i, name := range vs.Names {
							if i < len(vs.Values) {
								consts[name.Name] = append(consts[name.Name], vs.Values[i])
							}
						}
					}
				}
				return true
			})
		}
	}
	var fold func(e ast.Expr, depth int) []string
	fold = func(e ast.Expr, depth int) []string {
		if depth > 20 {
			return nil
		}
		switch e := e.(type) {
		case *ast.BasicLit:
			if e.Kind == token.STRING {
				if s, err := strconv.Unquote(e.Value); err == nil {
					return []string{s}
				}
			}
		case *ast.ParenExpr:
			return fold(e.X, depth+1)
		case *ast.Ident:
			var out []string
			for _, v := range consts[e.Name] {
				out = append(out, fold(v, depth+1)...)
			}
			return out
		case *ast.BinaryExpr:
			if e.Op != token.ADD {
				return nil
			}
			var out []string
			for _, a := range fold(e.X, depth+1) {
				for _, b := range fold(e.Y, depth+1) {
					out = append(out, a+b)
				}
			}
			return out
		}
		return nil
	}
	out := map[string]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if e, ok := n.(ast.Expr); ok {
				for _, s := range fold(e, 0) {
					out[s] = true
				}
			}
			return true
		})
	}
	return out
}

// Every not-applicable reason is written in the source as a whole
// sentence (a constant string expression), never assembled at run time
// from capability lists, strategy names or another workload's reasons.
func TestNotApplicableReasonsAreWritten(t *testing.T) {
	written := writtenStrings(t)
	if !written["%s does not run on %s: %s"] {
		t.Fatal("the source scan found no literal it should (implFor's error text)")
	}
	for _, w := range Registry() {
		for s, why := range w.NotApplicable {
			if !written[why] {
				t.Errorf("%s × %s: reason %q is not a string written in the source (generated?)", w.Name, s, why)
			}
		}
	}
}

// TestMatrixCompletePresentDay runs the matrix of every present-day preset
// on its own hardware (matrix.hardware = run): every applicable cell runs
// to a verified result, its small instance placed on whole nodes of
// node.gpus where it has fewer GPUs (node.placement), and every cell the
// machine does not run is the NIC's missing mechanism as the present-day
// strategy table has it (ConnectX-7: no NIC triggered operations; Cassini:
// no GPU-initiated verbs; neither enqueues kernels nor runs sPIN
// handlers), never a node count that does not fit.
func TestMatrixCompletePresentDay(t *testing.T) {
	cfg := strategy.Config{SW: cost.Default(), MPI: mpi.DefaultSpec()}
	refused := map[string][]strategy.Strategy{
		"connectx7": {strategy.GPUTN, strategy.XTQ, strategy.SpinSpecialized, strategy.SpinHPULocal, strategy.SpinROCP, strategy.SpinRWCP},
		"cassini":   {strategy.GNNGIO, strategy.GNNGPURDMA, strategy.XTQ, strategy.SpinSpecialized, strategy.SpinHPULocal, strategy.SpinROCP, strategy.SpinRWCP},
	}
	presets := cluster.PresentDay()
	if testing.Short() {
		presets = []string{"h100-cx7", "mi300a-ss11"} // 8 and 4 GPUs per node, both NICs
	}
	for _, p := range presets {
		hw, err := cluster.Preset(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range strategy.Registry() {
			h := s.Adjust(hw)
			err := s.RunsOn(h)
			if want := slices.Contains(refused[h.Caps.Model], s.Strategy); want != (err != nil) {
				t.Errorf("%s: %s refused = %v (%v), the present-day table says %v", p, s.Strategy, err != nil, err, want)
			}
			if err != nil {
				continue
			}
			for _, w := range Registry() {
				if _, ok := w.Impl(s); !ok {
					continue
				}
				cell, err := w.Small(s, h, cfg, 1, true)
				if err != nil || !cell.Verified || cell.Time <= 0 {
					t.Errorf("%s: %s × %s: %+v, %v", p, w.Name, s.Strategy, cell, err)
				}
			}
		}
	}
}
