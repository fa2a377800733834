package datatype

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fixtureDir is where the MPICH reference results live, relative to this
// package (shared/ sits beside the checkout).
var fixtureDir = filepath.Join("..", "..", "shared", "fixtures", "ddt")

// fixture is one case of fixtureDir (see its README.md).
type fixture struct {
	Name          string `json:"name"`
	Desc          string `json:"desc"`
	Count         int    `json:"count"`
	Combiner      string `json:"combiner"`
	Size          int    `json:"size"`
	LB            int    `json:"lb"`
	Extent        int    `json:"extent"`
	UB            int    `json:"ub"`
	TrueLB        int    `json:"true_lb"`
	TrueExtent    int    `json:"true_extent"`
	PackSize      int    `json:"pack_size"`
	OriginOffset  int    `json:"origin_offset"`
	BufLen        int    `json:"buf_len"`
	PackedLen     int    `json:"packed_len"`
	PackedSHA     string `json:"packed_sha256"`
	PackedHead    string `json:"packed_head_hex"`
	PackedFile    string `json:"packed_file"`
	UnpackSHA     string `json:"unpack_into_zeroed_sha256"`
	Overlap       bool   `json:"overlap"`
	IovBlocks     int    `json:"iov_blocks"`
	IovFile       string `json:"iov_file"`
	IovHead       [][2]int
	RawIovHead    json.RawMessage `json:"iov_head"`
	TouchedBytes  int             `json:"touched_bytes"`
	iov           [][2]int
	packed        []byte // nil when the file is absent
	packedPresent bool
}

// loadFixtures reads every case, or skips the test if the directory is absent.
func loadFixtures(t testing.TB) []*fixture {
	t.Helper()
	if _, err := os.Stat(fixtureDir); errors.Is(err, fs.ErrNotExist) {
		t.Skipf("fixtures not found at %s (shared/ must sit beside the checkout)", fixtureDir)
	}
	paths, err := filepath.Glob(filepath.Join(fixtureDir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in %s: %v", fixtureDir, err)
	}
	var out []*fixture
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f := new(fixture)
		if err := json.Unmarshal(raw, f); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if err := json.Unmarshal(f.RawIovHead, &f.IovHead); err != nil {
			t.Fatalf("%s: iov_head: %v", p, err)
		}
		if f.IovFile != "" {
			if f.iov, err = readIov(filepath.Join(fixtureDir, f.IovFile)); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
		}
		if b, err := os.ReadFile(filepath.Join(fixtureDir, f.PackedFile)); err == nil {
			f.packed, f.packedPresent = b, true
		}
		out = append(out, f)
	}
	return out
}

func readIov(path string) ([][2]int, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	var out [][2]int
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("bad iov line %q", line)
		}
		a, err1 := strconv.Atoi(f[0])
		b, err2 := strconv.Atoi(f[1])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("bad iov line %q", line)
		}
		out = append(out, [2]int{a, b})
	}
	return out, sc.Err()
}

// fill returns the fixtures' input buffer.
func fill(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*131 + 7)
	}
	return b
}

func sha(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func TestFixtures(t *testing.T) {
	for _, f := range loadFixtures(t) {
		t.Run(f.Name, func(t *testing.T) {
			ty, err := Parse(f.Desc)
			if err != nil {
				t.Fatalf("Parse(%q): %v", f.Desc, err)
			}
			if got := ty.String(); got != f.Desc {
				t.Errorf("String() = %q, want %q", got, f.Desc)
			}
			if got := ty.Combiner().String(); got != f.Combiner && !(f.Combiner == "NAMED" && ty.Combiner() == CombinerNamed) {
				t.Errorf("combiner %s, want %s", got, f.Combiner)
			}
			for _, q := range []struct {
				what      string
				got, want int
			}{
				{"size", ty.Size(), f.Size}, {"lb", ty.LB(), f.LB}, {"extent", ty.Extent(), f.Extent},
				{"ub", ty.UB(), f.UB}, {"true_lb", ty.TrueLB(), f.TrueLB}, {"true_extent", ty.TrueExtent(), f.TrueExtent},
			} {
				if q.got != q.want {
					t.Errorf("%s = %d, want %d", q.what, q.got, q.want)
				}
			}
			c := ty.Commit()
			if n, _ := c.PackedSize(f.Count); n != f.PackedLen {
				t.Errorf("PackedSize(%d) = %d, want %d", f.Count, n, f.PackedLen)
			}
			src := fill(f.BufLen)
			packed := make([]byte, f.PackedLen)
			if _, err := c.Pack(packed, src, f.OriginOffset, f.Count); err != nil {
				t.Fatalf("Pack: %v", err)
			}
			if got := sha(packed); got != f.PackedSHA {
				t.Errorf("packed sha %s, want %s\nhead got  %x\nhead want %s", got, f.PackedSHA, head(packed), f.PackedHead)
			}
			if f.packedPresent && !bytes.Equal(packed, f.packed) {
				t.Errorf("packed bytes differ from %s", f.PackedFile)
			}
			if !f.Overlap {
				dst := make([]byte, f.BufLen)
				if _, err := c.Unpack(dst, f.OriginOffset, packed, f.Count); err != nil {
					t.Fatalf("Unpack: %v", err)
				}
				if got := sha(dst); got != f.UnpackSHA {
					t.Errorf("unpack sha %s, want %s", got, f.UnpackSHA)
				}
			}
			var iov [][2]int
			for off, n := range ty.Blocks(f.Count) {
				iov = append(iov, [2]int{off, n})
			}
			if len(iov) != f.IovBlocks {
				t.Errorf("%d iov blocks, want %d", len(iov), f.IovBlocks)
			}
			if f.iov != nil && !equalIov(iov, f.iov) {
				t.Errorf("iov list differs:\ngot  %v\nwant %v", trim(iov), trim(f.iov))
			}
			if !equalIov(iov[:min(len(iov), len(f.IovHead))], f.IovHead) {
				t.Errorf("iov head %v, want %v", trim(iov), f.IovHead)
			}
			// The committed engine's block list agrees with the reference walk.
			seg := mustSegment(t, c, f.Count)
			got, err := seg.BlockList(0, f.PackedLen, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !equalIov(blocksToIov(got), iov) {
				t.Errorf("segment block list differs:\ngot  %v\nwant %v", trim(blocksToIov(got)), trim(iov))
			}
			// Partial packs equal slices of the full pack.
			for _, cut := range []int{1, 3, 7, 64} {
				if cut >= f.PackedLen {
					continue
				}
				part := make([]byte, f.PackedLen)
				seg := mustSegment(t, c, f.Count)
				for a := 0; a < f.PackedLen; a += cut {
					b := min(a+cut, f.PackedLen)
					if _, err := seg.Pack(part[a:b], src, f.OriginOffset, a, b); err != nil {
						t.Fatalf("segment Pack [%d,%d): %v", a, b, err)
					}
				}
				if !bytes.Equal(part, packed) {
					t.Errorf("pack in pieces of %d differs", cut)
				}
			}
		})
	}
}

func head(b []byte) []byte { return b[:min(len(b), 64)] }

func trim(v [][2]int) [][2]int { return v[:min(len(v), 12)] }

func equalIov(a, b [][2]int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func blocksToIov(bs []Block) [][2]int {
	out := make([][2]int, len(bs))
	for i, b := range bs {
		out[i] = [2]int{b.Off, b.Len}
	}
	return out
}

func mustSegment(t failer, c *Committed, count int) *Segment {
	t.Helper()
	s, err := c.NewSegment(count)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
