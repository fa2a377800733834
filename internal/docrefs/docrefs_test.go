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
// Markdown file (README, docs/, package READMEs) or in a string or comment
// of a non-test Go file.
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
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return err
		}
		// Strings (struct tags included: parameter descriptions) and
		// comments (package and API documentation).
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				check(fset.Position(lit.Pos()).String(), lit.Value)
			}
			return true
		})
		for _, cg := range f.Comments {
			check(fset.Position(cg.Pos()).String(), cg.Text())
		}
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

// section matches a section sign and number ("§6.2", "§ 11.1–11.5").
var section = regexp.MustCompile(`§ ?[0-9][0-9.–a-z]*`)

// named matches the words that say whose section a "§" is: a document by
// title (the dissertation, a paper, a chapter, the GIO slides, the Intel
// SDM, a guide or manual, the MPI standard), or another section of a list.
var named = regexp.MustCompile(`dissertation|paper|chapter|slides|SDM|vol\.|[Gg]uide|manual|specification|standard|MPI-[0-9]|Table|PCIe Base|thesis|§`)

// TestSectionsNameTheirDocument fails on a bare "§N" in a Markdown file or
// a package's doc.go:
// without the document's title within the 80 characters before it (on its
// line or the one above), it reads as a section of the repository's docs,
// and it was in fact a section of the specification the repository does
// not hold ("§11.1 throughput vs block size").
func TestSectionsNameTheirDocument(t *testing.T) {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		// Markdown, and package documentation (doc.go files).
		if d.IsDir() || !strings.HasSuffix(p, ".md") && d.Name() != "doc.go" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, bad := range bareSections(string(b)) {
			t.Errorf("%s:%s: name the document (the dissertation's §…, the GIO slides …) or a docs/ section", rel(p), bad)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// bareSections returns "line: excerpt" for each section sign in text whose
// document is not named before it (see named).
func bareSections(text string) []string {
	var bad []string
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		for _, m := range section.FindAllStringIndex(line, -1) {
			ctx := line[:m[0]]
			if i > 0 {
				ctx = lines[i-1] + " " + ctx
			}
			if len(ctx) > 80 {
				ctx = ctx[len(ctx)-80:]
			}
			if !named.MatchString(ctx) {
				bad = append(bad, itoa(i+1)+": "+line[max(0, m[0]-40):m[1]])
			}
		}
	}
	return bad
}

// TestTheSectionCheckFindsBareSections guards bareSections.
func TestTheSectionCheckFindsBareSections(t *testing.T) {
	for _, s := range []string{"gpunetsim run ddt_vector   # §11.1 throughput", "the RTR protocol of §6.", "presets: §6.1 `compnet`"} {
		if len(bareSections(s)) == 0 {
			t.Errorf("%q is not caught", s)
		}
	}
	for _, s := range []string{"the dissertation's §4.1.2", "(the GPUrdma paper, §4.2, before §4.3)", "the Intel SDM, vol. 3 §8.2.2", "the dissertation's\n§4.1.2"} {
		if bad := bareSections(s); len(bad) > 0 {
			t.Errorf("%q is caught (%q), but it names its document", s, bad)
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

// script matches a shell script's name ("big1024.sh", "/tmp/measure.sh").
var script = regexp.MustCompile(`[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.sh\b`)

// TestScriptsAreInTheRepository fails on a Markdown file naming a shell
// script the repository does not hold: the docs said measurements were
// taken with "big1024.sh's form of the command" and "/tmp/measure_auto.sh",
// scripts of a session's machine that no reader has; write the command.
func TestScriptsAreInTheRepository(t *testing.T) {
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && p != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".md") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, bad := range missingScripts(string(b), func(name string) bool {
			for _, dir := range []string{root, filepath.Dir(p)} {
				if fi, err := os.Stat(filepath.Join(dir, name)); err == nil && !fi.IsDir() {
					return true
				}
			}
			return false
		}) {
			t.Errorf("%s:%s: a script not in the repository; write the command it runs", rel(p), bad)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// missingScripts returns "line: name" for each script named in text that
// exists reports absent.
func missingScripts(text string, exists func(string) bool) []string {
	var bad []string
	for i, line := range strings.Split(text, "\n") {
		for _, m := range script.FindAllString(line, -1) {
			if strings.HasPrefix(m, "/") || !exists(m) {
				bad = append(bad, itoa(i+1)+": "+m)
			}
		}
	}
	return bad
}

// TestTheScriptCheckFindsScripts guards missingScripts.
func TestTheScriptCheckFindsScripts(t *testing.T) {
	none := func(string) bool { return false }
	all := func(string) bool { return true }
	for _, s := range []string{"(`big1024.sh`, the binary of main)", "(`/tmp/measure_auto.sh`: `-bench`)", "measure2.sh: -benchtime 1x"} {
		if len(missingScripts(s, none)) == 0 {
			t.Errorf("%q is not caught", s)
		}
	}
	if bad := missingScripts("run `/tmp/x.sh` first", all); len(bad) == 0 {
		t.Errorf("an absolute path outside the repository is not caught")
	}
	for _, s := range []string{".ci/run", "docs/speed.md", "the shell's default", "a .sh file"} {
		if bad := missingScripts(s, none); len(bad) > 0 {
			t.Errorf("%q is caught (%q), but names no script", s, bad)
		}
	}
}
