package nic_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/sim"
)

// rcPair is a connected QP on each of nodes 0 and 1, each with its own CQ
// and receive queue, all in host memory.
type rcPair struct {
	v   *env
	qp  [2]*nic.QP
	cq  [2]*nic.CQ
	dbr [2]mem.Addr
	pi  [2]uint64 // send producer index
	rpi [2]uint64 // receive producer index
	mr  [2]*nic.MR
	buf [2]mem.Addr
}

const rcBuf = 64 * 1024

func newRCPair(t *testing.T, opts ...opt) *rcPair {
	t.Helper()
	return newRCPairCQ(t, mem.Host, opts...)
}

// newRCPairCQ is newRCPair with the CQs in pool cqPool.
func newRCPairCQ(t *testing.T, cqPool mem.Pool, opts ...opt) *rcPair {
	t.Helper()
	v := newEnv(t, 2, true, opts...)
	r := &rcPair{v: v}
	for i := range 2 {
		m := v.mems[i]
		cqBase := m.AllocData(cqPool, 64*nic.CQESize, "cq")
		cq, err := v.nics[i].CreateCQ(cqBase, 64)
		if err != nil {
			t.Fatal(err)
		}
		r.cq[i] = cq
		r.dbr[i] = m.AllocData(mem.Host, 16, "dbr")
		qp, err := v.nics[i].CreateQP(nic.QPConfig{SQ: m.AllocData(mem.Host, 16*nic.WQESize, "sq"), SQEntries: 16,
			RQ: m.AllocData(mem.Host, 16*nic.WQESize, "rq"), RQEntries: 16, DBRec: r.dbr[i], SendCQ: cq})
		if err != nil {
			t.Fatal(err)
		}
		r.qp[i] = qp
		r.buf[i] = m.AllocData(mem.Host, rcBuf, "buf")
		r.mr[i] = v.nics[i].RegMR(r.buf[i], rcBuf, nic.AccessLocalWrite|nic.AccessRemoteWrite|nic.AccessRemoteRead)
	}
	r.qp[0].Connect(1, r.qp[1].Num)
	r.qp[1].Connect(0, r.qp[0].Num)
	return r
}

// post writes w into node i's send ring (functionally, as software would)
// and returns its index.
func (r *rcPair) post(i int, w nic.WQE) uint64 {
	q := r.qp[i]
	cfg := q.Config()
	w.QPN = q.Num
	var b [nic.WQESize]byte
	w.Encode(b[:])
	idx := r.pi[i]
	r.v.mems[i].Write(cfg.SQ+mem.Addr(idx%uint64(cfg.SQEntries)*nic.WQESize), b[:])
	r.pi[i]++
	return idx
}

// postRecv adds a receive WQE on node i and updates the doorbell record.
func (r *rcPair) postRecv(i int, rw nic.RecvWQE) {
	cfg := r.qp[i].Config()
	var b [nic.WQESize]byte
	rw.Encode(b[:])
	r.v.mems[i].Write(cfg.RQ+mem.Addr(r.rpi[i]%uint64(cfg.RQEntries)*nic.WQESize), b[:])
	r.rpi[i]++
	r.v.mems[i].Store64(r.dbr[i]+8, r.rpi[i])
}

// ring rings node i's doorbell from a host process at time at.
func (r *rcPair) ring(i int, at sim.Time) {
	pi := r.pi[i]
	r.v.e.SpawnAt(at, "host", func(p *sim.Proc) { r.qp[i].Doorbell(p, pi) })
}

// cqes returns node i's CQEs in order with the time each became visible
// (recorded by a zero-cost watcher), checking the owner bits.
func (r *rcPair) watchCQ(i int) *[]cqeAt {
	out := &[]cqeAt{}
	cq := r.cq[i]
	m := r.v.mems[i]
	p := r.v.e.Spawn("cq-watch", func(p *sim.Proc) {
		for k := uint64(0); ; k++ {
			a := cq.SlotAddr(k)
			var b [nic.CQESize]byte
			p.WaitUntil(m.Watch(a), "cqe", func() bool {
				m.Read(a, b[:])
				return b[63] == nic.OwnerFor(k, cq.Entries)
			})
			*out = append(*out, cqeAt{nic.DecodeCQE(b[:]), p.Now()})
		}
	})
	p.SetDaemon()
	return out
}

type cqeAt struct {
	c  nic.CQE
	at sim.Time
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)*7 + seed
	}
	return b
}

