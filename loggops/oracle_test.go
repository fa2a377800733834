package loggops

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/goal"
	"github.com/gpunetsim/gpunetsim/sim"
)

// oracle is a deliberately simple LogGOPS simulator written straight from
// the semantics in doc.go: whole program in memory, a linear scan for the
// next event, slices for the queues. Run must agree with it exactly.
func oracle(prog goal.Program, p Params) ([]sim.Time, error) {
	type oop struct {
		st         goal.Stmt
		deps       int
		start, end []int // dependents by irequires / requires
		earliest   sim.Time
		oEnd       sim.Time
	}
	type item struct {
		t      sim.Time
		ts     int
		msg    bool
		host   int
		op     int
		src    int // message fields
		size   uint64
		tag    uint32
		cpu    int
		nic    int
		sendOp int
		end    sim.Time
	}
	n, nc, nn := prog.NumRanks(), prog.NumCPU(), prog.NumNIC()
	ops := make([][]*oop, n)
	for h := range n {
		rr, _ := prog.Rank(h)
		var s goal.Stmt
		for {
			ok, err := rr.Next(&s)
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			if s.Kind.IsOp() {
				st := s
				if st.Kind == goal.Calc {
					st.Size = scale(st.Size, p.CalcUnit)
				}
				ops[h] = append(ops[h], &oop{st: st})
				continue
			}
			a, b := ops[h][s.A], ops[h][s.B]
			a.deps++
			if s.Kind == goal.IRequires {
				b.start = append(b.start, int(s.A))
			} else {
				b.end = append(b.end, int(s.A))
			}
		}
	}
	cpu := make([]sim.Time, n*nc)
	gs := make([]sim.Time, n*nn)
	gr := make([]sim.Time, n*nn)
	var q []item
	ts := 0
	type rq struct{ host, op int }
	rqs := make([][]int, n)
	uqs := make([][]item, n)
	var ready []rq
	push := func(it item) { q = append(q, it) }
	free := func(h int, o *oop) {
		ts++
		t := max(cpu[h*nc+int(o.st.CPU)], o.earliest)
		if o.st.Kind == goal.Send {
			t = max(t, gs[h*nn+int(o.st.NIC)])
		}
		push(item{t: t, ts: ts, host: h, op: indexOf(ops[h], o)})
	}
	release := func(h int, list []int, t sim.Time) {
		for _, i := range list {
			d := ops[h][i]
			d.earliest = max(d.earliest, t)
			d.deps--
			if d.deps == 0 {
				ready = append(ready, rq{h, i})
			}
		}
	}
	flush := func() {
		sort.SliceStable(ready, func(i, j int) bool {
			a, b := ready[i], ready[j]
			if a.host != b.host {
				return a.host < b.host
			}
			if ka, kb := ops[a.host][a.op].st.Kind, ops[b.host][b.op].st.Kind; ka != kb {
				return ka < kb
			}
			return a.op < b.op // program order, not release order
		})
		for _, r := range ready {
			free(r.host, ops[r.host][r.op])
		}
		ready = ready[:0]
	}
	for h := range n {
		for i, o := range ops[h] {
			if o.deps == 0 {
				ready = append(ready, rq{h, i})
			}
		}
		sort.SliceStable(ready, func(i, j int) bool {
			return ops[h][ready[i].op].st.Kind < ops[h][ready[j].op].st.Kind
		})
		for _, r := range ready {
			ts++
			push(item{t: 0, ts: ts, host: h, op: r.op})
		}
		ready = ready[:0]
	}
	rendezvous := func(m item, t sim.Time) {
		cpu[m.src*nc+m.cpu] = max(cpu[m.src*nc+m.cpu], t)
		gs[m.src*nn+m.nic] = max(gs[m.src*nn+m.nic], t)
		so := ops[m.src][m.sendOp]
		release(m.src, so.end, max(t, so.oEnd))
	}
	match := func(rs, rt uint32, m item) bool {
		return (rs == goal.AnySource || int(rs) == m.src) && (rt == goal.AnyTag || rt == m.tag)
	}
	for len(q) > 0 {
		bi := 0
		for i := range q {
			if q[i].t < q[bi].t || q[i].t == q[bi].t && q[i].ts < q[bi].ts {
				bi = i
			}
		}
		it := q[bi]
		q = append(q[:bi], q[bi+1:]...)
		t, h := it.t, it.host
		if it.msg {
			c, nic := h*nc+it.cpu, h*nn+it.nic
			if f := max(cpu[c], gr[nic]); f > t {
				it.t = f
				push(it)
				continue
			}
			gb := perByte(it.size, p.GapPerByte)
			end := t + p.O + max(perByte(it.size, p.OverheadPerByte), gb)
			cpu[c], gr[nic] = end, t+p.Gap+gb
			found := -1
			for k, ri := range rqs[h] {
				r := ops[h][ri]
				if match(r.st.Peer, r.st.Tag, it) {
					found = k
					break
				}
			}
			if found < 0 {
				it.end = end
				uqs[h] = append(uqs[h], it)
			} else {
				ri := rqs[h][found]
				rqs[h] = append(rqs[h][:found], rqs[h][found+1:]...)
				if it.size > uint64(p.Eager) {
					rendezvous(it, t)
				}
				release(h, ops[h][ri].end, end)
			}
		} else {
			o := ops[h][it.op]
			c := h*nc + int(o.st.CPU)
			switch o.st.Kind {
			case goal.Calc:
				if cpu[c] > t {
					it.t = cpu[c]
					push(it)
					continue
				}
				cpu[c] = t + sim.Time(o.st.Size)
				release(h, o.start, t)
				release(h, o.end, cpu[c])
			case goal.Send:
				nic := h*nn + int(o.st.NIC)
				if f := max(cpu[c], gs[nic]); f > t {
					it.t = f
					push(it)
					continue
				}
				release(h, o.start, t)
				o.oEnd = t + p.O + perByte(o.st.Size, p.OverheadPerByte)
				cpu[c], gs[nic] = o.oEnd, t+p.Gap+perByte(o.st.Size, p.GapPerByte)
				ts++
				push(item{t: t + p.O + p.L, ts: ts, msg: true, host: int(o.st.Peer), src: h, size: o.st.Size,
					tag: o.st.Tag, cpu: int(o.st.CPU), nic: int(o.st.NIC), sendOp: it.op})
				if o.st.Size <= uint64(p.Eager) {
					release(h, o.end, o.oEnd)
				}
			case goal.Recv:
				release(h, o.start, t)
				found := -1
				for k, m := range uqs[h] {
					if match(o.st.Peer, o.st.Tag, m) {
						found = k
						break
					}
				}
				if found < 0 {
					rqs[h] = append(rqs[h], it.op)
				} else {
					m := uqs[h][found]
					uqs[h] = append(uqs[h][:found], uqs[h][found+1:]...)
					if m.size > uint64(p.Eager) {
						rendezvous(m, t)
					}
					release(h, o.end, max(t, m.end))
				}
			}
		}
		flush()
	}
	for h := range n {
		if len(rqs[h]) > 0 || len(uqs[h]) > 0 {
			return nil, fmt.Errorf("oracle: host %d has unmatched operations", h)
		}
		for _, o := range ops[h] {
			if o.deps > 0 {
				return nil, fmt.Errorf("oracle: host %d has operations never ready", h)
			}
		}
	}
	fin := make([]sim.Time, n)
	for h := range n {
		for c := range nc {
			fin[h] = max(fin[h], cpu[h*nc+c])
		}
	}
	return fin, nil
}

