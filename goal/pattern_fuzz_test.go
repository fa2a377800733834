package goal

import (
	"errors"
	"testing"
)

// FuzzParsePattern checks that a generator spec is refused with
// ErrPattern-style error text or yields a schedule of a bounded rank count
// whose spec parses again to the same schedule; it never panics.
func FuzzParsePattern(f *testing.F) {
	for _, s := range []string{"ring:ranks=8,size=1MiB", "recdoub:ranks=16,size=4KiB", "bcast:ranks=1024", "halo:x=4,y=4,size=1KiB,iters=2",
		"alltoall:ranks=4,size=8b", "ring:ranks=0", "halo:x=100000,y=100000", "ring:size=9223372036854775807B", "ring:", ":", "nosuch"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		g, err := ParsePattern(spec)
		if err != nil {
			if err.Error() == "" || errors.Is(err, nil) {
				t.Fatal("empty error")
			}
			return
		}
		if n := g.NumRanks(); n < 1 || n > 1<<26 {
			t.Fatalf("%q: %d ranks", spec, n)
		}
		again, err := ParsePattern(g.String())
		if err != nil || again.NumRanks() != g.NumRanks() {
			t.Fatalf("%q prints %q, which parses to %v, %v", spec, g.String(), again, err)
		}
	})
}