func TestVerbsWriteCompletesAfterAck(t *testing.T) {
	r := newRCPair(t)
	data := pattern(5000, 3)
	r.v.mems[0].Write(r.buf[0], data)
	r.post(0, nic.WQE{Op: nic.VWrite, Flags: nic.WQESignaled, Length: 5000, LKey: r.mr[0].Key, LocalAddr: r.buf[0],
		RemoteAddr: r.buf[1] + 100, RKey: r.mr[1].Key, WRID: 77})
	r.ring(0, 0)
	var landed sim.Time
	w := r.v.e.Spawn("land", func(p *sim.Proc) {
		p.WaitUntil(r.v.mems[1].Watch(r.buf[1]+100+4992), "last line", func() bool {
			return bytes.Equal(r.v.read(1, r.buf[1]+100, 5000), data)
		})
		landed = p.Now()
	})
	w.SetDaemon()
	got := r.watchCQ(0)
	r.v.run()
	if len(*got) != 1 {
		t.Fatalf("%d CQEs, want 1", len(*got))
	}
	c := (*got)[0]
	if c.c.Status != nic.WCSuccess || c.c.WRID != 77 || c.c.QPN != r.qp[0].Num || c.c.ByteLen != 5000 || c.c.Op != nic.VWrite {
		t.Fatalf("CQE %+v", c.c)
	}
	if landed == 0 || c.at <= landed {
		t.Fatalf("CQE at %v, data landed at %v: the completion must follow the ack", c.at, landed)
	}
	// The ack crosses the switch back: at least one switch latency more.
	if c.at-landed < r.v.spec.Switch.Latency {
		t.Fatalf("CQE only %v after the data landed", c.at-landed)
	}
}

func TestVerbsInlineCarriesDataInTheWQE(t *testing.T) {
	for _, inline := range []bool{true, false} {
		r := newRCPair(t)
		r.v.mems[0].Write(r.buf[0], []byte("gather-source!!!"))
		w := nic.WQE{Op: nic.VWrite, Flags: nic.WQESignaled, Length: 16, LKey: r.mr[0].Key, LocalAddr: r.buf[0],
			RemoteAddr: r.buf[1], RKey: r.mr[1].Key}
		if inline {
			w.Flags |= nic.WQEInline
			copy(w.Inline[:], "inline-payload!!")
		}
		r.post(0, w)
		r.ring(0, 0)
		r.v.run()
		want := "gather-source!!!"
		if inline {
			want = "inline-payload!!"
		}
		if got := string(r.v.read(1, r.buf[1], 16)); got != want {
			t.Fatalf("inline=%v: target holds %q, want %q", inline, got, want)
		}
		if st := r.v.nics[0].VerbsStats(); st.Fetches != 1 {
			t.Fatalf("inline=%v: %d WQE fetches", inline, st.Fetches)
		}
	}
}

func TestVerbsOneQPInOrder(t *testing.T) {
	r := newRCPair(t)
	for k := range 8 {
		src := r.buf[0] + mem.Addr(k*8)
		r.v.mems[0].Store64(src, uint64(k+1))
		r.post(0, nic.WQE{Op: nic.VWrite, Flags: nic.WQESignaled, Length: 8, LKey: r.mr[0].Key, LocalAddr: src,
			RemoteAddr: r.buf[1], RKey: r.mr[1].Key, WRID: uint64(k)})
	}
	r.ring(0, 0)
	got := r.watchCQ(0)
	r.v.run()
	if v := r.v.mems[1].Load64(r.buf[1]); v != 8 {
		t.Fatalf("target word %d: the last write must land last", v)
	}
	if len(*got) != 8 {
		t.Fatalf("%d CQEs", len(*got))
	}
	for k, c := range *got {
		if c.c.WRID != uint64(k) || c.c.Index != uint32(k) {
			t.Fatalf("CQE %d is WQE %d: completions must be in order", k, c.c.WRID)
		}
		if k > 0 && c.at < (*got)[k-1].at {
			t.Fatal("CQE times out of order")
		}
	}
}

