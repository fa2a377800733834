package nic_test

import (
	"bytes"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
)

// smallCQPair is an rcPair whose node-0 QP completes into a CQ of 4
// entries with a consumer record.
func smallCQPair(t *testing.T) (*rcPair, *nic.CQ, mem.Addr) {
	t.Helper()
	r := newRCPair(t)
	m := r.v.mems[0]
	cq, err := r.v.nics[0].CreateCQ(m.AllocData(mem.Host, 4*nic.CQESize, "small-cq"), 4)
	if err != nil {
		t.Fatal(err)
	}
	ci := m.AllocData(mem.Host, 8, "cq-ci")
	cq.SetConsumerRecord(ci)
	qp, err := r.v.nics[0].CreateQP(nic.QPConfig{SQ: m.AllocData(mem.Host, 16*nic.WQESize, "sq2"), SQEntries: 16,
		DBRec: m.AllocData(mem.Host, 16, "dbr2"), SendCQ: cq})
	if err != nil {
		t.Fatal(err)
	}
	qp.Connect(1, r.qp[1].Num)
	r.qp[1].Connect(0, qp.Num)
	r.qp[0] = qp
	r.cq[0] = cq
	return r, cq, ci
}

// Six signalled writes into a 4-entry CQ: when software consumes the CQEs
// (advancing the consumer record) all six complete; when it does not, the
// fifth CQE is an overrun: a CQ error event names the QP, the QP is in the
// error state, no slot is overwritten and the last write is flushed (it
// never reaches the target).
func TestVerbsCQOverrun(t *testing.T) {
	for _, consume := range []bool{true, false} {
		r, cq, ci := smallCQPair(t)
		m := r.v.mems[0]
		m.Write(r.buf[0], pattern(64, 9))
		for k := range 6 {
			r.post(0, nic.WQE{Op: nic.VWrite, Flags: nic.WQESignaled, Length: 8, LKey: r.mr[0].Key, LocalAddr: r.buf[0],
				RemoteAddr: r.buf[1] + mem.Addr(8*k), RKey: r.mr[1].Key, WRID: uint64(k)})
		}
		for k := range 6 { // one doorbell per write, 3 µs apart: the fifth CQE comes after four unconsumed ones
			r.v.e.SpawnAt(sim.Time(k)*3*sim.Microsecond, "host", func(p *sim.Proc) { r.qp[0].Doorbell(p, uint64(k+1)) })
		}
		var seen []uint64
		w := r.v.e.Spawn("poller", func(p *sim.Proc) {
			for k := uint64(0); consume && k < 6; k++ {
				a := cq.SlotAddr(k)
				p.WaitUntil(m.Watch(a), "cqe", func() bool { return m.Bytes(a, nic.CQESize)[63] == nic.OwnerFor(k, cq.Entries) })
				seen = append(seen, nic.DecodeCQE(m.Bytes(a, nic.CQESize)).WRID)
				m.Store64(ci, k+1)
			}
		})
		w.SetDaemon()
		r.v.run()
		evs := r.v.nics[0].AsyncEvents()
		if consume {
			if len(seen) != 6 || len(evs) != 0 || cq.Failed() || r.qp[0].State() != nic.QPReady {
				t.Fatalf("consumed: CQEs %v, events %+v, failed %v: want 6 CQEs and no error", seen, evs, cq.Failed())
			}
			continue
		}
		if len(evs) != 1 || evs[0].Kind != nic.EventCQError || evs[0].CQ != cq.Num || len(evs[0].QPs) != 1 || evs[0].QPs[0] != r.qp[0].Num {
			t.Fatalf("unconsumed: events %+v, want one cq-error naming QP %d", evs, r.qp[0].Num)
		}
		if !cq.Failed() || cq.Produced() != 4 || cq.Dropped() != 2 || r.qp[0].State() != nic.QPError {
			t.Fatalf("unconsumed: failed %v produced %d dropped %d state %v: want an errored CQ with 4 CQEs, 2 dropped, QP in error",
				cq.Failed(), cq.Produced(), cq.Dropped(), r.qp[0].State())
		}
		if c := nic.DecodeCQE(m.Bytes(cq.SlotAddr(0), nic.CQESize)); c.WRID != 0 {
			t.Fatalf("slot 0 holds wr_id %d: an unconsumed CQE was overwritten", c.WRID)
		}
		if got := r.v.mems[1].Load64(r.buf[1] + 40); got != 0 {
			t.Fatalf("the sixth write reached the target (%#x) although its QP was in the error state", got)
		}
	}
}

