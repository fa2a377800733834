package apps

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var fixtureDir = filepath.Join("..", "..", "..", "shared", "fixtures", "ddt")

func fill(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*131 + 7)
	}
	return b
}

// TestFixtureCases: each app_* fixture is reproduced by the constructors,
// as text and as packed bytes.
func TestFixtureCases(t *testing.T) {
	if _, err := os.Stat(fixtureDir); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("fixtures not found at %s", fixtureDir)
	}
	cases, err := FixtureCases()
	if err != nil {
		t.Fatal(err)
	}
	paths, _ := filepath.Glob(filepath.Join(fixtureDir, "app_*.json"))
	if len(paths) == 0 {
		t.Fatal("no app_* fixtures")
	}
	for _, p := range paths {
		name := strings.TrimSuffix(filepath.Base(p), ".json")
		t.Run(name, func(t *testing.T) {
			var f struct {
				Desc      string `json:"desc"`
				Count     int    `json:"count"`
				BufLen    int    `json:"buf_len"`
				PackedSHA string `json:"packed_sha256"`
			}
			raw, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &f); err != nil {
				t.Fatal(err)
			}
			c, ok := cases[name]
			if !ok {
				t.Fatalf("no constructor for %s", name)
			}
			if got := c.Type.String(); got != f.Desc {
				t.Fatalf("type\n got %s\nwant %s", got, f.Desc)
			}
			if c.Count != f.Count {
				t.Errorf("count %d, want %d", c.Count, f.Count)
			}
			if c.BufLen < f.BufLen {
				t.Errorf("buffer %d bytes, fixture needs %d", c.BufLen, f.BufLen)
			}
			packed := make([]byte, c.PackedSize())
			if _, err := c.Type.Commit().Pack(packed, fill(c.BufLen), 0, c.Count); err != nil {
				t.Fatal(err)
			}
			h := sha256.Sum256(packed)
			if got := hex.EncodeToString(h[:]); got != f.PackedSHA {
				t.Errorf("packed sha %s, want %s", got, f.PackedSHA)
			}
		})
	}
}

// TestAllCases: every benchmark size builds, fits its buffer and round-trips.
func TestAllCases(t *testing.T) {
	cases, err := AllCases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			cm := c.Type.Commit()
			lo, hi, err := cm.Span(c.Count)
			if err != nil || lo < 0 || hi > c.BufLen {
				t.Fatalf("span [%d,%d) outside buffer %d: %v", lo, hi, c.BufLen, err)
			}
			if c.BufLen > 64<<20 || testing.Short() && c.BufLen > 8<<20 {
				t.Skipf("buffer of %d MiB; smaller sizes of the same type cover it", c.BufLen>>20)
			}
			src := fill(c.BufLen)
			packed := make([]byte, c.PackedSize())
			if _, err := cm.Pack(packed, src, 0, c.Count); err != nil {
				t.Fatal(err)
			}
			// The reference walk of the type map packs the same bytes.
			ref := make([]byte, 0, len(packed))
			for off, n := range c.Type.Blocks(c.Count) {
				ref = append(ref, src[off:off+n]...)
			}
			if string(ref) != string(packed) {
				t.Fatal("committed pack differs from the type-map walk")
			}
			dst := make([]byte, c.BufLen)
			if _, err := cm.Unpack(dst, 0, packed, c.Count); err != nil {
				t.Fatal(err)
			}
			again := make([]byte, len(packed))
			if _, err := cm.Pack(again, dst, 0, c.Count); err != nil {
				t.Fatal(err)
			}
			if string(again) != string(packed) {
				t.Fatal("pack(unpack(pack(x))) != pack(x)")
			}
		})
	}
}

func TestBadSizes(t *testing.T) {
	for name, f := range map[string]func() (Case, error){
		"lu":     func() (Case, error) { return NASLUx(0, 3) },
		"mg":     func() (Case, error) { return NASMG('q', 10, 10, 10) },
		"fft":    func() (Case, error) { return FFT2D(10, 3, true) },
		"comb":   func() (Case, error) { return COMB(8, 1, [3]int{0, 0, 0}, false) },
		"wrf":    func() (Case, error) { return WRF("bad", WRFDefault(1, 5, 1, 5, 3, 9, 1, 2), false) },
		"sw4":    func() (Case, error) { return SW4LITE('z', false, 4, 4, 4, 2) },
		"lammps": func() (Case, error) { return LAMMPS(true, true, -1, 4) },
	} {
		if _, err := f(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestIndexList(t *testing.T) {
	got := IndexList(3, 100)
	want := []int{13, 32, 51} // a = 7919
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("IndexList(3,100) = %v, want %v", got, want)
		}
	}
	if l := IndexList(2, 7919); l[1] != (7920+13)%7919 {
		t.Fatalf("a must skip 7919 for D=7919: %v", l)
	}
}

// TestLAMMPSExchange: what the send type packs, the receive type unpacks
// into the ghost atoms D.. of each per-atom array, in list order.
func TestLAMMPSExchange(t *testing.T) {
	for _, full := range []bool{false, true} {
		const icount, d = 37, 101
		send, err := LAMMPS(full, false, icount, d)
		if err != nil {
			t.Fatal(err)
		}
		recv, err := LAMMPS(full, true, icount, d)
		if err != nil {
			t.Fatal(err)
		}
		if send.PackedSize() != recv.PackedSize() || send.BufLen != recv.BufLen {
			t.Fatalf("send/recv sizes differ: %d/%d bytes, %d/%d buffer", send.PackedSize(), recv.PackedSize(), send.BufLen, recv.BufLen)
		}
		src := fill(send.BufLen)
		packed := make([]byte, send.PackedSize())
		if _, err := send.Type.Commit().Pack(packed, src, 0, 1); err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, recv.BufLen)
		if _, err := recv.Type.Commit().Unpack(dst, 0, packed, 1); err != nil {
			t.Fatal(err)
		}
		list := IndexList(icount, d)
		l := d + icount
		off := 0
		narr := 4
		if full {
			narr = 6
		}
		for k := range narr {
			per := 8
			if k == 0 {
				per = 24
			}
			for j, idx := range list {
				got := dst[off+(d+j)*per : off+(d+j+1)*per]
				want := src[off+idx*per : off+(idx+1)*per]
				if string(got) != string(want) {
					t.Fatalf("full=%v array %d ghost %d: got %x want %x", full, k, j, got, want)
				}
			}
			off += l * per
		}
	}
}

// TestFFT2DTranspose: packing rows with the send type and unpacking with
// the receive type transposes each rank's N/P×N/P block.
func TestFFT2DTranspose(t *testing.T) {
	const n, p = 32, 4
	send, _ := FFT2D(n, p, false)
	recv, _ := FFT2D(n, p, true)
	src := fill(send.BufLen)
	packed := make([]byte, send.PackedSize())
	if _, err := send.Type.Commit().Pack(packed, src, 0, send.Count); err != nil {
		t.Fatal(err)
	}
	dst := make([]byte, recv.BufLen)
	if _, err := recv.Type.Commit().Unpack(dst, 0, packed, recv.Count); err != nil {
		t.Fatal(err)
	}
	r := n / p
	for blk := range p { // block blk holds columns blk·r.. of the r rows
		for i := range r {
			for j := range r {
				s := src[(i*n+blk*r+j)*16:][:16] // row i, column blk·r+j
				got := dst[(j*n+blk*r+i)*16:][:16]
				if string(got) != string(s) {
					t.Fatalf("block %d (%d,%d) not transposed", blk, i, j)
				}
			}
		}
	}
}