func TestVerbsUnsignaledWritesNoCQE(t *testing.T) {
	r := newRCPair(t)
	for k := range 4 {
		f := uint8(0)
		if k == 3 {
			f = nic.WQESignaled
		}
		r.post(0, nic.WQE{Op: nic.VWrite, Flags: f, Length: 8, LKey: r.mr[0].Key, LocalAddr: r.buf[0],
			RemoteAddr: r.buf[1], RKey: r.mr[1].Key, WRID: uint64(k)})
	}
	r.ring(0, 0)
	got := r.watchCQ(0)
	r.v.run()
	if len(*got) != 1 || (*got)[0].c.WRID != 3 || r.qp[0].Retired() != 4 {
		t.Fatalf("CQEs %+v retired %d: only the signalled WQE reports", *got, r.qp[0].Retired())
	}
}

func TestVerbsSharedCQ(t *testing.T) {
	r := newRCPair(t)
	m := r.v.mems[0]
	q2, err := r.v.nics[0].CreateQP(nic.QPConfig{SQ: m.AllocData(mem.Host, 16*nic.WQESize, "sq2"), SQEntries: 16,
		DBRec: m.AllocData(mem.Host, 16, "dbr2"), SendCQ: r.cq[0]})
	if err != nil {
		t.Fatal(err)
	}
	m1 := r.v.mems[1]
	cq1b, _ := r.v.nics[1].CreateCQ(m1.AllocData(mem.Host, 8*nic.CQESize, "cqb"), 8)
	t2, _ := r.v.nics[1].CreateQP(nic.QPConfig{SQ: m1.AllocData(mem.Host, 16*nic.WQESize, "sqb"), SQEntries: 16,
		DBRec: m1.AllocData(mem.Host, 16, "dbrb"), SendCQ: cq1b})
	q2.Connect(1, t2.Num)
	t2.Connect(0, q2.Num)
	for k := range 3 {
		r.post(0, nic.WQE{Op: nic.VWrite, Flags: nic.WQESignaled, Length: 8, LKey: r.mr[0].Key, LocalAddr: r.buf[0],
			RemoteAddr: r.buf[1], RKey: r.mr[1].Key, WRID: uint64(k)})
		w := nic.WQE{Op: nic.VWrite, Flags: nic.WQESignaled, Length: 8, LKey: r.mr[0].Key, LocalAddr: r.buf[0],
			RemoteAddr: r.buf[1] + 64, RKey: r.mr[1].Key, WRID: uint64(100 + k), QPN: q2.Num}
		var b [nic.WQESize]byte
		w.Encode(b[:])
		m.Write(q2.Config().SQ+mem.Addr(k*nic.WQESize), b[:])
	}
	r.ring(0, 0)
	r.v.e.Spawn("host2", func(p *sim.Proc) { q2.Doorbell(p, 3) })
	got := r.watchCQ(0)
	r.v.run()
	per := map[uint32]int{}
	for _, c := range *got {
		per[c.c.QPN]++
	}
	if len(*got) != 6 || per[r.qp[0].Num] != 3 || per[q2.Num] != 3 {
		t.Fatalf("shared CQ got %d CQEs per QP %v", len(*got), per)
	}
}

func TestVerbsReadFetchesRemoteData(t *testing.T) {
	r := newRCPair(t)
	data := pattern(3000, 9)
	r.v.mems[1].Write(r.buf[1]+64, data)
	r.post(0, nic.WQE{Op: nic.VRead, Flags: nic.WQESignaled, Length: 3000, LKey: r.mr[0].Key, LocalAddr: r.buf[0] + 8,
		RemoteAddr: r.buf[1] + 64, RKey: r.mr[1].Key})
	r.ring(0, 0)
	got := r.watchCQ(0)
	r.v.run()
	if !bytes.Equal(r.v.read(0, r.buf[0]+8, 3000), data) {
		t.Fatal("read data differs")
	}
	if len(*got) != 1 || (*got)[0].c.Status != nic.WCSuccess || (*got)[0].c.Op != nic.VRead {
		t.Fatalf("CQEs %+v", *got)
	}
}

