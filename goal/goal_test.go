package goal

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
)

// readAll opens text and returns every rank's statements rendered as text.
// It also indexes text split into stretches at every possible "rank R {"
// line (the parallel path Open takes for large files), with the binary
// statements in temporary files rather than memory and small line buffers,
// and once more with every line through the general parser (no fused
// loop), and fails the test unless all give the same statements, line
// numbers and windows, or the same error.
func readAll(t testing.TB, text string) (string, error) {
	t.Helper()
	seq, seqDetail, seqErr := readAllWith(text, openOpts{parMin: 1 << 62, stretches: 1, spoolMem: spoolMem})
	for _, opts := range []openOpts{
		{parMin: 1, stretches: 4 + len(text)/16, workers: 1 + len(text)%3, spoolMem: len(text) % 7, bufSize: 1 + len(text)%61},
		{parMin: 1 << 62, stretches: 1, spoolMem: spoolMem, unfused: true},
	} {
		out, detail, err := readAllWith(text, opts)
		if out != seq || detail != seqDetail || fmt.Sprint(err) != fmt.Sprint(seqErr) {
			t.Fatalf("indexing with %+v differs:\n%s%s%v\nvs\n%s%s%v", opts, seq, seqDetail, seqErr, out, detail, err)
		}
	}
	return seq, seqErr
}

// readAllWith opens text with opts and returns the text WriteText prints
// and, in detail, every statement's line and every rank's window.
func readAllWith(text string, opts openOpts) (out, detail string, err error) {
	f, err := open(strings.NewReader(text), opts)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	var buf, det bytes.Buffer
	if err := WriteText(&buf, f); err != nil {
		return "", "", err
	}
	var s Stmt
	for r := range f.NumRanks() {
		fmt.Fprintf(&det, "rank %d %+v:", r, f.Window(r))
		rr, err := f.Rank(r)
		if err != nil {
			return "", "", err
		}
		for {
			ok, err := rr.Next(&s)
			if err != nil {
				return "", "", err
			}
			if !ok {
				break
			}
			fmt.Fprintf(&det, " %d", s.Line)
		}
		det.WriteByte('\n')
	}
	return buf.String(), det.String(), nil
}