// writeSGL stores list at a in node i's memory.
func (r *rcPair) writeSGL(i int, a mem.Addr, list []nic.SGE) {
	for k, s := range list {
		var b [nic.SGESize]byte
		s.Encode(b[:])
		r.v.mems[i].Write(a+mem.Addr(k*nic.SGESize), b[:])
	}
}

// A write gathers its payload from three entries of two regions, a send
// is scattered over a receive WQE's three entries, and a read scatters its
// response over two entries: every byte lands where the lists say.
func TestVerbsScatterGather(t *testing.T) {
	r := newRCPair(t)
	m0 := r.v.mems[0]
	other := m0.AllocData(mem.Host, 4096, "other")
	omr := r.v.nics[0].RegMR(other, 4096, nic.AccessLocalWrite)
	a, b, c := pattern(100, 1), pattern(3000, 2), pattern(50, 3)
	m0.Write(r.buf[0]+1000, a)
	m0.Write(other+16, b)
	m0.Write(r.buf[0]+9000, c)
	gather := []nic.SGE{{r.buf[0] + 1000, 100, r.mr[0].Key}, {other + 16, 3000, omr.Key}, {r.buf[0] + 9000, 50, r.mr[0].Key}}
	list := m0.AllocData(mem.Host, 256, "sgl")
	r.writeSGL(0, list, gather)
	want := append(append(append([]byte(nil), a...), b...), c...)
	w := nic.WQE{Op: nic.VWrite, Flags: nic.WQESignaled, Length: 3150, RemoteAddr: r.buf[1] + 100, RKey: r.mr[1].Key, WRID: 1}
	w.SetSGL(list, 3)
	r.post(0, w)
	// A send of the same list, scattered at the target over 1000 + 10 + 4000 bytes.
	rlist := r.v.mems[1].AllocData(mem.Host, 256, "rsgl")
	r.writeSGL(1, rlist, []nic.SGE{{r.buf[1] + 20000, 1000, r.mr[1].Key}, {r.buf[1] + 30000, 10, r.mr[1].Key}, {r.buf[1] + 40000, 4000, r.mr[1].Key}})
	r.postRecv(1, nic.RecvWQE{WRID: 9, SGL: rlist, NumSGE: 3})
	s := nic.WQE{Op: nic.VSend, Flags: nic.WQESignaled, Length: 3150, WRID: 2}
	s.SetSGL(list, 3)
	r.post(0, s)
	// A read of 200 remote bytes scattered into two local entries.
	r.v.mems[1].Write(r.buf[1]+50000, pattern(200, 4))
	rd := m0.AllocData(mem.Host, 64, "rdsgl")
	r.writeSGL(0, rd, []nic.SGE{{other + 3500, 120, omr.Key}, {r.buf[0] + 20000, 80, r.mr[0].Key}})
	rw := nic.WQE{Op: nic.VRead, Flags: nic.WQESignaled, Length: 200, RemoteAddr: r.buf[1] + 50000, RKey: r.mr[1].Key, WRID: 3}
	rw.SetSGL(rd, 2)
	r.post(0, rw)
	r.ring(0, 0)
	ini, tgt := r.watchCQ(0), r.watchCQ(1)
	r.v.run()
	if len(*ini) != 3 || len(*tgt) != 1 {
		t.Fatalf("CQEs: initiator %+v, target %+v", *ini, *tgt)
	}
	for _, e := range append(*ini, *tgt...) {
		if e.c.Status != nic.WCSuccess {
			t.Fatalf("CQE %+v failed", e.c)
		}
	}
	if got := r.v.read(1, r.buf[1]+100, 3150); !bytes.Equal(got, want) {
		t.Fatal("gathered write landed wrong")
	}
	got := append(append(r.v.read(1, r.buf[1]+20000, 1000), r.v.read(1, r.buf[1]+30000, 10)...), r.v.read(1, r.buf[1]+40000, 2140)...)
	if !bytes.Equal(got, want) {
		t.Fatal("scattered send landed wrong")
	}
	if !bytes.Equal(r.v.read(1, r.buf[1]+42140, 16), make([]byte, 16)) {
		t.Fatal("scattered send wrote past its message")
	}
	rgot := append(r.v.read(0, other+3500, 120), r.v.read(0, r.buf[0]+20000, 80)...)
	if !bytes.Equal(rgot, pattern(200, 4)) {
		t.Fatal("scattered read response landed wrong")
	}
}

