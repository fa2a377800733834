package nic

import (
	"fmt"
	"math"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// SPut is a streaming put in progress (the SC'19 paper): one message whose
// payload is the concatenation of the regions given to Start and Stream.
// The target sees one message (one match, one ME binding, one sPIN context
// instance, one set of events). Packets are cut over the concatenated
// stream: a packet may carry bytes of consecutive regions, and a partial
// packet waits until it fills or the region carrying eom arrives. The
// header packet leaves with the first full packet (or at eom); the total
// length is unknown until then, so the completion packet carries it.
type SPut struct {
	n      *NIC
	cmd    Command
	id     uint64
	hdr    *Header
	sent   uint64 // stream bytes already cut into packets
	idx    int
	pend   []piece // bytes not yet in a packet, in stream order
	pendN  uint64
	ready  sim.Time // packets leave in order: not before the previous one
	ended  bool
	start  sim.Time
	packed uint64 // total stream bytes given so far
}

// piece is a region of host memory waiting to be packetized.
type piece struct {
	a mem.Addr
	l uint64
}

// SPutStart starts a streaming put (PtlSPutStart) like the Put cmd, whose
// MD region [LocalOffset, +Length) is the first contiguous region, and
// returns its handle. It is a command already on the NIC (a handler's, or
// after a host doorbell the caller charged): it takes effect CmdLatency
// from now.
func (n *NIC) SPutStart(cmd Command) *SPut {
	if cmd.Op != CmdPut {
		panic(fmt.Sprintf("%s: SPutStart with a %v command", n.name, cmd.Op))
	}
	n.check(cmd)
	n.nextMsg++
	s := &SPut{n: n, cmd: cmd, id: n.nextMsg, start: n.e.Now()}
	s.hdr = &Header{Op: CmdPut, Initiator: n.id, PT: cmd.PT, MatchBits: cmd.MatchBits, RemoteOffset: cmd.RemoteOffset,
		HdrData: cmd.HdrData, Ack: cmd.Ack, Streaming: true}
	if cmd.Ack != NoAckReq {
		n.out[s.id] = &outMsg{cmd: cmd, start: n.e.Now()}
	}
	n.stats.Commands++
	s.add(cmd.MD, cmd.LocalOffset, cmd.Length, false)
	return s
}

// Stream appends region [off, off+size) of md to the message
// (PtlSPutStream); eom ends it. Calls after eom panic.
func (s *SPut) Stream(md *MD, off, size uint64, eom bool) {
	s.n.stats.Commands++
	s.add(md, off, size, eom)
}

// Length is the number of stream bytes given so far.
func (s *SPut) Length() uint64 { return s.packed }

func (s *SPut) add(md *MD, off, size uint64, eom bool) {
	n := s.n
	if s.ended {
		panic(fmt.Sprintf("%s: streaming put %d extended after eom", n.name, s.id))
	}
	if md == nil || off+size > md.Length {
		panic(fmt.Sprintf("%s: streaming put region [%d, +%d) outside its MD", n.name, off, size))
	}
	if size > 0 {
		s.pend = append(s.pend, piece{md.Start + mem.Addr(off), size})
		s.pendN += size
		s.packed += size
	}
	s.ended = eom
	at := n.e.Now() + n.spec.CmdLatency
	mp := uint64(n.maxPayload)
	for s.pendN >= mp && !(eom && s.pendN == mp) {
		s.packet(mp, false, at)
	}
	if eom {
		s.packet(s.pendN, true, at)
	}
}

// packet cuts the next l pending bytes into packet s.idx, reads them by
// DMA (one read per piece) and sends it, in order, no earlier than at.
func (s *SPut) packet(l uint64, last bool, at sim.Time) {
	n := s.n
	var parts []piece
	for rem := l; rem > 0; {
		p := &s.pend[0]
		k := min(rem, p.l)
		parts = append(parts, piece{p.a, k})
		p.a += mem.Addr(k)
		p.l -= k
		rem -= k
		if p.l == 0 {
			s.pend = s.pend[1:]
		}
	}
	s.pendN -= l
	pk := &Packet{Src: n.id, Dst: s.cmd.Target, Kind: KindRequest, Msg: s.id, Index: s.idx, Offset: s.sent, Len: l, Last: last}
	if s.idx == 0 {
		pk.Hdr = s.hdr
	}
	if last {
		h := *s.hdr
		h.Length = s.sent + l
		pk.Hdr = &h
	}
	s.idx++
	s.sent += l
	n.e.At(at, func() {
		ready := n.e.Now()
		k := 0
		for _, p := range parts {
			d, kk := n.dmaRead(p.a, p.l)
			ready, k = max(ready, d), k+kk
		}
		ready = max(ready, s.ready)
		s.ready = ready
		n.e.At(ready, func() {
			n.dmaEnd(k)
			if n.mem.Functional() && l > 0 {
				buf := n.fab.GetBuf(int(l))
				o := 0
				for _, p := range parts {
					n.mem.Read(p.a, buf[o:o+int(p.l)])
					o += int(p.l)
				}
				pk.Data = buf
			}
			n.stats.PacketsTx++
			n.stats.BytesTx += l
			n.fab.Send(pk)
			if last {
				n.spanOp("tx ", "sput", s.start)
				n.initiatorSend(Command{Op: CmdPut, MD: s.cmd.MD, Length: s.sent, PT: s.cmd.PT, MatchBits: s.cmd.MatchBits,
					HdrData: s.cmd.HdrData, UserPtr: s.cmd.UserPtr, CompletionFlag: s.cmd.CompletionFlag, LocalOffset: s.cmd.LocalOffset})
			}
		})
	})
}

// streamEnd learns a streaming put's length from its completion packet.
func (n *NIC) streamEnd(m *inMsg, pk *Packet) {
	if pk.Hdr == nil || m.npk != math.MaxInt {
		return
	}
	h := *m.hdr
	h.Length = pk.Hdr.Length
	m.hdr = &h
	m.npk = pk.Index + 1
	if m.me != nil {
		m.mlength = min(m.mlength, h.Length)
	}
}
