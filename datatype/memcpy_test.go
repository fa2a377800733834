package datatype

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// TestMemcpyKernel: the temporal-store copy kernel, at every alignment of
// source and destination and lengths around its 32-byte alignment step,
// 128-byte loop and 128-byte tail, copies exactly the bytes asked for
// (guard bytes on both sides stay as they were).
func TestMemcpyKernel(t *testing.T) {
	const guard = 64
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(256, 5000).Draw(rt, "n")
		so := rapid.IntRange(0, 63).Draw(rt, "srcOffset")
		do := rapid.IntRange(0, 63).Draw(rt, "dstOffset")
		src := fill(so + n + guard)
		dst := make([]byte, guard+do+n+guard)
		for i := range dst {
			dst[i] = 0xa5
		}
		want := bytes.Clone(dst)
		copy(want[guard+do:], src[so:so+n])
		if !memcpyTemporal(dst[guard+do:guard+do+n], src[so:so+n]) && hasAVX {
			rt.Fatal("memcpyTemporal did not run on a CPU with AVX")
		}
		if !hasAVX {
			copy(dst[guard+do:], src[so:so+n])
		}
		if !bytes.Equal(dst, want) {
			rt.Fatalf("n %d src+%d dst+%d: wrong bytes or bytes outside the copy changed", n, so, do)
		}
	})
}

// TestMemcpy: Memcpy behaves as copy — count, bytes, overlapping slices in
// both directions — at sizes below, at and above the 1 MiB from which it
// uses its own kernel.
func TestMemcpy(t *testing.T) {
	for _, n := range []int{0, 1, 255, 4096, runtimeNTMin - 1, runtimeNTMin, runtimeNTMin + 333} {
		src := fill(n + 100)
		for _, dl := range []int{n, n + 7, n / 2} {
			dst, want := make([]byte, dl), make([]byte, dl)
			if got, w := Memcpy(dst, src[3:3+n]), copy(want, src[3:3+n]); got != w || !bytes.Equal(dst, want) {
				t.Fatalf("n %d len(dst) %d: Memcpy copied %d bytes (want %d) or wrong bytes", n, dl, got, w)
			}
		}
		for _, back := range []bool{false, true} {
			buf := fill(n + 5)
			want := bytes.Clone(buf)
			d, s, wd, ws := buf[5:], buf[:n], want[5:], want[:n]
			if back {
				d, s, wd, ws = buf[:n], buf[5:], want[:n], want[5:]
			}
			Memcpy(d, s)
			copy(wd, ws)
			if !bytes.Equal(buf, want) {
				t.Fatalf("n %d backward %v: overlapping Memcpy differs from copy", n, back)
			}
		}
	}
}

// TestParseCacheSize reads the sysfs cache size forms and rejects others.
func TestParseCacheSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{{"32768K", 32 << 20}, {"2M", 2 << 20}, {"512", 512}, {"", 0}, {"-4K", 0}, {"x", 0}, {"99999999999K", 0}} {
		if got := parseCacheSize(c.in); got != c.want {
			t.Errorf("parseCacheSize(%q) = %d, want %d", c.in, got, c.want)
		}
	}
	if th := sharedCacheThreshold(); th < 1<<20 {
		t.Errorf("non-temporal threshold %d bytes: implausibly small", th)
	}
}

// TestLargeBlocks: types whose blocks are 1 MiB and longer (one block,
// and a vector of them, where pack and unpack move each block with Memcpy)
// pack and unpack to the bytes the naive interpreter gives.
func TestLargeBlocks(t *testing.T) {
	for _, text := range []string{
		"contig(1048576)<byte>",
		"contig(1049000)<byte>",
		"hvector(2,1,1100000)<contig(1048577)<byte>>",
	} {
		ty := MustParse(text)
		es := naiveMap(ty, 1)
		lo, hi := naiveSpan(es)
		user := fill(hi - lo)
		want := naivePack(es, user, -lo)
		c := ty.Commit()
		packed := make([]byte, len(want))
		if _, err := c.Pack(packed, user, -lo, 1); err != nil || !bytes.Equal(packed, want) {
			t.Fatalf("%s: pack differs from the interpreter (err %v)", text, err)
		}
		back := make([]byte, len(user))
		if _, err := c.Unpack(back, -lo, packed, 1); err != nil {
			t.Fatalf("%s: unpack: %v", text, err)
		}
		wantBack := make([]byte, len(user))
		naiveUnpack(es, wantBack, -lo, packed)
		if !bytes.Equal(back, wantBack) {
			t.Fatalf("%s: unpack differs from the interpreter", text)
		}
	}
}
