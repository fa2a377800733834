package mpi

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// world runs body on every rank of an n-node gputn cluster.
func world(t *testing.T, n int, body func(c *Comm, t *cpu.Thread)) *sim.Engine {
	t.Helper()
	return worldSpec(t, n, DefaultSpec(), body)
}

// worldSpec is world with the MPI protocol knobs of spec.
func worldSpec(t *testing.T, n int, spec Spec, body func(c *Comm, t *cpu.Thread)) *sim.Engine {
	t.Helper()
	e := sim.New(1)
	cl, err := cluster.New(e, cluster.GPUTN(), n, true)
	if err != nil {
		t.Fatal(err)
	}
	for i, nd := range cl.Nodes {
		nd.CPU.Spawn("rank", func(th *cpu.Thread) {
			c, err := Init(th, nd.NIC, i, n, spec, cost.Default())
			if err != nil {
				t.Error(err)
				return
			}
			body(c, th)
		})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return e
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) + seed
	}
	return b
}

func TestEagerRendezvousAndUnexpected(t *testing.T) {
	type tcase struct {
		name      string
		size      int
		recvDelay sim.Time // post the receive late: the message is unexpected
		proto     string
	}
	var cases []tcase
	for _, proto := range []string{LongEager, LongRndv} {
		cases = append(cases,
			tcase{"short expected", 1000, 0, proto},
			tcase{"short unexpected", 1000, 20 * sim.Microsecond, proto},
			tcase{"long expected", 100_000, 0, proto},
			tcase{"long unexpected", 100_000, 20 * sim.Microsecond, proto},
			tcase{"just above the eager limit, unexpected", 2049, 20 * sim.Microsecond, proto},
			tcase{"zero bytes", 0, 0, proto})
	}
	for _, tc := range cases {
		tc.name = tc.proto + " " + tc.name
		spec := DefaultSpec()
		spec.LongProtocol = tc.proto
		var got []byte
		var st Stats
		worldSpec(t, 2, spec, func(c *Comm, th *cpu.Thread) {
			m := th.CPU().Mem()
			buf := m.Alloc(mem.Host, uint64(max(tc.size, 1)), "buf")
			if c.Rank() == 0 {
				m.Write(buf, pattern(tc.size, 1))
				r, err := c.Isend(buf, uint64(tc.size), 1, 42)
				if err != nil {
					t.Error(err)
				}
				c.Wait(r)
				return
			}
			th.Sleep(tc.recvDelay)
			r, err := c.Irecv(buf, uint64(tc.size), 0, 42)
			if err != nil {
				t.Error(err)
			}
			c.Wait(r)
			if r.Len() != uint64(tc.size) || r.Source() != 0 {
				t.Errorf("%s: len %d source %d", tc.name, r.Len(), r.Source())
			}
			got = append([]byte(nil), m.Bytes(buf, tc.size)...)
			st = c.Stats()
		})
		if !bytes.Equal(got, pattern(tc.size, 1)) {
			t.Errorf("%s: received bytes differ", tc.name)
		}
		if unexpected := tc.recvDelay > 0; unexpected != (st.Unexpected == 1) {
			t.Errorf("%s: unexpected count %d", tc.name, st.Unexpected)
		}
	}
}

// Messages with the same source and tag match receives in posting order;
// wildcards match anything.
func TestMatchingOrderAndWildcards(t *testing.T) {
	var order []byte
	var srcs []int
	world(t, 3, func(c *Comm, th *cpu.Thread) {
		m := th.CPU().Mem()
		switch c.Rank() {
		case 0, 2:
			var reqs []*Request
			for k := range 3 {
				b := m.Alloc(mem.Host, 8, "s")
				m.Write(b, []byte{byte(10*c.Rank() + k)})
				r, _ := c.Isend(b, 1, 1, 5)
				reqs = append(reqs, r)
			}
			c.Waitall(reqs...)
		case 1:
			th.Sleep(30 * sim.Microsecond) // all six messages are unexpected by now
			for k := range 3 {
				b := m.Alloc(mem.Host, 8, "r")
				r, _ := c.Irecv(b, 8, 0, 5)
				c.Wait(r)
				order = append(order, m.Bytes(b, 1)[0])
				_ = k
			}
			for range 3 {
				b := m.Alloc(mem.Host, 8, "r")
				r, _ := c.Irecv(b, 8, AnySource, AnyTag)
				c.Wait(r)
				srcs = append(srcs, r.Source())
			}
		}
	})
	if !bytes.Equal(order, []byte{0, 1, 2}) {
		t.Errorf("rank 0's messages received in order %v, want 0 1 2", order)
	}
	for _, s := range srcs {
		if s != 2 {
			t.Errorf("wildcard receives matched source %v, want only rank 2 left", srcs)
			break
		}
	}
}

