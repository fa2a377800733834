package nic

import "testing"

// A message's array comes back, cleared, once all its packets are retired,
// and not before; the pool per packet count is bounded.
func TestPacketArraysRecycleWhenAllRetired(t *testing.T) {
	n := &NIC{}
	send := func(np int) []Packet {
		a := n.packetArray(np)
		tx := &txMsg{n: n, pkts: a}
		for k := range a {
			a[k] = Packet{Index: k, Len: 4096, tx: tx}
		}
		return a
	}
	a := send(3)
	n.retire(&a[0])
	n.retire(&a[1])
	if got := n.packetArray(3); &got[0] == &a[0] {
		t.Fatal("an array came back before its last packet was retired")
	}
	n.retire(&a[2])
	b := n.packetArray(3)
	if &b[0] != &a[0] {
		t.Fatal("a fully retired array was not reused for the next message of its size")
	}
	for k := range b {
		if p := b[k]; p.Len != 0 || p.Index != 0 || p.tx != nil {
			t.Fatalf("packet %d of a recycled array not cleared: %+v", k, b[k])
		}
	}
	for range maxRecycledArrays + 10 {
		c := send(2)
		for k := range c {
			n.retire(&c[k])
		}
	}
	// Every send above reused the one array retired before it.
	if got := len(n.pktFree[2]); got != 1 {
		t.Fatalf("%d arrays of 2 packets kept, want 1", got)
	}
	var keep [][]Packet
	for range maxRecycledArrays + 10 {
		keep = append(keep, send(1))
	}
	for _, c := range keep {
		n.retire(&c[0])
	}
	if got := len(n.pktFree[1]); got != maxRecycledArrays {
		t.Fatalf("%d arrays of 1 packet kept, want the bound %d", got, maxRecycledArrays)
	}
}
