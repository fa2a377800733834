package sim

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// The queue hands out events in (time, sequence) order whatever the mix of
// operations: pushes at and after now, current-time FIFO entries, sequence
// numbers taken ahead of time and pushed later (as a Chain does), looks at
// the earliest event that do not take it (the event loop's next with a
// limit before it, after which earlier events may still be pushed), and
// pops. The reference is a sorted list.
func TestQueueOrderAgainstSortedList(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var q eventQueue
		var ref, reserved []key // slot holds the event's identity
		var seq uint64
		var now Time
		for i := range rapid.IntRange(1, 300).Draw(t, "ops") {
			switch op := rapid.IntRange(0, 5).Draw(t, "op"); {
			case op == 0 || op == 1 && len(reserved) == 0:
				seq++
				k := key{t: now + Time(rapid.Int64Range(0, 40).Draw(t, "dt")), seq: seq, slot: int32(i)}
				q.push(k.t, k.seq, event{arg: uint64(k.slot)})
				ref = append(ref, k)
			case op == 1:
				j := rapid.IntRange(0, len(reserved)-1).Draw(t, "which")
				k := reserved[j]
				reserved = slices.Delete(reserved, j, j+1)
				k.t = max(k.t, now)
				q.push(k.t, k.seq, event{arg: uint64(k.slot)})
				ref = append(ref, k)
			case op == 2:
				seq++
				reserved = append(reserved, key{t: now + Time(rapid.Int64Range(0, 40).Draw(t, "dt")), seq: seq, slot: int32(i)})
			case op == 3:
				seq++
				q.pushNow(now, seq, event{arg: uint64(i)})
				ref = append(ref, key{t: now, seq: seq, slot: int32(i)})
			case op == 4 && len(ref) > 0:
				slices.SortFunc(ref, func(a, b key) int { return int(lessBit(&b, &a)) - int(lessBit(&a, &b)) })
				want := ref[0]
				var gotT Time
				var ev event
				if rapid.Bool().Draw(t, "next") {
					// The event loop's form, with a limit on either side.
					limit := now + Time(rapid.Int64Range(0, 40).Draw(t, "limit"))
					var ok, later bool
					gotT, ev, ok, later = q.next(limit)
					if ok != (want.t <= limit) || later == ok {
						t.Fatalf("op %d: next(%v) = ok %v, later %v with the earliest at %v", i, limit, ok, later, want.t)
					}
					if !ok {
						continue
					}
				} else {
					gotT, ev = q.pop()
				}
				ref = ref[1:]
				if gotT != want.t || ev.arg != uint64(want.slot) {
					t.Fatalf("op %d: took event %d at %v, want %d at %v", i, ev.arg, gotT, want.slot, want.t)
				}
				now = gotT
			default:
				if len(ref) > 0 && q.peekTime() < now {
					t.Fatalf("op %d: earliest time %v before now %v", i, q.peekTime(), now)
				}
				if len(ref) > 0 {
					// The marks' look at the earliest key (passMarks).
					slices.SortFunc(ref, func(a, b key) int { return int(lessBit(&b, &a)) - int(lessBit(&a, &b)) })
					if pt, ps := q.peekKey(); pt != ref[0].t || ps != ref[0].seq {
						t.Fatalf("op %d: peekKey (%v, %d), want (%v, %d)", i, pt, ps, ref[0].t, ref[0].seq)
					}
				}
			}
			if q.len() != len(ref) {
				t.Fatalf("op %d: len %d, want %d", i, q.len(), len(ref))
			}
		}
	})
}

// sortBySeq sorts whatever the order it is given, nearly sorted (insertion
// sort) or not (the fallback after its move budget).
func TestSortBySeq(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		// Long enough for the move budget to run out when unsorted.
		seqs := rapid.SliceOfNDistinct(rapid.Uint64Range(0, 1_000_000), 100, 400, rapid.ID[uint64]).Draw(t, "seqs")
		if rapid.Bool().Draw(t, "nearly sorted") {
			slices.Sort(seqs)
			for range rapid.IntRange(0, 10).Draw(t, "swaps") {
				i, j := rapid.IntRange(0, max(0, len(seqs)-1)).Draw(t, "i"), rapid.IntRange(0, max(0, len(seqs)-1)).Draw(t, "j")
				if len(seqs) > 0 {
					seqs[i], seqs[j] = seqs[j], seqs[i]
				}
			}
		}
		z := make([]key, len(seqs))
		for i, s := range seqs {
			z[i] = key{t: 7, seq: s, slot: int32(i)}
		}
		sortBySeq(z)
		for i := 1; i < len(z); i++ {
			if z[i-1].seq >= z[i].seq {
				t.Fatalf("not sorted at %d: %d then %d", i, z[i-1].seq, z[i].seq)
			}
		}
	})
}

