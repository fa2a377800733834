package docrefs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// root is the module root, two levels up.
const root = "../.."

// outside matches a reference to a file that is not in the repository:
// the specification's files (and the size list of its CNTK projection)
// and its calibration set.
var outside = regexp.MustCompile(`\b(workloads|hardware|errata|nic|gpu-networking|datatypes|overview|present-day)\.md\b|\bcntk_sizes\.yaml\b|shared/(spec|validation|fixtures)/`)

// TestNoReferencesOutsideTheRepository fails on such a reference in a
// Markdown file (README, docs/, package READMEs) or in a string of a
// non-test Go file.
func TestNoReferencesOutsideTheRepository(t *testing.T) {
	var bad []string
	check := func(where, text string) {
		for _, m := range outside.FindAllString(text, -1) {
			bad = append(bad, where+": "+m)
		}
	}
	var docs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			docs = append(docs, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range docs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			check(rel(p)+":"+itoa(i+1), line)
		}
	}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		// Strings only (struct tags included: parameter descriptions);
		// comments are for the code's readers.
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				check(fset.Position(lit.Pos()).String(), lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Errorf("%s: cite the source document by title (docs/bibliography.md) or a docs/ section instead", b)
	}
}

// TestTheCheckFindsReferences guards the pattern itself.
func TestTheCheckFindsReferences(t *testing.T) {
	for _, s := range []string{"(workloads.md §4.5)", "hardware.md §6", "errata.md E4.2", "shared/spec/nic.md", "see datatypes.md", "shared/fixtures/ddt", "the cntk_sizes.yaml placeholders"} {
		if !outside.MatchString(s) {
			t.Errorf("%q is not caught", s)
		}
	}
	for _, s := range []string{"docs/spin.md", "the dissertation's Table 5.1", "README.md", "docs/today.md"} {
		if outside.MatchString(s) {
			t.Errorf("%q is caught, but it is in the repository or a title", s)
		}
	}
}

func rel(p string) string {
	if r, err := filepath.Rel(root, p); err == nil {
		return r
	}
	return p
}

func itoa(n int) string { return strconv.Itoa(n) }
