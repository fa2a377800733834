package spin

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// IOVec is one iovec entry: Len bytes at byte offset Off from the ME start,
// holding the next Len bytes of the message stream.
type IOVec struct {
	Off, Len uint64
}

// Iovec is the Portals-4 iovec receive engine of the SC'19 paper, the
// non-programmable baseline: the host hands the NIC an iovec list; the NIC
// holds v = IovecEntries entries at a time and, every v entries consumed,
// stalls its DMA path for an IovecFetch PCIe read of the next v. Packets
// are processed in arrival order (in-order arrival assumed) by one engine,
// each region a DMA write through the sPIN DMA engine. It implements
// nic.ExecContext; bind it to an ME like a Context.
type Iovec struct {
	s       *NIC
	list    []IOVec
	q       []*packet
	busy    bool // a fetch is outstanding
	ei      int  // next entry
	eoff    uint64
	loaded  int // entries on the NIC: [.., loaded)
	fetches int
	ms      *msgState
}

// NewIovec returns an iovec engine for list (in stream order).
func (s *NIC) NewIovec(list []IOVec) *Iovec {
	return &Iovec{s: s, list: list, loaded: min(len(list), s.spec.IovecEntries)}
}

// ListBytes is the size of the whole list as the host moves it to the NIC.
func (v *Iovec) ListBytes() unit.Bytes { return unit.Bytes(len(v.list)) * v.s.spec.IovecEntrySize }

// Fetches is the number of entry fetches the engine did.
func (v *Iovec) Fetches() int { return v.fetches }

// Arrive implements nic.ExecContext.
func (v *Iovec) Arrive(m *nic.CtxMsg, pk nic.CtxPacket) bool {
	if v.ms == nil {
		v.ms = &msgState{cm: m, payloadLeft: m.Packets(), expected: m.Packets()}
	}
	v.ms.learnLength()
	return v.s.take(v.ms, pk, func(p *packet) {
		v.q = append(v.q, p)
		v.run()
	})
}

// run processes queued packets until a fetch is needed or none is left.
func (v *Iovec) run() {
	s := v.s
	for !v.busy && len(v.q) > 0 {
		p := v.q[0]
		o, end := p.pk.Offset, p.pk.Offset+p.pk.Len
		// Skip what earlier packets consumed of this packet's range.
		for o < end {
			if v.ei == v.loaded {
				if v.ei >= len(v.list) {
					panic(fmt.Sprintf("%s: iovec list of %d entries ends before stream byte %d", s.name, len(v.list), o))
				}
				v.fetch(o, p)
				return
			}
			e := v.list[v.ei]
			n := min(e.Len-v.eoff, end-o)
			if n > 0 {
				p.refs++
				var data []byte
				if p.pk.Data != nil {
					data = p.pk.Data[o-p.pk.Offset : o-p.pk.Offset+n]
				}
				s.dma.enqueue(&dmaReq{host: p.msg.cm.Host() + memAddr(e.Off+v.eoff), n: unitBytes(n), data: data, pkt: p, hpu: -1})
			}
			o += n
			v.eoff += n
			if v.eoff == e.Len {
				v.ei++
				v.eoff = 0
			}
		}
		v.q = v.q[1:]
		s.unref(p)
		v.ms.payloadLeft--
		if v.ms.payloadLeft == 0 {
			s.sched.finish(v.ms)
		}
	}
}

// fetch stalls the engine for the next v entries. The packet at the head
// keeps its place; run resumes inside it (o, end are recomputed from the
// entries consumed, so nothing is emitted twice).
func (v *Iovec) fetch(o uint64, p *packet) {
	s := v.s
	v.busy = true
	v.fetches++
	// The packet's bytes before o are already issued: shrink the head
	// packet's remaining range by moving its offset forward.
	done := o - p.pk.Offset
	if done > 0 {
		p.pk.Offset += done
		p.pk.Len -= done
		if p.pk.Data != nil {
			p.pk.Data = p.pk.Data[done:]
		}
	}
	s.e.After(sim.Duration(s.spec.IovecFetch), func() {
		v.loaded = min(len(v.list), v.loaded+s.spec.IovecEntries)
		v.busy = false
		v.run()
	})
}
