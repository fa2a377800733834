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

// Between GPU buffers of two GPUs of one node, a rendezvous message is
// moved by the receiver's copy engine when mpi.ipc is on: the data is
// right, both requests complete, the NIC carries only the header (a few
// hundred bytes, not the 1 MiB), and it is faster than the NIC's Get; a
// message to a GPU of another node, or below the eager limit, still takes
// the NIC. With mpi.ipc off nothing is copied by an engine.
func TestIPCCopiesRendezvousBetweenPeers(t *testing.T) {
	const n = 1 << 20
	run := func(ipc bool, to, size int) (took sim.Time, st Stats, nicBytes uint64) {
		spec := cluster.GPUTN()
		spec.Node.GPUs = 2
		e := sim.New(1)
		cl, err := cluster.New(e, spec, 4, true)
		if err != nil {
			t.Fatal(err)
		}
		reg := NewIPC()
		ms := DefaultSpec()
		ms.IPC = ipc
		var got []byte
		for i, nd := range cl.Nodes {
			nd.CPU.Spawn("rank", func(th *cpu.Thread) {
				c, err := Init(th, nd.NIC, i, 4, ms, cost.Default())
				if err != nil {
					t.Error(err)
					return
				}
				c.UseIPC(nd.Peer, reg)
				buf := nd.Mem.Alloc(mem.GPU, n, "buf")
				switch i {
				case 0:
					nd.Mem.Write(buf, pattern(size, 3))
					r, err := c.Isend(buf, uint64(size), to, 7)
					if err != nil {
						t.Error(err)
						return
					}
					c.Wait(r)
				case to:
					r, err := c.Irecv(buf, n, 0, 7)
					if err != nil {
						t.Error(err)
						return
					}
					c.Wait(r)
					took, st = th.Now(), c.Stats()
					got = make([]byte, size)
					nd.Mem.Read(buf, got)
				}
			})
		}
		if err := e.Run(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, pattern(size, 3)) {
			t.Fatalf("ipc=%v to rank %d, %d B: received bytes differ", ipc, to, size)
		}
		return took, st, cl.Nodes[0].NIC.Stats().BytesTx + cl.Nodes[to].NIC.Stats().BytesTx
	}
	ipcTook, ipcSt, ipcNIC := run(true, 1, n)
	nicTook, nicSt, nicNIC := run(false, 1, n)
	if ipcSt.IPCCopies != 1 || nicSt.IPCCopies != 0 {
		t.Errorf("copies by an engine: %d with mpi.ipc, %d without; want 1 and 0", ipcSt.IPCCopies, nicSt.IPCCopies)
	}
	if ipcNIC >= 4096 || nicNIC < n {
		t.Errorf("NIC bytes sent: %d with mpi.ipc (want only the header), %d without (want the message)", ipcNIC, nicNIC)
	}
	if ipcTook >= nicTook {
		t.Errorf("1 MiB took %v by the copy engine, %v by the NIC: want the engine faster over the GPU fabric", ipcTook, nicTook)
	}
	if _, st, _ := run(true, 2, n); st.IPCCopies != 0 {
		t.Errorf("a message to another node's GPU was copied by an engine")
	}
	if _, st, _ := run(true, 1, 1000); st.IPCCopies != 0 {
		t.Errorf("an eager message was copied by an engine")
	}
}

// A request completed outside the event queue (by a copy engine) while
// the rank's progress is inside a poll must still end its wait: the poll
// sees it instead of waiting for an event that never comes (a lost
// wake-up deadlocked the MoE exchange).
func TestFinishDuringPollEndsWait(t *testing.T) {
	e := sim.New(1)
	cl, err := cluster.New(e, cluster.GPUTN(), 1, true)
	if err != nil {
		t.Fatal(err)
	}
	nd := cl.Nodes[0]
	waited := false
	nd.CPU.Spawn("rank", func(th *cpu.Thread) {
		c, err := Init(th, nd.NIC, 0, 1, DefaultSpec(), cost.Default())
		if err != nil {
			t.Error(err)
			return
		}
		r := &Request{}
		e.At(th.Now()+sim.Picosecond, func() { // during the wait's first poll
			r.done = true
			c.finish()
		})
		c.Wait(r)
		waited = true
	})
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	if !waited {
		t.Fatal("the wait did not end")
	}
}
