package gpu

import (
	"github.com/gpunetsim/gpunetsim/hw/mem"
)

// StoreLanes is one vector store instruction of a wavefront: lane i writes
// the 8-byte vals[i] at addrs[i]. The work-group pays one L1 access for all
// lanes (they issue together); each word takes the path of Store64 (the
// L1 copy, then a dirty L2 line in dGPU mode or memory after the memory
// latency in APU mode). Used by threadblock-collaborative code where every
// thread writes its own slot.
func (w *WG) StoreLanes(addrs []mem.Addr, vals []uint64) {
	if len(addrs) == 0 {
		return
	}
	w.Sleep(w.g.spec.Cycles(w.g.spec.L1Cycles))
	w.mustHaveBlocked("StoreLanes")
	for i, a := range addrs {
		w.storeWord(a, vals[i])
	}
}

// storeWord is Store64's effect without its time.
func (w *WG) storeWord(a mem.Addr, v uint64) {
	w.storeL1(a, v)
	w.storeBeyondL1(a, v)
}
