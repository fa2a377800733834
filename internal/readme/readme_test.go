package readme

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the module root, two levels up.
const root = "../.."

// goBlocks returns the README's ```go blocks.
func goBlocks(t *testing.T) []string {
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		out = append(out, m[1])
	}
	return out
}

// example is one Example function: its body printed statement by
// statement, and the imports of its file.
type example struct {
	where   string
	body    string
	imports map[string]bool
}

// bodyText prints a function body's statements, without comments, so
// that a snippet and an example compare by code.
func bodyText(fset *token.FileSet, body *ast.BlockStmt) string {
	var b bytes.Buffer
	for _, s := range body.List {
		printer.Fprint(&b, fset, s)
		b.WriteByte('\n')
	}
	return b.String()
}

func importsOf(f *ast.File) map[string]bool {
	m := map[string]bool{}
	for _, im := range f.Imports {
		m[strings.Trim(im.Path.Value, `"`)] = true
	}
	return m
}

// examples parses every *_test.go of the module and returns its Example
// functions.
func examples(t *testing.T) []example {
	var out []example
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(src, []byte("func Example")) {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, 0)
		if err != nil {
			return err
		}
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Example") {
				out = append(out, example{where: path + ":" + fn.Name.Name, body: bodyText(fset, fn.Body), imports: importsOf(f)})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSnippetsAreExamples fails when a README Go snippet is not a whole
// program whose main body is an Example of the module (so it compiles and
// runs under go test), or imports what that example's file does not.
func TestSnippetsAreExamples(t *testing.T) {
	blocks := goBlocks(t)
	if len(blocks) == 0 {
		t.Fatal("no ```go blocks in README.md")
	}
	exs := examples(t)
	for i, block := range blocks {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "snippet.go", block, 0)
		if err != nil {
			t.Errorf("README Go snippet %d does not parse as a program: %v", i+1, err)
			continue
		}
		var main *ast.FuncDecl
		for _, d := range f.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "main" {
				main = fn
			}
		}
		if f.Name.Name != "main" || main == nil {
			t.Errorf("README Go snippet %d: want package main with func main", i+1)
			continue
		}
		body := bodyText(fset, main.Body)
		found := false
		for _, ex := range exs {
			if ex.body != body {
				continue
			}
			found = true
			for im := range importsOf(f) {
				if !ex.imports[im] {
					t.Errorf("README Go snippet %d imports %q, which %s's file does not", i+1, im, ex.where)
				}
			}
		}
		if !found {
			t.Errorf("README Go snippet %d: no Example function of the module has its main body:\n%s", i+1, body)
		}
	}
}
