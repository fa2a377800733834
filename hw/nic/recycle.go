package nic

// Packet arrays are recycled: a message's packets are one array, and the
// arrays were three quarters of what a packet-level run allocates (about
// 85 MB per 64-node allreduce), so the garbage collector ran often and
// its write barriers slowed every event while it did.
//
// A packet is retired where it is certainly used for the last time: a put
// packet after its payload landed, a reply packet after its payload
// landed, an ack after the initiator handled it, a get request after the
// target started the reply. When every packet of a message was retired,
// the NIC retiring the last one keeps the array for a later message of the
// same packet count. A packet that takes any other way (dropped, clipped
// to nothing, held by a sPIN context, an atomic, a verbs message, the flow
// model) is never retired, and its message's array is left to the garbage
// collector: recycling is only ever skipped, never early. The retiring NIC
// is the destination, so in a partitioned run the array changes owner
// with the last packet, which another partition no longer touches.

// maxRecycledPackets bounds the packet count of recycled arrays (larger
// messages are rarer; their arrays are left to the garbage collector).
const maxRecycledPackets = 256

// maxRecycledArrays bounds the arrays kept per packet count: a node that
// receives more messages of a size than it sends (a many-to-one pattern)
// would otherwise keep every array it retired.
const maxRecycledArrays = 64

// poisoned is what a retired packet becomes in tests (NIC.poisonRetired):
// values no live packet has, so that a use after retirement fails loudly.
func poisoned() Packet {
	return Packet{Src: -1, Dst: -1, Index: -1, Offset: 1 << 62, Len: 1 << 62, MLength: 1 << 62, Msg: 1 << 62}
}

// packetArray returns np packets: a recycled array (cleared when it was
// retired) or a new one.
func (n *NIC) packetArray(np int) []Packet {
	if np < len(n.pktFree) {
		if l := n.pktFree[np]; len(l) > 0 {
			a := l[len(l)-1]
			l[len(l)-1] = nil
			n.pktFree[np] = l[:len(l)-1]
			return a
		}
	}
	return make([]Packet, np)
}

// retire notes that pk is not used again. The last of its message's
// packets to be retired hands the message's array to n.
func (n *NIC) retire(pk *Packet) {
	tx := pk.tx
	if tx == nil || tx.pkts == nil {
		return
	}
	tx.retired++
	if tx.retired < len(tx.pkts) {
		return
	}
	a := tx.pkts
	tx.pkts = nil
	if n.poisonRetired {
		for i := range a {
			a[i] = poisoned()
		}
		return
	}
	clear(a) // drop the references the packets hold
	np := len(a)
	if np >= maxRecycledPackets {
		return
	}
	if n.pktFree == nil {
		n.pktFree = make([][][]Packet, maxRecycledPackets)
	}
	if len(n.pktFree[np]) < maxRecycledArrays {
		n.pktFree[np] = append(n.pktFree[np], a)
	}
}