func TestParseForms(t *testing.T) {
	text := `// leading comment
num_ranks 2 /* inline */
rank 0 {
  l1: send 8b to 1
  l2 : send 8 b to 1 tag 7 cpu 1 nic 2
  /* a block
     comment */ l3: calc 100 cpu 1
  l3 requires l1
  l3 irequires l2
}
rank 1 {
recv 8b from -1 tag -1
recv 8b from 0 tag 7 cpu 0 nic 2 // trailing
}
`
	got, err := readAll(t, text)
	if err != nil {
		t.Fatal(err)
	}
	want := `num_ranks 2
rank 0 {
l0: send 8b to 1
l1: send 8b to 1 tag 7 cpu 1 nic 2
l2: calc 100 cpu 1
l2 requires l0
l2 irequires l1
}
rank 1 {
l0: recv 8b from -1 tag -1
l1: recv 8b from 0 tag 7 nic 2
}
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	f, err := Open(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() // removes the temporary copy of the input
	if f.NumCPU() != 2 || f.NumNIC() != 3 {
		t.Errorf("NumCPU, NumNIC = %d, %d; want 2, 3", f.NumCPU(), f.NumNIC())
	}
}

// TestLines checks the line numbers carried by the statements, with the
// statements spooled in memory and in a file.
func TestLines(t *testing.T) {
	text := "// c\nnum_ranks 2\nrank 0 {\n\nl1: send 8b to 1\n/* x\n*/ l2: calc 5\n\n\nl2 requires l1\n}\nrank 1 {\nrecv 8b from 0 // y\n}\n"
	want := [][]int64{{5, 7, 10}, {13}}
	for _, mem := range []int{spoolMem, 0} {
		f, err := open(strings.NewReader(text), openOpts{parMin: 1, stretches: 2, spoolMem: mem})
		if err != nil {
			t.Fatal(err)
		}
		for r, lines := range want {
			rr, _ := f.Rank(r)
			var got []int64
			var s Stmt
			for {
				ok, err := rr.Next(&s)
				if err != nil {
					t.Fatal(err)
				}
				if !ok {
					break
				}
				got = append(got, s.Line)
			}
			if fmt.Sprint(got) != fmt.Sprint(lines) {
				t.Errorf("spool %d: rank %d lines %v, want %v", mem, r, got, lines)
			}
		}
		f.Close()
	}
}

func TestBadInput(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"no num_ranks", "rank 0 {\n}\n", "line 1: rank block before"},
		{"empty", "", `no "num_ranks P"`},
		{"malformed send", "num_ranks 1\nrank 0 {\nsend 8 to 0\n}\n", `line 3: want "send S b to R`},
		{"bad size", "num_ranks 1\nrank 0 {\nsend x8b to 0\n}\n", `line 3: want "send S b to R`},
		{"bad field order", "num_ranks 2\nrank 0 {\nsend 8b to 1 cpu 0 tag 1\n}\nrank 1 {\n}\n", "line 3: unexpected \"tag\": optional fields are tag, cpu, nic in that order"},
		{"ranks out of order", "num_ranks 2\nrank 1 {\n}\nrank 0 {\n}\n", "line 2: rank 1 out of order: want rank 0"},
		{"too many ranks", "num_ranks 1\nrank 0 {\n}\nrank 1 {\n}\n", "line 4: rank 1 out of range"},
		{"missing rank", "num_ranks 3\nrank 0 {\n}\nrank 1 {\n}\n", "want rank blocks 0..2"},
		{"unknown label", "num_ranks 1\nrank 0 {\na: calc 1\na requires zz\n}\n", `line 4: unknown label "zz"`},
		{"later label", "num_ranks 1\nrank 0 {\na: calc 1\na requires b\nb: calc 1\n}\n", `line 4: unknown label "b"`},
		{"label from other rank", "num_ranks 2\nrank 0 {\na: calc 1\n}\nrank 1 {\nb: calc 1\nb requires a\n}\n", `line 7: unknown label "a"`},
		{"peer out of range", "num_ranks 2\nrank 0 {\nsend 8b to 2\n}\nrank 1 {\n}\n", "line 3: rank 2 out of range: num_ranks is 2, want 0..1"},
		{"send any source", "num_ranks 2\nrank 0 {\nsend 8b to -1\n}\nrank 1 {\n}\n", "line 3: rank \"-1\": want a non-negative integer"},
		{"send any tag", "num_ranks 2\nrank 0 {\nsend 8b to 1 tag -1\n}\nrank 1 {\n}\n", "line 3: tag \"-1\""},
		{"duplicate label", "num_ranks 1\nrank 0 {\na: calc 1\na: calc 2\n}\n", `line 4: label "a" defined twice`},
		{"duplicate canonical label", "num_ranks 1\nrank 0 {\nl0: calc 1\nl0: calc 2\n}\n", `line 4: label "l0" defined twice`},
		{"canonical label defined late", "num_ranks 1\nrank 0 {\nl1: calc 1\nl1: calc 2\n}\n", `line 4: label "l1" defined twice`},
		{"canonical label not yet defined", "num_ranks 1\nrank 0 {\nl0: calc 1\nl0 requires l1\nl1: calc 2\n}\n", `line 4: unknown label "l1"`},
		{"unclosed", "num_ranks 1\nrank 0 {\ncalc 1\n", `end of input inside rank 0: want "}"`},
		{"op outside", "num_ranks 1\ncalc 1\n", "line 2: statement outside a rank block"},
		{"cpu too big", "num_ranks 1\nrank 0 {\ncalc 1 cpu 256\n}\n", "line 3: cpu \"256\": want an integer up to 255"},
		{"nic on calc", "num_ranks 1\nrank 0 {\ncalc 1 nic 1\n}\n", `line 3: unexpected "nic": calc takes only an optional "cpu C"`},
		{"bad char", "num_ranks 1\nrank 0 {\ncalc 1;\n}\n", "line 3: unexpected character ';'"},
		{"unterminated comment", "num_ranks 1\n/* rank 0 {\n", "unterminated /* comment"},
		{"nested rank", "num_ranks 2\nrank 0 {\nrank 1 {\n}\n", "line 3: rank 1 inside rank 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := readAll(t, tc.text)
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			if !errors.Is(err, ErrSyntax) {
				t.Errorf("error %v does not wrap ErrSyntax", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
}

// TestWindows checks the closed-form generator windows against a scan.
func TestWindows(t *testing.T) {
	for _, g := range []*Generated{Ring(1, 8), Ring(2, 8), Ring(3, 8), Ring(9, 8), RecDoub(1, 8), RecDoub(2, 8), RecDoub(4, 8), RecDoub(32, 8), Bcast(1, 8), Bcast(2, 8), Bcast(7, 8), Bcast(64, 8), Bcast(100, 8), AllToAll(1, 8), AllToAll(2, 8), AllToAll(7, 8)} {
		for r := range g.NumRanks() {
			want, err := ScanWindow(g.newRR(r))
			if err != nil {
				t.Fatal(err)
			}
			if got := g.Window(r); got != want {
				t.Errorf("%s rank %d: window %+v, scanned %+v", g, r, got, want)
			}
		}
	}
}

func TestGeneratorsRoundTrip(t *testing.T) {
	for _, spec := range []string{"ring:ranks=4,size=1KiB", "recdoub:ranks=8,size=100", "bcast:ranks=11,size=8",
		"halo:x=3,y=2,iters=2,size=64,compute=1us", "halo:ranks=6", "alltoall:ranks=4,size=2KiB"} {
		t.Run(spec, func(t *testing.T) {
			g, err := ParsePattern(spec)
			if err != nil {
				t.Fatal(err)
			}
			var a bytes.Buffer
			if err := WriteText(&a, g); err != nil {
				t.Fatal(err)
			}
			b, err := readAll(t, a.String())
			if err != nil {
				t.Fatalf("re-reading generated text: %v", err)
			}
			if a.String() != b {
				t.Errorf("round trip differs:\n%s\nvs\n%s", a.String(), b)
			}
		})
	}
}

func TestBcastShape(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteText(&buf, Bcast(6, 8)); err != nil {
		t.Fatal(err)
	}
	want := `num_ranks 6
rank 0 {
l0: send 8b to 1
l1: send 8b to 2
l2: send 8b to 4
}
rank 1 {
l0: recv 8b from 0
l1: send 8b to 3
l1 requires l0
l2: send 8b to 5
l2 requires l0
}
rank 2 {
l0: recv 8b from 0
}
rank 3 {
l0: recv 8b from 1
}
rank 4 {
l0: recv 8b from 0
}
rank 5 {
l0: recv 8b from 1
}
`
	if buf.String() != want {
		t.Errorf("got\n%s", buf.String())
	}
}

func TestBadPattern(t *testing.T) {
	for _, tc := range []struct{ spec, want string }{
		{"ring", "missing ranks=N"},
		{"ring:ranks=0", "want an integer"},
		{"ring:ranks=4,size=lots", "size"},
		{"recdoub:ranks=6", "power of two"},
		{"tree:ranks=4", "want one of ring, recdoub, bcast, halo, alltoall"},
		{"ring:ranks=4,colour=red", `unknown parameter "colour"`},
		{"halo:x=2,y=2,compute=1.5ps", "whole nanoseconds"},
		// Too large is said as such, with the maximum, not as a format.
		{"halo:x=2,y=2,compute=9223372036854775807ns", "too large: want at most 9223372036854775ns"},
		{"halo:x=2,y=2,compute=9223372036854776ns", "too large: want at most 9223372036854775ns"},
		{"halo:x=2,y=2,compute=-1ns", "want a duration in [0, 9223372036854775ns]"},
		{"ring:ranks", "want key=value"},
	} {
		_, err := ParsePattern(tc.spec)
		if err == nil || !errors.Is(err, ErrPattern) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParsePattern(%q) = %v, want error containing %q", tc.spec, err, tc.want)
		}
	}
}

// FuzzOpen checks that the reader never panics and that whatever it
// accepts re-reads identically after being written back as text.
func FuzzOpen(f *testing.F) {
	f.Add("num_ranks 2\nrank 0 {\nl1: send 8b to 1 tag 3\n}\nrank 1 {\nl1: recv 8 b from -1 tag -1 cpu 1 nic 1\n}\n")
	f.Add("num_ranks 1\nrank 0 {\na: calc 5\nb: calc 6 cpu 2\nb requires a\nb irequires a\n}\n")
	f.Add("/* x */ num_ranks 1 // y\nrank 0 {\n/*\n*/\n}\n")
	f.Add("num_ranks 1\nrank 0 {\na: calc 1\na requires a\n}\n")
	f.Add("num_ranks 3\nrank 0 {\n/*\nrank 1 {\n*/\n}\nrank 1 {\nx: send 8b to 2\n}\nrank 2 {\nrecv 8b from 1\n}\n")
	f.Add("num_ranks 3\nrank 0 {\n}\nrank 1 {\nrank 2 {\n}\nrank 2 {\n}\n")
	f.Add("num_ranks 1\nrank 0 {\nl1: calc 1\nl0: calc 2\nl01: calc 3\nl2: calc 4\nl2 requires l1\nl01 requires l0\n}\n")
	f.Add("num_ranks 2\nrank 0 {\n}\nrank 1 {\n}\nrank 2 {\n}\n")
	// The fused loop's shapes, and lines it must leave to the general
	// parser (errors, wildcards, labels out of order, spacing, comments).
	f.Add("num_ranks 2\nrank 0 {\nl0: send 8b to 1\nl1: recv 8b from 1 tag 4294967294 cpu 2 nic 3\nl2: calc 7 cpu 1\nl2 requires l1\nl2 irequires l0\n}\nrank 1 {\nl0: recv 8 b from 0\nl1: send 8b to 0\nl1 requires l0\n}\n")
	f.Add("num_ranks 2\nrank 0 {\nl0: send 8b to 2\n}\nrank 1 {\n}\n")
	f.Add("num_ranks 2\nrank 0 {\nl0: calc 1\nl0: calc 2\n}\nrank 1 {\n}\n")
	f.Add("num_ranks 1\nrank 0 {\nl0: calc 1\nl1: calc 2\nl1 requires l2\nl1 requires l1\n}\n")
	f.Add("num_ranks 1\nrank 0 {\nl0: calc 1\nl2: calc 2\nl1: calc 3\nl2 requires l0\nl3: calc 4\n}\n")
	f.Add("num_ranks 1\nrank 0 {\nl0: calc 1\r\nl1: calc 2 nic 1\nl1: calc 3 cpu 256\n}\n")
	f.Add("num_ranks 2\nrank 0 {\nl0: send 8b to 1 tag 4294967295\nl1: recv 8b from -1\nl2: send 99999999999999999999b to 1\n}\nrank 1 {\n}\n")
	f.Add("num_ranks 1\nrank 0 {\nl0: calc 1 /*\nl1: calc 2\n*/ l1: calc 3\nl1 requires l0 // c\n}")
	f.Fuzz(func(t *testing.T, text string) {
		out, err := readAll(t, text)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error %v does not wrap ErrSyntax", err)
			}
			return
		}
		again, err := readAll(t, out)
		if err != nil {
			t.Fatalf("written text does not re-read: %v\n%s", err, out)
		}
		if again != out {
			t.Fatalf("round trip differs:\n%s\nvs\n%s", out, again)
		}
	})
}

