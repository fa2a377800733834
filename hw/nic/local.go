package nic

// localMsgBit marks the message ids of LocalPut, so they never collide
// with the ids an initiator's NIC gives its packets.
const localMsgBit = uint64(1) << 47

// LocalPut delivers a put from rank initiator of this NIC's node that a
// software shared-memory transport carried (an MPI library's shared-memory
// eager cells or rendezvous header, as Open MPI's sm BTL and UCX's shm
// transports keep them): the receiving library matches it against the
// portal table's lists in the same order and with the same rules as a
// header packet, writes its bytes (data, the copy the sender's library
// made; nil when payload-free) where it matched, and posts the same target events and
// counts. Nothing of the NIC is charged: no command, pipeline, DMA or
// link. The caller charges the libraries' copies and polls. It reports
// whether an entry took the message (false: dropped, as a packet finding
// no entry is).
func (n *NIC) LocalPut(initiator int, data []byte, cmd Command) bool {
	n.localMsg++
	pk := &Packet{Src: initiator, Msg: localMsgBit | n.localMsg, Hdr: &Header{Op: CmdPut, Initiator: initiator, PT: cmd.PT,
		MatchBits: cmd.MatchBits, RemoteOffset: cmd.RemoteOffset, Length: cmd.Length, HdrData: cmd.HdrData}}
	n.match(pk)
	key := msgKey(pk.Src, pk.Msg)
	m := n.in[key]
	delete(n.in, key)
	if m.me == nil {
		return false
	}
	if l := int(m.mlength); l > 0 {
		if dst := n.mem.Bytes(m.dest, l); dst != nil && data != nil {
			copy(dst, data)
		}
		n.mem.Touch(m.dest, l)
	}
	n.targetEvents(m, EventPut)
	return true
}