func TestBadArguments(t *testing.T) {
	world(t, 2, func(c *Comm, th *cpu.Thread) {
		if _, err := c.Isend(0, 1, 5, 0); err == nil {
			t.Error("send to rank 5 of 2 accepted")
		}
		if _, err := c.Irecv(0, 1, 0, -3); err == nil {
			t.Error("negative tag accepted")
		}
	})
}

// recvTime returns when rank 0's receive of a message rank 1 sends at
// 50 µs completes, with sw.mpi_wait = mode.
func recvTime(t *testing.T, mode string) sim.Time {
	t.Helper()
	e := sim.New(1)
	cl, err := cluster.New(e, cluster.GPUTN(), 2, true)
	if err != nil {
		t.Fatal(err)
	}
	sw := cost.Default()
	sw.MPIWait = mode
	var done sim.Time
	for i, nd := range cl.Nodes {
		nd.CPU.Spawn("rank", func(th *cpu.Thread) {
			c, err := Init(th, nd.NIC, i, 2, DefaultSpec(), sw)
			if err != nil {
				t.Error(err)
				return
			}
			buf := nd.Mem.AllocData(mem.Host, 64, "buf")
			if i == 1 {
				th.Sleep(50*sim.Microsecond - th.Now())
				r, err := c.Isend(buf, 64, 0, 7)
				if err != nil {
					t.Error(err)
					return
				}
				c.Wait(r)
				return
			}
			r, err := c.Irecv(buf, 64, 1, 7)
			if err != nil {
				t.Error(err)
				return
			}
			c.Wait(r)
			done = th.Now()
		})
	}
	if err := e.Run(); err != nil {
		t.Fatal(err)
	}
	return done
}

func TestBlockingProgressPaysTheWakeUp(t *testing.T) {
	poll, block := recvTime(t, cost.WaitPoll), recvTime(t, cost.WaitBlock)
	if d := block - poll; d != cluster.GPUTN().CPU.WakeLatency {
		t.Errorf("blocking progress completed %v after polling progress, want cpu.wake_latency", d)
	}
}

// sendRecv sends size bytes from rank 0 to rank 1, whose receive is posted
// after recvDelay, under spec, and returns when the receive and the send
// completed and both ranks' counters.
func sendRecv(t *testing.T, spec Spec, size uint64, recvDelay sim.Time) (recvDone, sendDone sim.Time, st [2]Stats) {
	t.Helper()
	worldSpec(t, 2, spec, func(c *Comm, th *cpu.Thread) {
		m := th.CPU().Mem()
		buf := m.Alloc(mem.Host, size, "buf")
		if c.Rank() == 0 {
			r, _ := c.Isend(buf, size, 1, 9)
			c.Wait(r)
			sendDone, st[0] = th.Now(), c.Stats()
			return
		}
		th.Sleep(recvDelay)
		r, _ := c.Irecv(buf, size, 0, 9)
		c.Wait(r)
		recvDone, st[1] = th.Now(), c.Stats()
	})
	return recvDone, sendDone, st
}

