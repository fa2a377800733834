package shmemtest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/gpunetsim/gpunetsim/hw/cluster"
	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/model/cost"
	"github.com/gpunetsim/gpunetsim/model/shmem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// Backend names the backend under test and the hardware it runs on.
type Backend struct {
	Kind  shmem.Kind
	HW    cluster.Spec // the GPU mode must suit the backend
	Spec  shmem.Spec
	Nodes int // PEs (≥ 2); 0 means 3
	// Limit, when set, stops Scenario at this simulated time and reports
	// ErrTimeLimit if a kernel has not finished (service threads poll
	// forever, so a lost request would otherwise never end the run).
	Limit sim.Time
	// PayloadFree runs the scenario on payload-free memories (buffers
	// without bytes, control words kept), as the large runs do.
	PayloadFree bool
}

// ErrTimeLimit is Scenario's error when a kernel did not finish by
// Backend.Limit.
var ErrTimeLimit = errors.New("kernels still running at the time limit")

// Run runs the whole suite against b.
func Run(t *testing.T, b Backend) {
	if b.Nodes == 0 {
		b.Nodes = 3
	}
	for _, c := range []struct {
		name string
		f    func(*testing.T, Backend)
	}{
		{"PutGet", testPutGet}, {"PutNBIQuiet", testPutNBIQuiet}, {"PG", testPG}, {"Atomics", testAtomics},
		{"Fence", testFence}, {"QuietOwnContext", testQuietOwnContext}, {"WaitUntil", testWaitUntil},
		{"Barrier", testBarrier}, {"Errors", testErrors}, {"PingPong", PingPong},
	} {
		t.Run(c.name, func(t *testing.T) { c.f(t, b) })
	}
}

// Kernel is one PE's part of a scenario: the number of work-groups and
// the body each runs with its context.
type Kernel struct {
	WGs  int
	Body func(pe int, c *shmem.Ctx) error
}

// Scenario runs one kernel per PE on a fresh cluster: each host inits
// the device with one queue per work-group, makes the symmetric
// allocations of alloc (the same on every PE), launches kernel(pe),
// waits and finalizes. It returns the cluster (memories to check), the
// symmetric addresses per PE, and the first error.
func Scenario(b Backend, alloc []uint64, kernel func(pe int, sym []mem.Addr) Kernel) (*cluster.Cluster, [][]mem.Addr, []shmem.Report, error) {
	if b.Nodes == 0 {
		b.Nodes = 3
	}
	c, err := cluster.New(sim.New(1), b.HW, b.Nodes, !b.PayloadFree)
	if err != nil {
		return nil, nil, nil, err
	}
	defer c.Engine.Close()
	team := shmem.NewTeam(b.Nodes)
	syms := make([][]mem.Addr, b.Nodes)
	reps := make([]shmem.Report, b.Nodes)
	errs := make([]error, b.Nodes)
	done := 0
	for i, nd := range c.Nodes {
		nd.CPU.Spawn("app", func(th *cpu.Thread) {
			errs[i] = runPE(b, nd, th, team, i, alloc, kernel, &syms[i], &reps[i])
			done++
		})
	}
	if b.Limit > 0 {
		if err := c.Engine.RunUntil(b.Limit); err != nil {
			return c, syms, reps, err
		}
		if done < len(c.Nodes) {
			return c, syms, reps, fmt.Errorf("%w (%v)", ErrTimeLimit, b.Limit)
		}
	} else if err := c.Engine.Run(); err != nil {
		return c, syms, reps, err
	}
	return c, syms, reps, errors.Join(errs...)
}