// TestVerbsReadCompletionSeesData: the initiator's CQE of an RDMA read is
// written behind the response's payload writes on one ordered path, not
// after they are visible, so a reader that sees the CQE finds every byte,
// and the CQE is visible less than one posted write after the last byte
// (a NIC that waits for the data to land before writing the CQE pays a
// whole write more). The CQ is in GPU memory and the buffer in host memory
// behind a PCIe switch, so the CQE's own write would arrive first: only
// the ordering keeps it behind the data.
func TestVerbsReadCompletionSeesData(t *testing.T) {
	for _, n := range []int{8, 3000, 3*4096 + 5} {
		t.Run(fmt.Sprint(n, "B"), func(t *testing.T) {
			r := newRCPairCQ(t, mem.GPU, func(s *cluster.Spec) { s.PCIe.SwitchLatency = 400 * sim.Nanosecond })
			data := pattern(n, 11)
			r.v.mems[1].Write(r.buf[1]+64, data)
			dst := r.buf[0] + 8
			r.post(0, nic.WQE{Op: nic.VRead, Flags: nic.WQESignaled, Length: uint32(n), LKey: r.mr[0].Key, LocalAddr: dst,
				RemoteAddr: r.buf[1] + 64, RKey: r.mr[1].Key, WRID: 5})
			r.ring(0, 0)
			var landed, seen sim.Time
			w := r.v.e.Spawn("land", func(p *sim.Proc) {
				last := dst + mem.Addr(n-1)
				p.WaitUntil(r.v.mems[0].Watch(last), "last byte", func() bool {
					return bytes.Equal(r.v.read(0, dst, n), data)
				})
				landed = p.Now()
			})
			w.SetDaemon()
			cq := r.cq[0]
			c := r.v.e.Spawn("cq-reader", func(p *sim.Proc) {
				a := cq.SlotAddr(0)
				p.WaitUntil(r.v.mems[0].Watch(a), "cqe", func() bool {
					var b [nic.CQESize]byte
					r.v.mems[0].Read(a, b[:])
					return b[63] == nic.OwnerFor(0, cq.Entries)
				})
				seen = p.Now()
				if got := r.v.read(0, dst, n); !bytes.Equal(got, data) {
					t.Errorf("CQE visible at %v before the read's data", seen)
				}
			})
			c.SetDaemon()
			r.v.run()
			if seen == 0 || landed == 0 {
				t.Fatalf("CQE at %v, data at %v: want both", seen, landed)
			}
			s := r.v.spec
			if wr := s.PCIe.Overhead + s.PCIe.Latency; seen < landed || seen-landed >= wr {
				t.Fatalf("CQE at %v, data landed at %v: want the CQE within one posted write (%v) after it", seen, landed, wr)
			}
		})
	}
}

func TestVerbsSendRecvAndImmediate(t *testing.T) {
	r := newRCPair(t)
	r.postRecv(1, nic.RecvWQE{WRID: 500, Addr: r.buf[1] + 1024, Length: 4096, LKey: r.mr[1].Key})
	r.postRecv(1, nic.RecvWQE{WRID: 501, Addr: r.buf[1], Length: 8, LKey: r.mr[1].Key})
	data := pattern(2500, 1)
	r.v.mems[0].Write(r.buf[0], data)
	r.post(0, nic.WQE{Op: nic.VSend, Flags: nic.WQESignaled, Length: 2500, LKey: r.mr[0].Key, LocalAddr: r.buf[0]})
	r.post(0, nic.WQE{Op: nic.VWriteImm, Flags: nic.WQESignaled, Length: 16, LKey: r.mr[0].Key, LocalAddr: r.buf[0],
		RemoteAddr: r.buf[1] + 8192, RKey: r.mr[1].Key, Imm: 0xfeed})
	r.ring(0, 0)
	tgt := r.watchCQ(1)
	ini := r.watchCQ(0)
	r.v.run()
	if !bytes.Equal(r.v.read(1, r.buf[1]+1024, 2500), data) {
		t.Fatal("send landed wrong")
	}
	if !bytes.Equal(r.v.read(1, r.buf[1]+8192, 16), data[:16]) {
		t.Fatal("write-with-immediate landed wrong")
	}
	if len(*tgt) != 2 || !(*tgt)[0].c.Recv || (*tgt)[0].c.WRID != 500 || (*tgt)[0].c.ByteLen != 2500 || (*tgt)[0].c.HasImm {
		t.Fatalf("target CQEs %+v", *tgt)
	}
	if c := (*tgt)[1].c; c.WRID != 501 || !c.HasImm || c.Imm != 0xfeed || c.Op != nic.VWriteImm {
		t.Fatalf("write-imm receive CQE %+v", c)
	}
	if len(*ini) != 2 || (*ini)[0].c.Status != nic.WCSuccess || (*ini)[1].c.Status != nic.WCSuccess {
		t.Fatalf("initiator CQEs %+v", *ini)
	}
}

