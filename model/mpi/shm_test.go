package mpi

import (
	"bytes"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/sim"
)

// shmExchange has rank 0 send sizes (same tag, host buffers) to rank to
// of 2 nodes × 2 GPUs, rank to posting its first receive before the
// sends and the others after (the unexpected path), and returns what it
// received in order, when it finished, its stats and the bytes the two
// ranks' NICs sent.
func shmExchange(t *testing.T, shm bool, to int, sizes []int) (got [][]byte, took sim.Time, st Stats, nicBytes uint64) {
	t.Helper()
	spec := cluster.GPUTN()
	spec.Node.GPUs = 2
	e := sim.New(1)
	cl, err := cluster.New(e, spec, 4, true)
	if err != nil {
		t.Fatal(err)
	}
	reg := NewIPC()
	ms := DefaultSpec()
	ms.SHM = shm
	for i, nd := range cl.Nodes {
		nd.CPU.Spawn("rank", func(th *cpu.Thread) {
			c, err := Init(th, nd.NIC, i, 4, ms, cost.Default())
			if err != nil {
				t.Error(err)
				return
			}
			c.UseIPC(nd.Peer, reg)
			c.UseSHM(nd.Peer, reg)
			switch i {
			case 0:
				var rs []*Request
				for k, n := range sizes {
					buf := nd.Mem.Alloc(mem.Host, uint64(max(n, 1)), "send")
					nd.Mem.Write(buf, pattern(n, byte(k+1)))
					r, err := c.Isend(buf, uint64(n), to, 7)
					if err != nil {
						t.Error(err)
						return
					}
					rs = append(rs, r)
				}
				c.Waitall(rs...)
			case to:
				bufs := make([]mem.Addr, len(sizes))
				rs := make([]*Request, len(sizes))
				for k := range sizes {
					bufs[k] = nd.Mem.Alloc(mem.Host, 1<<20, "recv")
					if k == 1 {
						th.Sleep(20 * sim.Microsecond) // the rest arrive unexpected
					}
					if rs[k], err = c.Irecv(bufs[k], 1<<20, 0, 7); err != nil {
						t.Error(err)
						return
					}
				}
				c.Waitall(rs...)
				took, st = th.Now(), c.Stats()
				for k, r := range rs {
					b := make([]byte, r.Len())
					nd.Mem.Read(bufs[k], b)
					got = append(got, b)
				}
			}
		})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return got, took, st, cl.Nodes[0].NIC.Stats().BytesTx + cl.Nodes[to].NIC.Stats().BytesTx
}

// Between ranks of one node, mpi.shm moves every message through shared
// memory: eager and rendezvous messages, posted and unexpected, arrive in
// send order with their bytes, the large one copied once from the
// sender's buffer by the receiver's core; neither NIC sends a byte; a
// small exchange beats the NIC path. A rank of another node still takes
// the NIC, and mpi.shm = false restores the NIC path on the node.
func TestSHMBetweenRanksOfANode(t *testing.T) {
	sizes := []int{100, 64 << 10, 0, 2000}
	check := func(what string, got [][]byte) {
		t.Helper()
		if len(got) != len(sizes) {
			t.Fatalf("%s: %d messages received, want %d", what, len(got), len(sizes))
		}
		for k, n := range sizes {
			if !bytes.Equal(got[k], pattern(n, byte(k+1))) {
				t.Errorf("%s: message %d (%d B): bytes differ or out of order", what, k, n)
			}
		}
	}
	got, shmTook, st, nicBytes := shmExchange(t, true, 1, sizes)
	check("shm", got)
	if nicBytes != 0 {
		t.Errorf("shm: the NICs sent %d bytes, want none", nicBytes)
	}
	if st.SHMCopies != 1 || st.Unexpected != uint64(len(sizes)-1) {
		t.Errorf("shm: %d single copies, %d unexpected; want 1 (the 64 KiB message) and %d", st.SHMCopies, st.Unexpected, len(sizes)-1)
	}
	got, _, st, nicBytes = shmExchange(t, false, 1, sizes)
	check("nic", got)
	if nicBytes < 64<<10 || st.SHMCopies != 0 {
		t.Errorf("mpi.shm=false: NICs sent %d bytes, %d single copies; want the messages on the NIC", nicBytes, st.SHMCopies)
	}
	got, _, st, nicBytes = shmExchange(t, true, 2, sizes)
	check("other node", got)
	if nicBytes < 64<<10 || st.SHMCopies != 0 {
		t.Errorf("to another node: NICs sent %d bytes, %d single copies; want the NIC", nicBytes, st.SHMCopies)
	}
	small := []int{8}
	_, shmTook, _, _ = shmExchange(t, true, 1, small)
	_, nicTook, _, _ := shmExchange(t, false, 1, small)
	if shmTook >= nicTook {
		t.Errorf("8 B on one node: %v through shared memory, %v through the NIC: want shared memory faster", shmTook, nicTook)
	}
}