func runPE(b Backend, nd *cluster.Node, th *cpu.Thread, team *shmem.Team, pe int, alloc []uint64,
	kernel func(int, []mem.Addr) Kernel, syms *[]mem.Addr, rep *shmem.Report) error {
	rt := shmem.NewRuntime(b.Kind, shmem.Node{PE: pe, NPEs: b.Nodes, Host: th, CPU: nd.CPU, Mem: nd.Mem, GPU: nd.GPU,
		NIC: nd.NIC, GPULink: nd.GPULink, NICLink: nd.PCIe, CP: nd.CP, SW: cost.Default(), Peer: nd.Peer}, b.Spec, team)
	k := kernel(pe, nil)
	d, err := rt.Init(max(1, k.WGs))
	if err != nil {
		return err
	}
	defer func() { *rep = d.Finalize() }() // also on errors: the service threads must stop
	for _, n := range alloc {
		a, err := d.Malloc(n)
		if err != nil {
			return err
		}
		*syms = append(*syms, a)
	}
	k = kernel(pe, *syms)
	errs := make([]error, k.WGs)
	gk := gpu.Kernel{Name: "suite", WGs: k.WGs, WGSize: 64, Body: func(wg *gpu.WG) {
		ctx, err := d.CtxCreate(wg)
		if err != nil {
			errs[wg.ID] = err
			return
		}
		errs[wg.ID] = k.Body(pe, ctx)
		if err := ctx.Destroy(); err != nil && errs[wg.ID] == nil {
			errs[wg.ID] = err
		}
	}}
	if err := d.Cooperative(gk); err != nil {
		return err
	}
	op, run := nd.GPU.DispatchOp(gk)
	nd.GPU.Submit(op)
	run.WaitDone(th.Proc)
	return errors.Join(errs...)
}

func pattern(pe, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(pe*31 + i*7 + 1)
	}
	return b
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Blocking and non-blocking putmem and getmem of several sizes move the
// right bytes: PE p puts its pattern into PE p+1, then gets PE p+1's own
// source buffer back.
func testPutGet(t *testing.T, b Backend) {
	for _, n := range []int{1, 7, 64, 3000} {
		for _, nbi := range []bool{false, true} {
			sizes := []uint64{uint64(n), uint64(n), uint64(n), 8}
			c, syms, _, err := Scenario(b, sizes, func(pe int, s []mem.Addr) Kernel {
				return Kernel{WGs: 1, Body: func(pe int, x *shmem.Ctx) error {
					wg := x.WG()
					src, dst, got := s[0], s[1], s[2]
					wg.Mem().Write(src, pattern(pe, n))
					right := (pe + 1) % x.NPEs()
					put, get := x.Putmem, x.Getmem
					if nbi {
						put, get = x.PutmemNBI, x.GetmemNBI
					}
					if err := put(dst, src, uint64(n), right); err != nil {
						return err
					}
					if nbi {
						if err := x.Quiet(); err != nil {
							return err
						}
					}
					if err := x.Barrier(); err != nil { // every PE wrote its source
						return err
					}
					if err := get(got, src, uint64(n), right); err != nil {
						return err
					}
					if nbi {
						return x.Quiet()
					}
					return nil
				}}
			})
			check(t, err)
			for pe, nd := range c.Nodes {
				left := (pe + len(c.Nodes) - 1) % len(c.Nodes)
				right := (pe + 1) % len(c.Nodes)
				if got := nd.Mem.Bytes(syms[pe][1], n); string(got) != string(pattern(left, n)) {
					t.Errorf("n=%d nbi=%v: PE %d received %v…, want PE %d's pattern", n, nbi, pe, head(got), left)
				}
				if got := nd.Mem.Bytes(syms[pe][2], n); string(got) != string(pattern(right, n)) {
					t.Errorf("n=%d nbi=%v: PE %d got %v…, want PE %d's pattern", n, nbi, pe, head(got), right)
				}
			}
		}
	}
}

func head(b []byte) []byte { return b[:min(len(b), 8)] }

// Many non-blocking puts from several work-groups, more than a queue
// holds (ring wrap-around), all land after one quiet each.
func testPutNBIQuiet(t *testing.T, b Backend) {
	const wgs, puts = 2, 150
	c, syms, _, err := Scenario(b, []uint64{wgs * puts * 8, wgs * puts * 8}, func(pe int, s []mem.Addr) Kernel {
		return Kernel{WGs: wgs, Body: func(pe int, x *shmem.Ctx) error {
			wg := x.WG()
			for i := range puts {
				k := wg.ID*puts + i
				src := s[0] + mem.Addr(8*k)
				wg.Mem().Store64(src, uint64(1000*pe+k))
				if err := x.PutmemNBI(s[1]+mem.Addr(8*k), src, 8, (pe+1)%x.NPEs()); err != nil {
					return err
				}
			}
			return x.Quiet()
		}}
	})
	check(t, err)
	for pe, nd := range c.Nodes {
		left := (pe + len(c.Nodes) - 1) % len(c.Nodes)
		for k := range wgs * puts {
			if v := nd.Mem.Load64(syms[pe][1] + mem.Addr(8*k)); v != uint64(1000*left+k) {
				t.Fatalf("PE %d word %d = %d, want %d", pe, k, v, 1000*left+k)
			}
		}
	}
}

