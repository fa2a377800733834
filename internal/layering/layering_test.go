package layering

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/gpunetsim/gpunetsim/"

// rules maps a package path prefix (relative to the module) to the module
// prefixes it may import. The first matching rule wins.
var rules = []struct {
	pkg     string
	allowed []string
}{
	{"sim", nil},
	{"unit", []string{"sim"}},
	{"datatype", []string{"datatype"}},
	{"hw/", []string{"sim", "unit", "hw/", "datatype"}},
	{"model/", []string{"sim", "unit", "hw/", "model/", "datatype"}},
	{"strategy", []string{"sim", "unit", "hw/", "model/"}},
	// Workloads use programming models and the device API (kernels, memory
	// addresses, the cluster handle), never NIC, network, PCIe or CPU
	// internals.
	{"workload", []string{"sim", "unit", "hw/cluster", "hw/gpu", "hw/mem", "model/", "strategy", "datatype"}},
	{"goal", []string{"sim", "unit", "goal"}},
	{"loggops", []string{"sim", "unit", "goal", "loggops"}},
	{"trace", []string{"sim", "unit"}},
	{"exp", []string{"sim", "unit", "hw/", "model/", "strategy", "workload", "exp", "datatype", "trace", "goal", "loggops"}},
	{"internal/", []string{"sim", "unit"}},
	{"cmd/", []string{""}},
}

func TestImportsPointDown(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		allowed, ok := allowedFor(rel)
		if !ok {
			t.Errorf("%s: package %q has no layering rule; add one", path, rel)
			return nil
		}
		for _, imp := range f.Imports {
			p := strings.Trim(imp.Path.Value, `"`)
			if !strings.HasPrefix(p, module) {
				continue
			}
			target := strings.TrimPrefix(p, module)
			checked++
			if !permitted(target, allowed) {
				t.Errorf("%s imports %s: package %s may import only %v", path, target, rel, allowed)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no module imports checked; is the module root two levels up?")
	}
}

func allowedFor(pkg string) ([]string, bool) {
	for _, r := range rules {
		if pkg == strings.TrimSuffix(r.pkg, "/") || strings.HasPrefix(pkg, r.pkg) {
			return r.allowed, true
		}
	}
	return nil, false
}

func permitted(target string, allowed []string) bool {
	for _, a := range allowed {
		if a == "" || target == strings.TrimSuffix(a, "/") || strings.HasPrefix(target, a) || strings.HasPrefix(target, a+"/") {
			return true
		}
	}
	return false
}

func TestRulesCatchAnUpwardImport(t *testing.T) {
	allowed, _ := allowedFor("hw/nic")
	if permitted("model/mpi", allowed) || !permitted("sim", allowed) {
		t.Fatal("the hw rule must forbid model/ and allow sim")
	}
	allowed, _ = allowedFor("workload")
	if permitted("hw/nic", allowed) || !permitted("hw/gpu", allowed) {
		t.Fatal("the workload rule must forbid hw/nic and allow hw/gpu")
	}
	if _, err := os.Stat(filepath.Join("..", "..", "go.mod")); err != nil {
		t.Fatal(err)
	}
}