// Open MPI's Portals 4 protocol (the defaults): a long message to a posted
// receive is one put whose ack completes the send, with no get and no
// round trip before the data, so it completes before the rendezvous
// option's; to a receive posted late only its header is kept and the
// receiver gets the data, and the send waits for that get.
func TestLongEagerProtocol(t *testing.T) {
	const size = 64 << 10
	eager, rndv := DefaultSpec(), DefaultSpec()
	rndv.LongProtocol = LongRndv
	if eager.EagerMax != 2<<10 || eager.LongProtocol != LongEager {
		t.Fatalf("defaults: eager_max %v long_protocol %s, want Open MPI's Portals 4 MTL 2KiB and eager", eager.EagerMax, eager.LongProtocol)
	}
	er, es, est := sendRecv(t, eager, size, 0)
	rr, _, rst := sendRecv(t, rndv, size, 0)
	if est[0].LongSends != 1 || est[1].LongGets != 0 || est[1].Unexpected != 0 {
		t.Errorf("long-eager to a posted receive: %+v / %+v, want one long send and no get", est[0], est[1])
	}
	if rst[0].RndvSends != 1 {
		t.Errorf("rendezvous: %+v, want one rendezvous send", rst[0])
	}
	if er >= rr {
		t.Errorf("posted receive of %d B completes at %v under long-eager, %v under rendezvous: want long-eager earlier (no header round trip)", size, er, rr)
	}
	if es < er-sim.Microsecond {
		t.Errorf("long-eager send completed at %v, long before the data landed at %v: want completion on the ack", es, er)
	}
	const late = 30 * sim.Microsecond
	ur, us, ust := sendRecv(t, eager, size, late)
	if ust[1].LongGets != 1 || ust[1].Unexpected != 1 {
		t.Errorf("long-eager to a late receive: %+v, want the receiver to get the data once", ust[1])
	}
	if us < late || ur < us {
		t.Errorf("long-eager to a receive posted at %v: send done %v, receive done %v; want the send to wait for the receiver's get", late, us, ur)
	}
	// Short messages are not steered to the header-only entry: an
	// unexpected one is copied out of a short receive block.
	_, _, sst := sendRecv(t, eager, 2<<10, late)
	if sst[1].LongGets != 0 || sst[1].Unexpected != 1 || sst[0].EagerSends != 1 {
		t.Errorf("2 KiB to a late receive: %+v / %+v, want a short send copied out of an overflow buffer", sst[0], sst[1])
	}
}

func TestSpecValidate(t *testing.T) {
	s := DefaultSpec()
	s.LongProtocol = "pipelined"
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "mpi.long_protocol") {
		t.Errorf("long_protocol = pipelined: %v, want an error naming mpi.long_protocol", err)
	}
	for _, size := range []unit.Bytes{0, -1, 2 * unit.GiB} {
		s := DefaultSpec()
		s.OverflowBufLen = size
		err := s.Validate()
		if err == nil || !strings.Contains(err.Error(), "mpi.overflow_buffer_size") {
			t.Errorf("overflow_buffer_size = %v: %v, want an error naming mpi.overflow_buffer_size", size, err)
		} else if strings.Contains(err.Error(), "mpi.eager_max") {
			t.Errorf("overflow_buffer_size = %v: %v, want the default eager_max not blamed", size, err)
		}
	}
	s = DefaultSpec()
	s.OverflowBufLen = unit.KiB
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "mpi.eager_max") {
		t.Errorf("eager_max 2 KiB over a 1 KiB buffer: %v, want an error naming mpi.eager_max", err)
	}
}

// A receive nobody sends, with the progress engine polling (the default)
// or blocking, ends the run at once as a deadlock naming the event queue
// the ranks poll: the polls wait on the queue's signal, so they keep no
// event pending and cannot hide it.
func TestUnmatchedReceiveIsADeadlock(t *testing.T) {
	for _, wait := range []string{cost.WaitPoll, cost.WaitBlock} {
		e := sim.New(1)
		cl, err := cluster.New(e, cluster.GPUTN(), 2, true)
		if err != nil {
			t.Fatal(err)
		}
		sw := cost.Default()
		sw.MPIWait = wait
		for i, nd := range cl.Nodes {
			nd.CPU.Spawn("rank", func(th *cpu.Thread) {
				c, err := Init(th, nd.NIC, i, 2, DefaultSpec(), sw)
				if err != nil {
					t.Error(err)
					return
				}
				r, err := c.Irecv(nd.Mem.Alloc(mem.Host, 64, "buf"), 64, 1-i, 7)
				if err != nil {
					t.Error(err)
					return
				}
				c.Wait(r)
			})
		}
		err = e.RunUntil(sim.Second)
		var dl *sim.DeadlockError
		if !errors.As(err, &dl) || len(dl.Blocked) < 2 || !strings.Contains(err.Error(), "MPI event queue") || e.Now() > sim.Millisecond {
			t.Errorf("wait %v: err = %v at %v, want a deadlock of both ranks on their event queues at once", wait, err, e.Now())
		}
	}
}
