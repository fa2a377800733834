package nic

// PoisonRetired makes n overwrite every packet it retires with impossible
// values and never reuse the arrays (on) or recycle them as runs do (off).
func PoisonRetired(n *NIC, on bool) { n.poisonRetired = on }

// RecycledArrays returns how many packet arrays of np packets n keeps.
func RecycledArrays(n *NIC, np int) int {
	if np >= len(n.pktFree) {
		return 0
	}
	return len(n.pktFree[np])
}

// EagerPayloads makes n copy every payload out of memory when its packet
// is sent (on) instead of leaving it there as a snapshot until it lands
// (off, as runs do).
func EagerPayloads(n *NIC, on bool) { n.eagerPayloads = on }

// RunQueueCap returns the capacity of n's verbs engines' run queue.
func RunQueueCap(n *NIC) int { return cap(n.vs().runq) }

// RecycledRecords returns how many initiator (issue) and target message
// records n keeps for reuse.
func RecycledRecords(n *NIC) (issued, in int) { return n.issuedFree.Len(), n.inMsgFree.Len() }
