package loggops

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// gccCase is one line of testdata/gccsort/golden.txt: input keys and the
// order of original indices that g++'s std::sort, comparing keys only,
// leaves them in.
type gccCase struct {
	label string
	keys  []int
	perm  []int
}

const gccGolden = "testdata/gccsort/golden.txt"

func readGccCases(t *testing.T) []gccCase {
	t.Helper()
	data, err := os.ReadFile(gccGolden)
	if err != nil {
		t.Fatal(err)
	}
	ints := func(line int, s string) []int {
		var v []int
		for _, f := range strings.Fields(s) {
			x, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s:%d: %v", gccGolden, line, err)
			}
			v = append(v, x)
		}
		return v
	}
	var cases []gccCase
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		parts := strings.Split(line, "|")
		if len(parts) != 3 {
			t.Fatalf("%s:%d: want label|keys|perm, got %q", gccGolden, i+1, line)
		}
		c := gccCase{label: parts[0], keys: ints(i+1, parts[1]), perm: ints(i+1, parts[2])}
		if len(c.perm) != len(c.keys) {
			t.Fatalf("%s:%d: %d keys but %d indices", gccGolden, i+1, len(c.keys), len(c.perm))
		}
		cases = append(cases, c)
	}
	return cases
}

type gccElem struct{ key, idx int }

func gccByKey(a, b gccElem) bool { return a.key < b.key }

// run sorts c's keys paired with their indices, as gen.cpp did: with
// gccSort, or for "partial_sort-" lines with the heap-sort fallback alone.
// It returns the resulting index order, the number of parts gccSort
// heap-sorted, and whether the keys have duplicates.
func (c gccCase) run() (perm []int, heapSorts int, dups bool) {
	s := make([]gccElem, len(c.keys))
	for i, k := range c.keys {
		s[i] = gccElem{k, i}
	}
	if strings.HasPrefix(c.label, "partial_sort-") {
		gccPartialSort(s, gccByKey)
	} else {
		heapSorts = gccSortCounted(s, gccByKey)
	}
	perm = make([]int, len(s))
	for i, e := range s {
		perm[i] = e.idx
		dups = dups || i > 0 && e.key == s[i-1].key
	}
	return perm, heapSorts, dups
}

// TestGccSortGolden checks gccSort against the permutations that g++'s
// std::sort produced (testdata/gccsort/gen.cpp), and that the heap-sort
// fallback is among the paths exercised, also with equal keys.
func TestGccSortGolden(t *testing.T) {
	cases := readGccCases(t)
	if len(cases) < 1500 {
		t.Fatalf("only %d golden cases", len(cases))
	}
	heapCases, heapDupCases, partialSortCases := 0, 0, 0
	for _, c := range cases {
		got, h, dups := c.run()
		if h > 0 {
			heapCases++
			if dups {
				heapDupCases++
			}
		}
		if strings.HasPrefix(c.label, "partial_sort-") {
			partialSortCases++
		}
		if !slices.Equal(got, c.perm) {
			i := 0
			for got[i] == c.perm[i] {
				i++
			}
			t.Errorf("%s (n=%d): order differs from g++ first at position %d: got index %d, want %d",
				c.label, len(c.keys), i, got[i], c.perm[i])
		}
	}
	t.Logf("%d cases: %d std::sort ones hit the heap-sort fallback (%d with equal keys); %d partial_sort ones",
		len(cases), heapCases, heapDupCases, partialSortCases)
	if heapCases < 20 || heapDupCases < 12 || partialSortCases < 100 {
		t.Errorf("heap-sort fallback exercised too little")
	}
}

// TestGccSortHeapFallback checks that the adversarial inputs do take the
// heap-sort path, at small and large n, while random ones do not.
func TestGccSortHeapFallback(t *testing.T) {
	want := map[string]bool{
		"n40-adversary":        true,
		"n100-adversary":       true,
		"n1000-adversary":      true,
		"n5000-adversary":      true,
		"n100-adversary-div2":  true,
		"n1000-adversary-div3": true,
		"n5000-adversary-div3": true,
		"n1000-perm":           false,
		"n1000-d1":             false,
		"n1000-d3":             false,
		"n5000-d3":             false,
	}
	for _, c := range readGccCases(t) {
		w, ok := want[c.label]
		if !ok {
			continue
		}
		delete(want, c.label)
		if _, h, _ := c.run(); (h > 0) != w {
			t.Errorf("%s: %d heap-sort fallbacks", c.label, h)
		}
	}
	for label := range want {
		t.Errorf("no golden case %s", label)
	}
}

// TestGccSortGoldenRegenerate recompiles gen.cpp with g++ and checks that it
// still prints the committed golden file.
func TestGccSortGoldenRegenerate(t *testing.T) {
	if testing.Short() {
		t.Skip("short mode")
	}
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "gen")
	if out, err := exec.Command(gxx, "-O2", "-o", bin, "testdata/gccsort/gen.cpp").CombinedOutput(); err != nil {
		// A g++ without a usable libstdc++ says nothing about the sort;
		// the golden test above still runs.
		t.Skipf("g++ cannot build gen.cpp: %v\n%s", err, out)
	}
	got, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(gccGolden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("gen.cpp output differs from %s; regenerate it (see gen.cpp)", gccGolden)
	}
}

// TestGccSortProperties checks with rapid that gccSort sorts and permutes,
// for comparators that order by a part of the element only.
func TestGccSortProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		keys := rapid.SliceOfN(rapid.IntRange(0, rapid.IntRange(0, 300).Draw(t, "max")), 0, 600).Draw(t, "keys")
		s := make([]gccElem, len(keys))
		for i, k := range keys {
			s[i] = gccElem{k, i}
		}
		heap := slices.Clone(s)
		gccSort(s, gccByKey)
		gccPartialSort(heap, gccByKey) // the heap-sort fallback on its own
		checkGccSorted(t, keys, s)
		checkGccSorted(t, keys, heap)
	})
}

func checkGccSorted(t *rapid.T, keys []int, s []gccElem) {
	seen := make([]bool, len(s))
	for i, e := range s {
		if e.idx < 0 || e.idx >= len(s) || seen[e.idx] || keys[e.idx] != e.key {
			t.Fatalf("position %d holds %+v: not a permutation of the input", i, e)
		}
		seen[e.idx] = true
		if i > 0 && gccByKey(e, s[i-1]) {
			t.Fatalf("not sorted at position %d: %d after %d", i, e.key, s[i-1].key)
		}
	}
}

// TestGccSortNoAlloc checks that gccSort allocates nothing.
func TestGccSortNoAlloc(t *testing.T) {
	src := make([]gccElem, 1000)
	for i := range src {
		src[i] = gccElem{(i * 7919) % 3, i}
	}
	s := make([]gccElem, len(src))
	allocs := testing.AllocsPerRun(10, func() {
		copy(s, src)
		gccSort(s, gccByKey)
	})
	if allocs != 0 {
		t.Errorf("gccSort allocates %v times per call", allocs)
	}
}