// A list longer than nic.verbs_max_sge, an entry with a bad key and a list
// whose total is not the WQE's length complete with errors and move nothing.
func TestVerbsSGLErrors(t *testing.T) {
	cases := []struct {
		name string
		list func(r *rcPair) []nic.SGE
		want nic.WCStatus
	}{
		{"too many entries", func(r *rcPair) []nic.SGE {
			l := make([]nic.SGE, 5)
			for i := range l {
				l[i] = nic.SGE{r.buf[0] + mem.Addr(8*i), 8, r.mr[0].Key}
			}
			return l[:5]
		}, nic.WCLocLenErr},
		{"bad key", func(r *rcPair) []nic.SGE {
			return []nic.SGE{{r.buf[0], 20, r.mr[0].Key}, {r.buf[0] + 100, 20, 0xbad}}
		}, nic.WCLocProtErr},
		{"total differs from the length", func(r *rcPair) []nic.SGE {
			return []nic.SGE{{r.buf[0], 20, r.mr[0].Key}, {r.buf[0] + 100, 19, r.mr[0].Key}}
		}, nic.WCLocLenErr},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRCPair(t, func(s *cluster.Spec) { s.NIC.VerbsMaxSGE = 4 })
			r.v.mems[0].Write(r.buf[0], pattern(256, 7))
			l := tc.list(r)
			list := r.v.mems[0].AllocData(mem.Host, 256, "sgl")
			r.writeSGL(0, list, l)
			w := nic.WQE{Op: nic.VWrite, Flags: nic.WQESignaled, Length: 40, RemoteAddr: r.buf[1], RKey: r.mr[1].Key, WRID: 1}
			w.SetSGL(list, len(l))
			r.post(0, w)
			r.ring(0, 0)
			got := r.watchCQ(0)
			r.v.run()
			if len(*got) != 1 || (*got)[0].c.Status != tc.want {
				t.Fatalf("CQEs %+v, want one %v", *got, tc.want)
			}
			if !bytes.Equal(r.v.read(1, r.buf[1], 64), make([]byte, 64)) {
				t.Fatal("a failed write changed the target")
			}
		})
	}
}

// Two sends go out before the target posts any receive WQE; the receives
// come 15 µs later. The first send is RNR-NAKed, the second (in flight
// behind it) is dropped; after the RNR timer the requester goes back and
// both are delivered once, in order, into the first two of three receive
// WQEs; the target QP stays ready.
func TestVerbsRNRRetrySucceeds(t *testing.T) {
	r := newRCPair(t)
	r.v.mems[0].Write(r.buf[0], pattern(200, 5))
	r.post(0, nic.WQE{Op: nic.VSend, Flags: nic.WQESignaled, Length: 100, LKey: r.mr[0].Key, LocalAddr: r.buf[0], WRID: 1})
	r.post(0, nic.WQE{Op: nic.VSend, Flags: nic.WQESignaled, Length: 50, LKey: r.mr[0].Key, LocalAddr: r.buf[0] + 100, WRID: 2})
	r.ring(0, 0)
	r.v.e.SpawnAt(15*sim.Microsecond, "post-recv", func(p *sim.Proc) {
		for k := range 3 {
			r.postRecv(1, nic.RecvWQE{WRID: uint64(10 + k), Addr: r.buf[1] + mem.Addr(1000*k), Length: 1000, LKey: r.mr[1].Key})
		}
	})
	ini, tgt := r.watchCQ(0), r.watchCQ(1)
	r.v.run()
	if len(*ini) != 2 || (*ini)[0].c.WRID != 1 || (*ini)[1].c.WRID != 2 || (*ini)[0].c.Status != nic.WCSuccess || (*ini)[1].c.Status != nic.WCSuccess {
		t.Fatalf("initiator CQEs %+v: want sends 1 and 2 completed in order", *ini)
	}
	if len(*tgt) != 2 || (*tgt)[0].c.WRID != 10 || (*tgt)[0].c.ByteLen != 100 || (*tgt)[1].c.WRID != 11 || (*tgt)[1].c.ByteLen != 50 {
		t.Fatalf("target CQEs %+v: want receives 10 (100 B) and 11 (50 B), each once", *tgt)
	}
	if !bytes.Equal(r.v.read(1, r.buf[1], 100), pattern(200, 5)[:100]) || !bytes.Equal(r.v.read(1, r.buf[1]+1000, 50), pattern(200, 5)[100:150]) {
		t.Fatal("sends landed wrong")
	}
	st := r.v.nics[0].VerbsStats()
	if st.RNRNaks < 1 || st.RNRRetries != st.RNRNaks || r.qp[1].State() != nic.QPReady || r.qp[0].State() != nic.QPReady {
		t.Fatalf("RNR NAKs %d retries %d, states %v/%v: want retried NAKs and both QPs ready", st.RNRNaks, st.RNRRetries, r.qp[0].State(), r.qp[1].State())
	}
	if (*ini)[0].at < 15*sim.Microsecond {
		t.Fatalf("send completed at %v, before any receive WQE was posted", (*ini)[0].at)
	}
}

