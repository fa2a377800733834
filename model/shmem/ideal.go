package shmem

import (
	"encoding/binary"
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
)

// idealBackend applies every operation at once, at no cost, directly in
// the target PE's memory: the reference the conformance suite is tested
// with. Its channel never blocks, so ordering and completion are trivial.
type idealBackend struct {
	dev *Device
}

func (b *idealBackend) Expose(int, mem.Addr, uint64) {}

func (b *idealBackend) Open(wg *gpu.WG, q int) (Channel, error) { return idealChannel{b.dev}, nil }

func (b *idealBackend) Stop() Report { return Report{} }

type idealChannel struct{ d *Device }

func (c idealChannel) Close() {}

func (c idealChannel) Submit(r *Request) error {
	if r.Op == OpFence || r.Op == OpQuiet {
		return nil
	}
	local := c.d.heap.mem
	target := c.d.rt.team.devs[r.PE]
	if target == nil {
		return fmt.Errorf("%w: PE %d has no device", ErrFailed, r.PE)
	}
	remote := target.heap.mem
	switch r.Op {
	case OpPut:
		dst, ok := c.d.heap.translate(r.Dst, r.Len, target)
		if !ok {
			return fmt.Errorf("%w: PE %d has no such symmetric object", ErrFailed, r.PE)
		}
		buf := make([]byte, r.Len)
		local.Read(r.Src, buf)
		remote.Write(dst, buf)
	case OpGet:
		src, ok := c.d.heap.translate(r.Src, r.Len, target)
		if !ok {
			return fmt.Errorf("%w: PE %d has no such symmetric object", ErrFailed, r.PE)
		}
		buf := make([]byte, r.Len)
		remote.Read(src, buf)
		local.Write(r.Dst, buf)
	default:
		dst, ok := c.d.heap.translate(r.Dst, r.Len, target)
		if !ok {
			return fmt.Errorf("%w: PE %d has no such symmetric object", ErrFailed, r.PE)
		}
		var b [8]byte
		if r.Op == OpP {
			binary.LittleEndian.PutUint64(b[:], r.Value)
			remote.Write(dst, b[:r.Len])
			return nil
		}
		remote.Read(dst, b[:r.Len])
		old := binary.LittleEndian.Uint64(b[:])
		r.Result = old
		binary.LittleEndian.PutUint64(b[:], applyAMO(r.Op, old, r.Value, r.Cond))
		remote.Write(dst, b[:r.Len])
	}
	return nil
}

// applyAMO returns the new value of an atomic's target (the low Len bytes
// are stored).
func applyAMO(op Op, old, v, cond uint64) uint64 {
	switch op {
	case OpAdd, OpFetchAdd:
		return old + v
	case OpSwap:
		return v
	case OpCSwap:
		if old == cond {
			return v
		}
	}
	return old
}
