package workload

import (
	"testing"

	"github.com/gpunetsim/gpunetsim/datatype"
	"github.com/gpunetsim/gpunetsim/hw/cluster"
	spinmodel "github.com/gpunetsim/gpunetsim/model/spin"
)

// hostRecv receives size bytes of vector(size/bl, bl, stride)<byte> with
// host unpack on preset spin and returns the result.
func hostRecv(t *testing.T, size, bl, stride int, m spinmodel.Method) DDTResult {
	t.Helper()
	ty, err := datatype.Vector(size/bl, bl, stride, datatype.Byte())
	if err != nil {
		t.Fatal(err)
	}
	c, err := newCluster(cluster.Spin(), 2, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Engine.Close()
	r, err := DDTUnpack{Type: ty.Commit(), Count: 1}.RunMethod(c, m, spinmodel.DefaultCosts())
	if err != nil || !r.Verified {
		t.Fatalf("block %d stride %d: verified %v, %v", bl, stride, r.Verified, err)
	}
	return r
}

// TestHostUnpackThroughCaches: the host unpack's time comes from the
// simulated host core's caches, not from a per-region constant: 4 B
// blocks have 512 times the regions of 2 KiB blocks but take a small
// multiple of their time; at one block size the stride decides the lines
// and pages touched and what the prefetcher brings.
func TestHostUnpackThroughCaches(t *testing.T) {
	const size = 256 << 10
	small, large := hostRecv(t, size, 4, 8, spinmodel.HostUnpack), hostRecv(t, size, 2048, 4096, spinmodel.HostUnpack)
	if r := float64(small.Unpack) / float64(large.Unpack); r < 1 || r > 4 {
		t.Errorf("unpack 4 B blocks %v, 2 KiB blocks %v: ratio %.2f, want in [1, 4] (regions ratio 512)", small.Unpack, large.Unpack, r)
	}
	// 64 B blocks: contiguous, every other line (the stream prefetcher also
	// brings the skipped lines), one line per page (it never sees a stream,
	// so every line is a demand DRAM miss).
	dense, sparse, page := hostRecv(t, size, 64, 64, spinmodel.HostUnpack), hostRecv(t, size, 64, 128, spinmodel.HostUnpack), hostRecv(t, size, 64, 4096, spinmodel.HostUnpack)
	if sparse.Unpack <= dense.Unpack || sparse.Traffic.Host.DRAMRead <= dense.Traffic.Host.DRAMRead {
		t.Errorf("64 B blocks at stride 128: %v, %d B from DRAM; contiguous: %v, %d B: want more of both", sparse.Unpack, sparse.Traffic.Host.DRAMRead, dense.Unpack, dense.Traffic.Host.DRAMRead)
	}
	if d, s := page.Traffic.Host.Served[3], sparse.Traffic.Host.Served[3]; d < size/64 || d <= s {
		t.Errorf("demand DRAM touches: %d at a page stride (want ≥ %d), %d at stride 128 (want fewer)", d, size/64, s)
	}
}

// TestTrafficIsWhatMemoryMoved: a receive's DRAM traffic is the node's
// DRAM server bytes: the NIC's line bursts plus the host walk's reads and
// write-backs, and for the offloaded methods the NIC's bursts alone.
func TestTrafficIsWhatMemoryMoved(t *testing.T) {
	const size = 64 << 10
	for _, m := range []spinmodel.Method{spinmodel.HostUnpack, spinmodel.RWCP, spinmodel.Specialized} {
		r := hostRecv(t, size, 16, 32, m)
		f := r.Traffic
		if f.DRAM != f.DMAWrite+f.Host.DRAMRead+f.Host.DRAMWrite || f.DMAWrite == 0 || f.PCIeUp < uint64(size) {
			t.Errorf("%v: DRAM %d B, DMA %d + host read %d + host write %d, PCIe up %d", m, f.DRAM, f.DMAWrite, f.Host.DRAMRead, f.Host.DRAMWrite, f.PCIeUp)
		}
		switch m {
		case spinmodel.HostUnpack:
			// The packed message lands once (whole lines), then the walk reads it
			// and reads and writes back every line of the receive span.
			if f.DMAWrite != size || f.Host.DRAMRead < size+2*size || f.Host.DRAMWrite != 2*size {
				t.Errorf("host: DMA %d (want %d), host read %d (want ≥ %d), host write %d (want %d)", f.DMAWrite, size, f.Host.DRAMRead, 3*size, f.Host.DRAMWrite, 2*size)
			}
		default:
			// 16 B blocks, one per DMA write, 4 per 64 B line: one burst each.
			if f.DMAWrite != uint64(size/16)*64 || f.Host.DRAMRead != 0 {
				t.Errorf("%v: DMA %d, want %d (a 64 B burst per 16 B block), host read %d", m, f.DMAWrite, size/16*64, f.Host.DRAMRead)
			}
		}
	}
}