// Bad keys and addresses complete with error CQEs, flush the rest of the
// queue, leave the target untouched and never panic.
func TestVerbsErrorCQEs(t *testing.T) {
	cases := []struct {
		name string
		mod  func(r *rcPair, w *nic.WQE)
		want nic.WCStatus
	}{
		{"bad rkey", func(r *rcPair, w *nic.WQE) { w.RKey = 0xdead }, nic.WCRemAccessErr},
		{"remote range past the region", func(r *rcPair, w *nic.WQE) { w.RemoteAddr = r.buf[1] + rcBuf - 4 }, nic.WCRemAccessErr},
		{"unregistered remote address", func(r *rcPair, w *nic.WQE) { w.RemoteAddr = 0x10 }, nic.WCRemAccessErr},
		{"bad lkey", func(r *rcPair, w *nic.WQE) { w.LKey = 0xbeef }, nic.WCLocProtErr},
		{"local range past the region", func(r *rcPair, w *nic.WQE) { w.LocalAddr = r.buf[0] + rcBuf }, nic.WCLocProtErr},
		{"inline too long", func(r *rcPair, w *nic.WQE) { w.Flags |= nic.WQEInline; w.Length = 17 }, nic.WCLocLenErr},
		{"bad opcode", func(r *rcPair, w *nic.WQE) { w.Op = 99 }, nic.WCLocQPOpErr},
		{"send without receive WQE", func(r *rcPair, w *nic.WQE) { w.Op = nic.VSend }, nic.WCRNRRetryExc},
		{"read without remote-read access", func(r *rcPair, w *nic.WQE) {
			w.Op = nic.VRead
			w.RKey = r.v.nics[1].RegMR(r.buf[1], 64, nic.AccessRemoteWrite).Key
		}, nic.WCRemAccessErr},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRCPair(t)
			r.v.mems[0].Write(r.buf[0], pattern(64, 5))
			w := nic.WQE{Op: nic.VWrite, Flags: nic.WQESignaled, Length: 8, LKey: r.mr[0].Key, LocalAddr: r.buf[0],
				RemoteAddr: r.buf[1], RKey: r.mr[1].Key, WRID: 1}
			tc.mod(r, &w)
			r.post(0, w)
			r.post(0, nic.WQE{Op: nic.VWrite, Flags: nic.WQESignaled, Length: 8, LKey: r.mr[0].Key, LocalAddr: r.buf[0],
				RemoteAddr: r.buf[1] + 32, RKey: r.mr[1].Key, WRID: 2})
			r.ring(0, 0)
			got := r.watchCQ(0)
			r.v.run()
			if len(*got) != 2 || (*got)[0].c.Status != tc.want || (*got)[1].c.Status != nic.WCWRFlushErr {
				t.Fatalf("CQEs %+v: want %v then a flush", *got, tc.want)
			}
			if r.qp[0].State() != nic.QPError {
				t.Fatal("QP not in the error state")
			}
			if !bytes.Equal(r.v.read(1, r.buf[1], 64), make([]byte, 64)) {
				t.Fatal("a failed or flushed write changed the target")
			}
		})
	}
}

// One QP processes its WQEs serially; several QPs use several engines, so
// the same messages spread over 4 QPs finish sooner, unless the NIC has
// one engine.
func TestVerbsQPsRunInParallel(t *testing.T) {
	elapsed := func(qps, engines int) sim.Time {
		v := newEnv(t, 2, true, func(s *cluster.Spec) { s.NIC.VerbsEngines = engines })
		const msgs = 64
		var last sim.Time
		var qs [2][]*nic.QP
		bufs := [2]mem.Addr{}
		keys := [2]uint32{}
		for i := range 2 {
			m := v.mems[i]
			cq, _ := v.nics[i].CreateCQ(m.AllocData(mem.Host, 256*nic.CQESize, "cq"), 256)
			bufs[i] = m.AllocData(mem.Host, 4096, "buf")
			keys[i] = v.nics[i].RegMR(bufs[i], 4096, nic.AccessRemoteWrite).Key
			for range qps {
				q, _ := v.nics[i].CreateQP(nic.QPConfig{SQ: m.AllocData(mem.Host, msgs*nic.WQESize, "sq"), SQEntries: msgs,
					DBRec: m.AllocData(mem.Host, 16, "dbr"), SendCQ: cq})
				qs[i] = append(qs[i], q)
			}
		}
		for k := range qps {
			qs[0][k].Connect(1, qs[1][k].Num)
			qs[1][k].Connect(0, qs[0][k].Num)
			per := msgs / qps
			for j := range per {
				w := nic.WQE{Op: nic.VWrite, Flags: nic.WQESignaled, Length: 64, LKey: keys[0], LocalAddr: bufs[0],
					RemoteAddr: bufs[1], RKey: keys[1], QPN: qs[0][k].Num}
				var b [nic.WQESize]byte
				w.Encode(b[:])
				v.mems[0].Write(qs[0][k].Config().SQ+mem.Addr(j*nic.WQESize), b[:])
			}
			q := qs[0][k]
			v.e.Spawn("host", func(p *sim.Proc) { q.Doorbell(p, uint64(per)) })
		}
		v.e.Spawn("wait", func(p *sim.Proc) {
			for _, q := range qs[0] {
				for q.Retired() < uint64(msgs/qps) {
					p.Sleep(10 * sim.Nanosecond)
				}
			}
			last = p.Now()
		})
		v.run()
		return last
	}
	one, four, fourOneEngine := elapsed(1, 16), elapsed(4, 16), elapsed(4, 1)
	if !(four < one*2/3) {
		t.Fatalf("4 QPs took %v, 1 QP %v: QPs must run in parallel", four, one)
	}
	if fourOneEngine < one*9/10 {
		t.Fatalf("4 QPs on one engine took %v, 1 QP %v: one engine serialises them", fourOneEngine, one)
	}
}

