package datatype

import (
	goparser "go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportsStdlibOnly: the engine imports nothing but the standard
// library (test files may also use rapid, and external examples this
// package); datatype/apps adds only this package.
func TestImportsStdlibOnly(t *testing.T) {
	const self = "github.com/gpunetsim/gpunetsim/datatype"
	for _, dir := range []string{".", "apps"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			af, err := goparser.ParseFile(token.NewFileSet(), f, src, goparser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			test := strings.HasSuffix(f, "_test.go")
			for _, imp := range af.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				first, _, _ := strings.Cut(p, "/")
				switch {
				case !strings.Contains(first, "."): // standard library
				case test && p == "pgregory.net/rapid":
				case dir == "apps" && p == self:
				case test && af.Name.Name == "datatype_test" && p == self: // examples as users write them
				default:
					t.Errorf("%s imports %s", f, p)
				}
			}
		}
	}
}
