package goal

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// FuzzFastLine checks that the fast line parsers (parseCompact and
// parseFast) agree with the general one on every line they accept.
func FuzzFastLine(f *testing.F) {
	for _, l := range []string{
		"l0: send 8192b to 1", "l1: recv 8 b from 1023 tag 4 cpu 1 nic 2", "x2 : calc 100 cpu 3",
		"l2 requires l1", "  a irequires b  ", "send 8b to 1 tag 7", "recv 8b from -1 tag -1",
		"calc 5 nic 1", "l0: send 8b to 1 // c", "rank 3 {", "}", "num_ranks 4", "send: calc 1",
		"l0: send 18446744073709551615b to 1", "a requires 8b", "l0: send 8bb to 1",
		"rank requires x", "send requires x", "l0: calc 5 cpu 2", "l0: recv 8 b from 3 tag 0 nic 1",
		"l0: send 1234567890123456789012b to 1", "l9 irequires l8", "l0: send 8b to 2147483648",
	} {
		f.Add(l)
	}
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsRune(line, '\n') {
			return
		}
		for _, fn := range []func([]byte, *parsed) bool{parseCompact, parseFast} {
			checkFast(t, line, fn)
		}
	})
}

func checkFast(t *testing.T, line string, parse func([]byte, *parsed) bool) {
	var fast parsed
	if !parse([]byte(line), &fast) {
		return
	}
	t.Helper()
	var z tokenizer
	toks, err := z.split([]byte(line))
	if err != nil {
		t.Fatalf("fast path accepted %q, tokenizer says %v", line, err)
	}
	var slow parsed
	if err := parseLine(toks, &slow); err != nil {
		t.Fatalf("fast path accepted %q, parser says %v", line, err)
	}
	if !bytes.Equal(fast.label, slow.label) || !bytes.Equal(fast.label2, slow.label2) {
		t.Fatalf("%q: labels %q %q, want %q %q", line, fast.label, fast.label2, slow.label, slow.label2)
	}
	fast.label, fast.label2, slow.label, slow.label2 = nil, nil, nil, nil
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%q: fast %+v, general %+v", line, fast, slow)
	}
}

// TestLabelTab checks the label table against a map, with trimming.
func TestLabelTab(t *testing.T) {
	tab := newLabelTab()
	want := map[string][2]uint64{}
	for i := range uint64(5000) {
		l := []byte("lab" + strings.Repeat("x", int(i%7)) + string(rune('a'+i%26)) + itoa(i))
		if tab.put(l, i, i) {
			t.Fatalf("put %q: reported a duplicate", l)
		}
		want[string(l)] = [2]uint64{i, i}
		if i%1000 == 999 {
			cut := i - 100
			tab.rebuild(func(e *labelEnt) bool { return e.pos >= cut })
			for k, v := range want {
				if v[1] < cut {
					delete(want, k)
				}
			}
		}
	}
	if tab.n != len(want) {
		t.Fatalf("%d labels, want %d", tab.n, len(want))
	}
	for k, v := range want {
		op, pos, ok := tab.get([]byte(k))
		if !ok || op != v[0] || pos != v[1] {
			t.Fatalf("get %q = %d %d %v, want %d %d", k, op, pos, ok, v[0], v[1])
		}
	}
	if _, _, ok := tab.get([]byte("nope")); ok {
		t.Fatal("found a label never put")
	}
	for k := range want {
		if !tab.put([]byte(k), 1, 1) {
			t.Fatalf("re-put %q did not report the existing label", k)
		}
		if op, _, _ := tab.get([]byte(k)); op != 1 {
			t.Fatalf("re-put %q did not update it", k)
		}
	}
}

func itoa(v uint64) string {
	var b []byte
	for {
		b = append([]byte{byte('0' + v%10)}, b...)
		if v /= 10; v == 0 {
			return string(b)
		}
	}
}

func TestByteClass(t *testing.T) {
	for c := range 256 {
		b := byte(c)
		ws := b == ' ' || b == '\t' || b == '\r' || b == '\n' || b == '\f' || b == '\v'
		if got := byteClass[b]&classWord != 0; got != isWordByte(b) {
			t.Errorf("byte %#x: word %v, want %v", b, got, isWordByte(b))
		}
		if isSpace(b) != ws {
			t.Errorf("byte %#x: space %v, want %v", b, isSpace(b), ws)
		}
	}
}

// TestCompactAccepts checks that the compact parser takes the lines
// WriteText prints (so the speed measured for them is its speed).
func TestCompactAccepts(t *testing.T) {
	var p parsed
	for _, l := range []string{"l0: send 8192b to 1", "l12: recv 8b from 1023 tag 7", "l3 requires l1",
		"l4 irequires l2", "l5: calc 100 cpu 1", "l6: send 8b to 1 tag 2 cpu 1 nic 3"} {
		if !parseCompact([]byte(l), &p) {
			t.Errorf("parseCompact rejects %q", l)
		}
	}
}

// TestFusedAccepts checks that the fused loop takes every statement line
// WriteText prints for the generators (so the speed measured for them is
// its speed), leaving only the "rank R {" and "}" lines to the general
// parser.
func TestFusedAccepts(t *testing.T) {
	for _, g := range []*Generated{Ring(8, 1<<20), RecDoub(8, 1<<10), Bcast(8, 8), Halo(3, 3, 2, 64, 1000), AllToAll(4, 64)} {
		var buf bytes.Buffer
		if err := WriteText(&buf, g); err != nil {
			t.Fatal(err)
		}
		text := buf.Bytes()
		for r := range g.NumRanks() {
			head := []byte("rank " + itoa(uint64(r)) + " {\n")
			start := bytes.Index(text, head) + len(head)
			end := start + bytes.Index(text[start:], []byte("}\n"))
			ix := newIndexer(openOpts{spoolMem: spoolMem})
			ix.numRanks, ix.inRank = g.NumRanks(), r
			n, lines, err := ix.indexLines(text[start:end], 0)
			if err != nil || n != end-start || lines != int64(bytes.Count(text[start:end], []byte("\n"))) {
				t.Fatalf("%T rank %d: indexLines took %d of %d bytes, %d lines (%v); stopped at %.40q", g, r, n, end-start, lines, err, text[start+n:end])
			}
		}
	}
}