func TestOwnerBitAlternatesPerPass(t *testing.T) {
	for k, want := range []uint8{1, 1, 1, 1, 0, 0, 0, 0, 1} {
		if got := nic.OwnerFor(uint64(k), 4); got != want {
			t.Fatalf("OwnerFor(%d, 4) = %d, want %d", k, got, want)
		}
	}
}

func FuzzWQERoundTrip(f *testing.F) {
	f.Add(make([]byte, 64))
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) < nic.WQESize {
			return
		}
		w := nic.DecodeWQE(b)
		var out [nic.WQESize]byte
		w.Encode(out[:])
		// Bytes 2–3 of word 0 are reserved and not kept.
		in := append([]byte(nil), b[:nic.WQESize]...)
		in[2], in[3] = 0, 0
		if !bytes.Equal(in, out[:]) {
			t.Fatalf("WQE round trip\n in %x\nout %x", in, out)
		}
		c := nic.DecodeCQE(b)
		var cb [nic.CQESize]byte
		c.Encode(cb[:])
		if nic.DecodeCQE(cb[:]) != c {
			t.Fatal("CQE round trip")
		}
	})
}

func TestVerbsAtomics(t *testing.T) {
	r := newRCPair(t)
	r.v.mems[1].Store64(r.buf[1]+64, 10)
	at := func(op uint32, width uint32, operand, cmp uint64, res mem.Addr) nic.WQE {
		w := nic.WQE{Op: nic.VAtomic, Flags: nic.WQESignaled, Imm: op, Length: width, LKey: r.mr[0].Key, LocalAddr: res,
			RemoteAddr: r.buf[1] + 64, RKey: r.mr[1].Key}
		binary.LittleEndian.PutUint64(w.Inline[:8], operand)
		binary.LittleEndian.PutUint64(w.Inline[8:], cmp)
		return w
	}
	r.post(0, at(nic.AtomicAdd, 8, 5, 0, r.buf[0]))       // 10 → 15, old 10
	r.post(0, at(nic.AtomicCSwap, 8, 99, 15, r.buf[0]+8)) // 15 → 99, old 15
	r.post(0, at(nic.AtomicCSwap, 8, 7, 1, r.buf[0]+16))  // no swap, old 99
	r.post(0, at(nic.AtomicSwap, 4, 3, 0, r.buf[0]+24))   // low word 99 → 3, old 99
	r.ring(0, 0)
	got := r.watchCQ(0)
	r.v.run()
	m0 := r.v.mems[0]
	olds := []uint64{m0.Load64(r.buf[0]), m0.Load64(r.buf[0] + 8), m0.Load64(r.buf[0] + 16), m0.Load64(r.buf[0]+24) & 0xffffffff}
	if olds[0] != 10 || olds[1] != 15 || olds[2] != 99 || olds[3] != 99 || r.v.mems[1].Load64(r.buf[1]+64) != 3 {
		t.Fatalf("old values %v, final %d", olds, r.v.mems[1].Load64(r.buf[1]+64))
	}
	if len(*got) != 4 || (*got)[3].c.Status != nic.WCSuccess {
		t.Fatalf("CQEs %+v", *got)
	}
}