// p of every element size stores exactly its bytes; g reads them back.
func testPG(t *testing.T, b Backend) {
	var got [4]uint64
	c, syms, _, err := Scenario(b, []uint64{64}, func(pe int, s []mem.Addr) Kernel {
		return Kernel{WGs: 1, Body: func(pe int, x *shmem.Ctx) error {
			if pe != 0 {
				return nil
			}
			vals := []uint64{0x11, 0x2222, 0x33333333, 0x4444444444444444}
			for i, size := range []int{1, 2, 4, 8} {
				if err := x.P(s[0]+mem.Addr(16*i), vals[i]|0xff00000000000000, size, 1); err != nil {
					return err
				}
			}
			for i, size := range []int{1, 2, 4, 8} {
				v, err := x.G(s[0]+mem.Addr(16*i), size, 1)
				if err != nil {
					return err
				}
				got[i] = v
			}
			return nil
		}}
	})
	check(t, err)
	want := []uint64{0x11, 0x2222, 0x33333333, 0xff44444444444444}
	for i, size := range []int{1, 2, 4, 8} {
		if got[i] != want[i] {
			t.Errorf("g of %d bytes = %#x, want %#x", size, got[i], want[i])
		}
		word := c.Nodes[1].Mem.Load64(syms[1][0] + mem.Addr(16*i))
		if word != want[i] {
			t.Errorf("p of %d bytes left the word %#x, want %#x (no neighbouring byte touched)", size, word, want[i])
		}
	}
}

// Fetch-add from every PE and work-group returns distinct old values and
// sums up; add, swap and compare-swap on 32- and 64-bit words behave.
func testAtomics(t *testing.T, b Backend) {
	const wgs, rounds = 2, 3
	for _, width := range []int{4, 8} {
		olds := map[uint64]bool{}
		var dup bool
		winners := 0
		c, syms, _, err := Scenario(b, []uint64{64}, func(pe int, s []mem.Addr) Kernel {
			return Kernel{WGs: wgs, Body: func(pe int, x *shmem.Ctx) error {
				base := s[0]
				for range rounds {
					old, err := x.AtomicFetchAdd(base, 1, width, 0)
					if err != nil {
						return err
					}
					dup = dup || olds[old]
					olds[old] = true
					if err := x.AtomicAdd(base+8, 2, width, 0); err != nil {
						return err
					}
				}
				old, err := x.AtomicCompareSwap(base+16, 0, uint64(100+pe*wgs+x.WG().ID), width, 0)
				if err != nil {
					return err
				}
				if old == 0 {
					winners++
				}
				if _, err := x.AtomicSwap(base+24, uint64(pe+1), width, 0); err != nil {
					return err
				}
				return x.Quiet()
			}}
		})
		check(t, err)
		n := uint64(len(c.Nodes) * wgs * rounds)
		m := c.Nodes[0].Mem
		a := syms[0][0]
		load := func(a mem.Addr) uint64 {
			if width == 4 {
				return uint64(binary.LittleEndian.Uint32(m.Bytes(a, 4)))
			}
			return m.Load64(a)
		}
		if v := load(a); v != n || dup || len(olds) != int(n) {
			t.Errorf("width %d: fetch-add total %d (want %d), %d distinct old values, duplicate=%v", width, v, n, len(olds), dup)
		}
		if v := load(a + 8); v != 2*n {
			t.Errorf("width %d: add total %d, want %d", width, v, 2*n)
		}
		if v := load(a + 16); winners != 1 || v < 100 || v >= 100+uint64(len(c.Nodes)*wgs) {
			t.Errorf("width %d: compare-swap: %d winners, word %d; want one winner's value", width, winners, v)
		}
		if v := load(a + 24); v < 1 || v > uint64(len(c.Nodes)) {
			t.Errorf("width %d: swap left %d, want some PE's value", width, v)
		}
		if width == 4 && m.Load64(a)>>32 != 0 {
			t.Errorf("32-bit atomics touched the next word: %#x", m.Load64(a))
		}
	}
}