// A split notes the lowest bucket it moves keys to and that bucket's
// earliest key, so the next pop need not scan it: with events pushed out
// of time order into the same buckets (nodes out of step), every pop must
// still take the earliest key. The reference is a sorted list.
func TestRadixSplitKeepsLowest(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var r radixHeap
		var ref []key
		var seq uint64
		var now Time
		for i := range rapid.IntRange(1, 400).Draw(t, "ops") {
			if len(ref) == 0 || rapid.IntRange(0, 2).Draw(t, "op") > 0 {
				seq++
				// Distances of every digit of the times (up to 2^52 ps).
				dt := Time(rapid.Int64Range(0, 1<<12).Draw(t, "dt")) << rapid.IntRange(0, 40).Draw(t, "scale")
				k := key{t: now + dt, seq: seq, slot: int32(i)}
				r.push(k)
				ref = append(ref, k)
				continue
			}
			slices.SortFunc(ref, func(a, b key) int { return int(lessBit(&b, &a)) - int(lessBit(&a, &b)) })
			if m := r.min(); m.slot != ref[0].slot {
				t.Fatalf("op %d: min is key %d at %v, want %d at %v", i, m.slot, m.t, ref[0].slot, ref[0].t)
			}
			got := r.pop()
			if got.slot != ref[0].slot {
				t.Fatalf("op %d: popped key %d at %v, want %d at %v", i, got.slot, got.t, ref[0].slot, ref[0].t)
			}
			now = got.t
			ref = ref[1:]
		}
	})
}

// A split of a few keys sorts them into a run, and keys pushed before the
// run's latest join it in order, including keys whose sequence numbers
// were taken earlier (a Chain's); a run that outgrows maxRun goes back to
// the buckets. Distances are short beside the run's spread so that most
// pushes land inside a run, and some bursts are long enough to dissolve it.
// The reference is a sorted list.
func TestRadixRunsAgainstSortedList(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var r radixHeap
		var ref, reserved []key
		var seq uint64
		var now Time
		for i := range rapid.IntRange(1, 1500).Draw(t, "ops") {
			switch op := rapid.IntRange(0, 6).Draw(t, "op"); {
			case op <= 1 || len(ref) == 0:
				seq++
				dt := Time(rapid.Int64Range(0, 64).Draw(t, "dt")) << rapid.IntRange(0, 12).Draw(t, "scale")
				burst := 1
				if rapid.IntRange(0, 20).Draw(t, "burst?") == 0 {
					burst = rapid.IntRange(1, 3*maxRun).Draw(t, "burst")
				}
				for j := range burst {
					seq++
					k := key{t: now + dt + Time(j), seq: seq, slot: int32(len(ref))}
					r.push(k)
					ref = append(ref, k)
				}
			case op == 2:
				seq++
				reserved = append(reserved, key{t: now + Time(rapid.Int64Range(0, 256).Draw(t, "rdt")), seq: seq})
			case op == 3 && len(reserved) > 0:
				j := rapid.IntRange(0, len(reserved)-1).Draw(t, "which")
				k := reserved[j]
				reserved = slices.Delete(reserved, j, j+1)
				k.t, k.slot = max(k.t, now), int32(len(ref))
				r.push(k)
				ref = append(ref, k)
			default:
				slices.SortFunc(ref, func(a, b key) int { return int(lessBit(&b, &a)) - int(lessBit(&a, &b)) })
				if m := r.min(); m.t != ref[0].t || m.seq != ref[0].seq {
					t.Fatalf("op %d: min is (%v, %d), want (%v, %d)", i, m.t, m.seq, ref[0].t, ref[0].seq)
				}
				got := r.pop()
				if got.t != ref[0].t || got.seq != ref[0].seq {
					t.Fatalf("op %d: popped (%v, %d), want (%v, %d)", i, got.t, got.seq, ref[0].t, ref[0].seq)
				}
				now = got.t
				ref = ref[1:]
			}
			if r.n != len(ref) {
				t.Fatalf("op %d: %d keys, want %d", i, r.n, len(ref))
			}
		}
	})
}
