package workload

import (
	"runtime"
	"strings"
	"testing"
)

// A seeded routing gives every token TopK distinct experts, is the same
// for the same seed and differs for another, and survives a CSV round trip.
func TestSeededRoutingRoundTrip(t *testing.T) {
	sh := MoEShape{GPUs: 8, Experts: 32, TopK: 4, Tokens: 16}
	a, err := SeededRouting(sh, 3)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := SeededRouting(sh, 3)
	c, _ := SeededRouting(sh, 4)
	if string(a.CSV()) != string(b.CSV()) || string(a.CSV()) == string(c.CSV()) {
		t.Error("seeded routing: same seed must give the same table, another seed another")
	}
	back, err := ParseRouting(a.CSV(), sh)
	if err != nil {
		t.Fatal(err)
	}
	if string(back.CSV()) != string(a.CSV()) {
		t.Error("CSV round trip changed the routing")
	}
}

// Every malformed table is refused with a message naming the line and the
// field.
func TestParseRoutingErrors(t *testing.T) {
	sh := MoEShape{GPUs: 2, Experts: 4, TopK: 2, Tokens: 1}
	ok := "gpu,token,expert,weight\n0,0,1,0.5\n0,0,2,0.5\n1,0,3,1\n1,0,0,0.25\n"
	if _, err := ParseRouting([]byte(ok), sh); err != nil {
		t.Fatalf("valid table: %v", err)
	}
	if _, err := ParseRouting([]byte("\ufeff"+ok), sh); err != nil {
		t.Errorf("valid table after a byte-order mark: %v", err)
	}
	for _, tc := range []struct{ in, want string }{
		{"0,0,1\n", "line 1: 3 fields"},
		{"2,0,1,1\n", "line 1: gpu"},
		{"0,1,1,1\n", "line 1: token"},
		{"0,0,4,1\n", "line 1: expert"},
		{"0,0,1,-1\n", "line 1: weight"},
		{"0,0,1,NaN\n", "line 1: weight"},
		{"0,0,1,1\n0,0,1,1\n", "line 2: gpu 0 token 0 lists expert 1 twice"},
		{"0,0,1,1\n0,0,2,1\n0,0,3,1\n", "line 3: gpu 0 token 0 has more than moe.topk"},
		{"0,0,1,1\n0,0,2,1\n", "gpu 1 token 0 has 0 experts"},
		{strings.Repeat("x", 70000), "64 KiB"},
	} {
		_, err := ParseRouting([]byte(tc.in), sh)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.40q: %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

// ParseRouting never panics; what it accepts is a complete routing that
// writes back to a table it accepts again, identically.
func FuzzParseRouting(f *testing.F) {
	f.Add([]byte("gpu,token,expert,weight\n0,0,1,0.5\n0,0,2,0.5\n1,0,3,1\n1,0,0,0.25\n"))
	f.Add([]byte("# comment\n\n0,0,1,1e-3\n0,0,0,7\n1,0,2,0\n1,0,3,1\n"))
	f.Add([]byte("0,0,1,1\n0,0,1,1\n"))
	sh := MoEShape{GPUs: 2, Experts: 4, TopK: 2, Tokens: 1}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRouting(data, sh)
		if err != nil {
			return
		}
		for i, e := range r.Expert {
			if e < 0 || int(e) >= sh.Experts || r.Weight[i] < 0 {
				t.Fatalf("accepted expert %d weight %v", e, r.Weight[i])
			}
		}
		back, err := ParseRouting(r.CSV(), sh)
		if err != nil || string(back.CSV()) != string(r.CSV()) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// A table far too small for its shape is refused before the shape's
// tables are allocated: the largest shape's 8.6e9 entries took the
// runtime's out-of-memory crash before; here 8.4 M entries, 67 MB.
func TestParseRoutingTooSmallAllocatesNothing(t *testing.T) {
	sh := MoEShape{GPUs: 256, Experts: 256, TopK: 8, Tokens: 4096}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ParseRouting([]byte("gpu,token,expert,weight\n0,0,1,1\n"), sh)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "cannot hold the 8388608 entries") {
		t.Errorf("err = %v, want the entries the file cannot hold", err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Errorf("allocated %d bytes before refusing", d)
	}
}