// A flag put after a fence is never seen before the data put before it.
func testFence(t *testing.T, b Backend) {
	const n = 16 << 10
	var stale bool
	_, _, _, err := Scenario(b, []uint64{n, n, 8}, func(pe int, s []mem.Addr) Kernel {
		return Kernel{WGs: 1, Body: func(pe int, x *shmem.Ctx) error {
			wg := x.WG()
			switch pe {
			case 0:
				wg.Mem().Write(s[0], pattern(9, n))
				if err := x.PutmemNBI(s[1], s[0], n, 1); err != nil {
					return err
				}
				if err := x.Fence(); err != nil {
					return err
				}
				return x.P(s[2], 1, 8, 1)
			case 1:
				if _, err := x.WaitUntil(s[2], 8, shmem.CmpEQ, 1); err != nil {
					return err
				}
				stale = string(wg.Mem().Bytes(s[1], n)) != string(pattern(9, n))
			}
			return nil
		}}
	})
	check(t, err)
	if stale {
		t.Error("the flag arrived before the data put ahead of the fence")
	}
}

// A quiet completes only its own context: while work-group 0's large
// non-blocking put is in flight, work-group 1's quiet (its context has
// nothing outstanding) returns at once instead of waiting for it.
func testQuietOwnContext(t *testing.T, b Backend) {
	const big = 1 << 20
	var bigDone, qStart, qEnd sim.Time
	_, _, _, err := Scenario(b, []uint64{big, big}, func(pe int, s []mem.Addr) Kernel {
		return Kernel{WGs: 2, Body: func(pe int, x *shmem.Ctx) error {
			if pe != 0 {
				return nil
			}
			wg := x.WG()
			if wg.ID == 0 {
				if err := x.PutmemNBI(s[1], s[0], big, 1); err != nil {
					return err
				}
				err := x.Quiet()
				bigDone = wg.Now()
				return err
			}
			wg.Sleep(2 * sim.Microsecond) // after the big put was posted
			qStart = wg.Now()
			err := x.Quiet()
			qEnd = wg.Now()
			return err
		}}
	})
	check(t, err)
	if bigDone > qStart && qEnd >= bigDone {
		t.Errorf("work-group 1's quiet ran %v–%v and ended after work-group 0's put completed (%v): it waited for another context", qStart, qEnd, bigDone)
	}
}

// wait_until honours every comparison operator on 32- and 64-bit words:
// the writer stores a sequence whose only satisfying value is the last.
func testWaitUntil(t *testing.T, b Backend) {
	m1 := ^uint64(0) // -1
	cases := []struct {
		cmp    shmem.Cmp
		target uint64
		writes []uint64
	}{
		{shmem.CmpEQ, 3, []uint64{1, 2, 3}}, {shmem.CmpNE, 0, []uint64{7}}, {shmem.CmpGT, 2, []uint64{1, 2, 5}},
		{shmem.CmpGE, 4, []uint64{1, 4}}, {shmem.CmpLT, 0, []uint64{1, m1}}, {shmem.CmpLE, 0, []uint64{5, 1, 0}},
	}
	for _, width := range []int{4, 8} {
		for _, tc := range cases {
			var seen uint64
			_, _, _, err := Scenario(b, []uint64{8}, func(pe int, s []mem.Addr) Kernel {
				return Kernel{WGs: 1, Body: func(pe int, x *shmem.Ctx) error {
					switch pe {
					case 0:
						if tc.cmp == shmem.CmpLE { // start from a value that does not satisfy it
							if err := x.P(s[0], 9, width, 1); err != nil {
								return err
							}
							if err := x.Barrier(); err != nil {
								return err
							}
						}
						for _, v := range tc.writes {
							if err := x.P(s[0], v, width, 1); err != nil {
								return err
							}
						}
					case 1:
						if tc.cmp == shmem.CmpLE {
							if err := x.Barrier(); err != nil {
								return err
							}
						}
						v, err := x.WaitUntil(s[0], width, tc.cmp, tc.target)
						seen = v
						return err
					default:
						if tc.cmp == shmem.CmpLE {
							return x.Barrier()
						}
					}
					return nil
				}}
			})
			check(t, err)
			want := tc.writes[len(tc.writes)-1] & (^uint64(0) >> (64 - 8*width))
			if seen != want {
				t.Errorf("width %d cmp %d target %d: returned %#x, want the only satisfying value %#x", width, tc.cmp, tc.target, seen, want)
			}
		}
	}
}

