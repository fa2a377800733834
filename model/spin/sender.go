package spin

import (
	"github.com/gpunetsim/gpunetsim/datatype"
	hwspin "github.com/gpunetsim/gpunetsim/hw/spin"
)

// SenderHandler is the outbound sPIN payload handler of the SC'19 paper for
// the plan's datatype: for its packet's share [offset, offset+len) of the
// packed stream it finds the contiguous regions of the send buffer, whose
// datatype origin sits at byte origin of the outbound MD, and hands them
// to the NIC as streaming-put regions. Each HPU keeps a segment and
// catches up between its packets (the HPU-local scheme of §5.1), charging
// the §7.3 costs. The host's CPU does no datatype work.
func (p *Plan) SenderHandler(cs Costs, origin int, hpus int) hwspin.Handler {
	segs := make([]*datatype.Segment, hpus)
	blocks := make([][]datatype.Block, hpus)
	return func(h *hwspin.HandlerCtx) hwspin.Return {
		first, last := int(h.Packet.Offset), int(h.Packet.Offset+h.Packet.Len)
		s := segs[h.HPU]
		if s == nil {
			s, _ = p.C.NewSegment(p.Count)
			segs[h.HPU] = s
		}
		before := s.Stats().SkippedBlocks
		h.Cycles(cs.MPITStart + cs.LevelCycles*p.Depth)
		bl, err := s.BlockList(first, last, blocks[h.HPU][:0])
		if err != nil {
			return hwspin.Fail
		}
		blocks[h.HPU] = bl
		h.Cycles(cs.SkipCycles * (s.Stats().SkippedBlocks - before))
		for _, b := range bl {
			h.Cycles(cs.BlockCycles)
			h.StreamRegion(uint64(origin+b.Off), uint64(b.Len))
		}
		return hwspin.Success
	}
}