func ExampleWriteText() {
	var buf bytes.Buffer
	_ = WriteText(&buf, Ring(2, 16))
	fmt.Print(buf.String())
	// Output:
	// num_ranks 2
	// rank 0 {
	// l0: send 8b to 1
	// l1: recv 8b from 1
	// l2: send 8b to 1 tag 1
	// l2 requires l1
	// l3: recv 8b from 1 tag 1
	// l3 requires l1
	// }
	// rank 1 {
	// l0: send 8b to 0
	// l1: recv 8b from 0
	// l2: send 8b to 0 tag 1
	// l2 requires l1
	// l3: recv 8b from 0 tag 1
	// l3 requires l1
	// }
}

// TestLongLine reads lines longer than the reader's buffers.
func TestLongLine(t *testing.T) {
	long := strings.Repeat("x", 1<<20+3)
	text := "num_ranks 1\n// " + long + "\nrank 0 {\nl0: calc 1 /* " + long + " */\n" + long + ": calc 2\n" + long + " requires l0\n}\n"
	got, err := readAll(t, text)
	if err != nil {
		t.Fatal(err)
	}
	want := "num_ranks 1\nrank 0 {\nl0: calc 1\nl1: calc 2\nl1 requires l0\n}\n"
	if got != want {
		t.Errorf("got\n%.200s\nwant\n%s", got, want)
	}
	_, err = readAll(t, text+"oops\n")
	if err == nil || !strings.Contains(err.Error(), "line 8:") {
		t.Errorf("error %v, want one on line 8", err)
	}
}