// After a barrier every PE sees every other PE's pre-barrier put.
func testBarrier(t *testing.T, b Backend) {
	bad := ""
	_, _, _, err := Scenario(b, []uint64{64}, func(pe int, s []mem.Addr) Kernel {
		return Kernel{WGs: 1, Body: func(pe int, x *shmem.Ctx) error {
			n := x.NPEs()
			for q := range n {
				if err := x.P(s[0]+mem.Addr(8*pe), uint64(pe+1), 8, q); err != nil {
					return err
				}
			}
			if err := x.Barrier(); err != nil {
				return err
			}
			for q := range n {
				if v := x.WG().Mem().Load64(s[0] + mem.Addr(8*q)); v != uint64(q+1) {
					bad = fmt.Sprintf("PE %d sees PE %d's word = %d after the barrier", pe, q, v)
				}
			}
			return nil
		}}
	})
	check(t, err)
	if bad != "" {
		t.Error(bad)
	}
}

// Bad PE, length, unaligned atomic and non-symmetric addresses are errors
// that name the work-group; nothing is sent.
func testErrors(t *testing.T, b Backend) {
	var got []error
	_, _, _, err := Scenario(b, []uint64{64}, func(pe int, s []mem.Addr) Kernel {
		return Kernel{WGs: 1, Body: func(pe int, x *shmem.Ctx) error {
			if pe != 0 {
				return nil
			}
			n := x.NPEs()
			got = append(got,
				x.Putmem(s[0], s[0], 8, n),
				x.P(s[0], 1, 8, -1),
				x.Putmem(s[0], s[0], 0, 1),
				x.Putmem(s[0], s[0], 65, 1),
				x.AtomicAdd(s[0]+2, 1, 8, 1),
				func() error { _, err := x.AtomicFetchAdd(s[0]+4, 1, 8, 1); return err }(),
				x.AtomicAdd(s[0], 1, 3, 1),
				x.P(s[0]+1000000, 1, 8, 1),
			)
			return nil
		}}
	})
	check(t, err)
	want := []error{shmem.ErrPE, shmem.ErrPE, shmem.ErrLength, shmem.ErrSymmetric, shmem.ErrAlign, shmem.ErrAlign, shmem.ErrLength, shmem.ErrSymmetric}
	for i, e := range got {
		if !errors.Is(e, want[i]) || !strings.Contains(fmt.Sprint(e), "wg[0]") {
			t.Errorf("bad call %d: error %v, want %v naming the work-group", i, e, want[i])
		}
	}
}

// PingPong is the example of the dissertation's ComP-Net chapter with numWG
// work-groups: ping work-group b on PE 0 puts the char 1 into buf[b] on
// PE 1 and waits until its own buf[b] == 1; pong work-group b on PE 1
// waits for buf[b], then puts 1 back. (buf[b] is the low byte of an
// aligned word here, since wait_until polls 32- or 64-bit words.)
func PingPong(t *testing.T, b Backend) {
	const numWG = 4
	b.Nodes = 2
	c, syms, _, err := Scenario(b, []uint64{numWG * 8}, func(pe int, s []mem.Addr) Kernel {
		return Kernel{WGs: numWG, Body: func(pe int, x *shmem.Ctx) error {
			buf := s[0] + mem.Addr(8*x.WG().ID)
			if pe == 0 {
				if err := x.P(buf, 1, 1, 1); err != nil {
					return err
				}
				_, err := x.WaitUntil(buf, 8, shmem.CmpEQ, 1)
				return err
			}
			if _, err := x.WaitUntil(buf, 8, shmem.CmpEQ, 1); err != nil {
				return err
			}
			return x.P(buf, 1, 1, 0)
		}}
	})
	check(t, err)
	for pe := range 2 {
		for w := range numWG {
			if v := c.Nodes[pe].Mem.Load64(syms[pe][0] + mem.Addr(8*w)); v != 1 {
				t.Errorf("PE %d buf[%d] = %d, want 1", pe, w, v)
			}
		}
	}
}