func indexOf[T comparable](s []T, v T) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	panic("not found")
}

func checkOracle(t *testing.T, prog goal.Program, p Params, text string) {
	t.Helper()
	want, errW := oracle(prog, p)
	got, errG := Run(prog, p)
	if (errW == nil) != (errG == nil) {
		t.Fatalf("oracle error %v, Run error %v\n%s", errW, errG, text)
	}
	if errW != nil {
		return
	}
	for h := range want {
		if got.Finish[h] != want[h] {
			t.Fatalf("host %d: Run %v, oracle %v\n%s", h, got.Finish, want, text)
		}
	}
}

func TestOracleGenerators(t *testing.T) {
	p := testParams()
	p.Eager = 4096
	p.OverheadPerByte = 7
	for _, g := range []*goal.Generated{goal.Ring(5, 5*5000), goal.RecDoub(8, 10_000), goal.Bcast(13, 70_000),
		goal.Halo(3, 4, 3, 8192, 2000), goal.AllToAll(6, 3000)} {
		t.Run(g.String(), func(t *testing.T) { checkOracle(t, g, p, g.String()) })
	}
}

// FuzzOracle compares Run with the oracle on random schedules.
func FuzzOracle(f *testing.F) {
	f.Add([]byte{1, 2, 0, 3, 0, 0, 2, 1, 1, 0, 0})
	f.Add([]byte{3, 3, 0, 2, 1, 1, 1, 2, 4, 5, 0, 4, 4, 1, 2, 3, 9, 9, 9, 1, 4})
	f.Add([]byte("a fairly long seed to get several ranks and operations going in the fuzzer"))
	f.Fuzz(func(t *testing.T, data []byte) {
		text := schedFromBytes(data)
		fl, err := goal.Open(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		defer fl.Close()
		p := testParams()
		if len(data) > 0 && data[0]&0x80 != 0 {
			p.OverheadPerByte = 100_000
		}
		checkOracle(t, fl, p, text)
	})
}