// Without a receive WQE ever posted, the requester retries exactly
// nic.verbs_rnr_retry times, RNR timer apart, then completes the send with
// rnr-retry-exceeded and flushes the next WQE; the responder stays ready.
func TestVerbsRNRRetryExhausted(t *testing.T) {
	for _, retries := range []int{0, 2} {
		r := newRCPair(t, func(s *cluster.Spec) { s.NIC.VerbsRNRRetry, s.NIC.VerbsRNRTimer = retries, 20*sim.Microsecond })
		r.post(0, nic.WQE{Op: nic.VSend, Flags: nic.WQESignaled, Length: 8, LKey: r.mr[0].Key, LocalAddr: r.buf[0], WRID: 1})
		r.post(0, nic.WQE{Op: nic.VWrite, Flags: nic.WQESignaled, Length: 8, LKey: r.mr[0].Key, LocalAddr: r.buf[0],
			RemoteAddr: r.buf[1] + 64, RKey: r.mr[1].Key, WRID: 2})
		r.v.mems[0].Write(r.buf[0], pattern(8, 1))
		r.ring(0, 0)
		ini := r.watchCQ(0)
		r.v.run()
		if len(*ini) != 2 || (*ini)[0].c.Status != nic.WCRNRRetryExc || (*ini)[1].c.Status != nic.WCWRFlushErr {
			t.Fatalf("retries %d: CQEs %+v, want rnr-retry-exceeded then a flush", retries, *ini)
		}
		st := r.v.nics[0].VerbsStats()
		if st.RNRNaks != uint64(retries+1) || st.RNRRetries != uint64(retries) {
			t.Fatalf("retries %d: %d NAKs, %d retries", retries, st.RNRNaks, st.RNRRetries)
		}
		if at := (*ini)[0].at; at < sim.Time(retries)*20*sim.Microsecond || at > sim.Time(retries)*20*sim.Microsecond+20*sim.Microsecond {
			t.Fatalf("retries %d: failed at %v, want after %d RNR timers of 20 µs", retries, at, retries)
		}
		if r.qp[1].State() != nic.QPReady || r.qp[0].State() != nic.QPError {
			t.Fatalf("retries %d: states %v/%v, want the requester in error and the responder ready", retries, r.qp[0].State(), r.qp[1].State())
		}
		if !bytes.Equal(r.v.read(1, r.buf[1]+64, 8), make([]byte, 8)) {
			t.Fatalf("retries %d: the flushed write reached the target", retries)
		}
	}
}

// FuzzSGLRoundTrip: scatter/gather entries and receive WQEs (with their
// list fields) decode and re-encode to the same values.
func FuzzSGLRoundTrip(f *testing.F) {
	f.Add(make([]byte, 64))
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < nic.WQESize {
			return
		}
		s := nic.DecodeSGE(b)
		var sb [nic.SGESize]byte
		s.Encode(sb[:])
		if !bytes.Equal(sb[:], b[:nic.SGESize]) || nic.DecodeSGE(sb[:]) != s {
			t.Fatalf("SGE round trip: %x → %+v → %x", b[:nic.SGESize], s, sb)
		}
		r := nic.DecodeRecvWQE(b)
		var rb [nic.WQESize]byte
		r.Encode(rb[:])
		if nic.DecodeRecvWQE(rb[:]) != r {
			t.Fatalf("receive WQE round trip: %+v", r)
		}
	})
}
