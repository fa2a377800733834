package sim

import (
	"cmp"
	"math/bits"
	"slices"
)

// radixHeap is a monotone priority queue of keys: no key pushed orders
// before the last key popped, which holds in an event queue because
// nothing is scheduled before now. It is a radix heap (Ahuja, Mehlhorn,
// Orlin and Tarjan 1990) on the time with digits of radixBits bits:
// bucket 0 is the run, the keys at times from last to runEnd sorted by
// time and sequence number, and bucket 1 + radixDigits·d + v holds the
// keys after runEnd whose time first differs from last's in digit d,
// where it is v. Buckets in that order hold ever later keys. A push is an
// append (or, at or before runEnd, an insertion into the run); a pop takes
// the run's next key, and when the run is empty the lowest non-empty
// bucket is split: its earliest time becomes last and its keys move to
// buckets of lower digits, or, a few keys (maxRun), are sorted into the
// run whole. A key moves a few times in its life instead of sifting
// through every level of a heap at each pop, which made the 4-ary heap a
// quarter of a packet-level run (docs/speed.md). With one-bit digits (the
// textbook heap) a key moved once per bit of its distance from the keys
// popped before it that it was split from: 4.6 times per pop in a 64-node
// XTQ allreduce, whose nodes run out of step so that nearly every event
// has a time of its own; with four-bit digits it moves at most once per
// digit, 2.8 times per pop in that run (1.5 → 1.2 in HDN's, whose nodes
// stay in step; eight-bit digits moved fewer still, 2.0, but their 2,048
// buckets cost more in cache misses than the moves saved). Out of step,
// the bucket split is mostly a handful of keys of as many times, which
// moved once more each to be split again one by one; sorted into the run
// they move once (docs/speed.md, nineteenth session).
//
// Looking at the earliest key (min) must not split: last may only advance
// to a time the engine runs, or a later push for a time between now and
// that key's would order before last. min scans the lowest bucket instead
// and remembers where its earliest key is.
type radixHeap struct {
	last    Time
	buckets [1 + radixDigits*radixBase][]key // times are never negative: the top digit's high values stay empty
	mask    [radixWords]uint64               // bit b−1 set when buckets[b] (b > 0) is not empty
	head    int                              // buckets[0][head:] are pending
	n       int
	// runEnd is the latest time a key of the run may have: every bucket's
	// key is after it. It is last but after a split into a run, where it
	// is the latest of the run's keys, until the next split or dissolve.
	runEnd Time
	// With bucket 0 empty, lowB > 0 is the lowest non-empty bucket and
	// lowI the index of its earliest key, lowK a copy of that key; lowB =
	// 0 when not known. (The event loop looks at the earliest key several
	// times per event; the copy spares it the bucket's double index.)
	lowB, lowI int
	lowK       key
	// lowSorted: lowest sorted bucket lowB (of at most maxRun keys), which
	// nothing was pushed to since, so the split that follows takes it as
	// the run without sorting it again.
	lowSorted bool
}

// The digits of the radix heap's times.
const (
	radixBits   = 4
	radixBase   = 1 << radixBits
	radixDigits = 64 / radixBits
	radixWords  = radixDigits * radixBase / 64
)

// bucketOf is the bucket of a key at t: 0 at last, else 1 + radixBase·d +
// v for the highest digit d in which t differs from last, where t's is v.
func (r *radixHeap) bucketOf(t Time) int {
	x := uint64(t ^ r.last)
	if x == 0 {
		return 0
	}
	d := (bits.Len64(x) - 1) / radixBits
	return 1 + radixBase*d + int(uint64(t)>>(radixBits*d)&(radixBase-1))
}

// setBit and clearBit mark bucket b (> 0) non-empty or empty.
func (r *radixHeap) setBit(b int)   { r.mask[(b-1)>>6] |= 1 << ((b - 1) & 63) }
func (r *radixHeap) clearBit(b int) { r.mask[(b-1)>>6] &^= 1 << ((b - 1) & 63) }

// lowestBucket is the lowest non-empty bucket above 0 (0: none).
func (r *radixHeap) lowestBucket() int {
	for w, m := range r.mask {
		if m != 0 {
			return 1 + 64*w + bits.TrailingZeros64(m)
		}
	}
	return 0
}

// push adds k, which must not order before the last key popped.
func (r *radixHeap) push(k key) {
	if k.t < r.last {
		panic("sim: a key pushed before the last one popped") // the engine's checkFuture prevents this
	}
	r.n++
	if k.t <= r.runEnd {
		r.pushRun(k)
		return
	}
	b := r.bucketOf(k.t)
	bk := &r.buckets[b]
	*bk = append(*bk, k)
	r.setBit(b)
	if b <= r.lowB {
		r.noteLow(b)
	}
}

// noteLow keeps lowB and lowI right after a push into bucket b ≤ lowB.
func (r *radixHeap) noteLow(b int) {
	r.lowSorted = false
	if b < r.lowB {
		r.lowB = 0 // a lower bucket: min finds it
		return
	}
	z := r.buckets[b]
	if n := len(z) - 1; z[n].before(&z[r.lowI]) {
		r.lowI, r.lowK = n, z[n]
	}
}

// pushRun adds k, at or before runEnd, in order among the run's keys:
// at last's time a new key usually has the highest number and a chain's
// key, numbered earlier, moves forward; after a split into a run a key
// lands among the run's later ones. A run that grows past maxRun is
// dissolved into the buckets, so an insertion moves at most maxRun keys.
func (r *radixHeap) pushRun(k key) {
	z := append(r.buckets[0], k)
	i := len(z) - 1
	for i > r.head && k.before(&z[i-1]) {
		z[i] = z[i-1]
		i--
	}
	z[i] = k
	r.buckets[0] = z
	if len(z)-r.head > maxRun && r.runEnd > r.last {
		r.dissolve()
	}
}

// maxRun bounds the keys a split makes into a run and the run's length
// (pushRun): a split of up to maxRun keys sorts them instead of moving
// each to a bucket of a lower digit, from which it would move again.
const maxRun = 32

// dissolve moves the run's keys after last's time to their buckets,
// leaving the run with the keys at last (sorted by sequence number, as
// they were by time and sequence) and runEnd at last. Every run key is
// at or after last and before every bucket's key, so each goes to a
// bucket at or below the lowest non-empty one, as a split would have put
// it.
func (r *radixHeap) dissolve() {
	z := r.buckets[0]
	w := r.head
	for i := r.head; i < len(z); i++ {
		k := &z[i]
		nb := r.bucketOf(k.t)
		if nb == 0 {
			z[w] = *k
			w++
			continue
		}
		r.buckets[nb] = append(r.buckets[nb], *k)
		r.setBit(nb)
	}
	r.buckets[0] = z[:w]
	r.runEnd = r.last
	r.lowB, r.lowSorted = 0, false // the next lowest looks
}

// min returns the earliest key, which stays in the heap. The heap must not
// be empty.
func (r *radixHeap) min() *key {
	if r.head < len(r.buckets[0]) {
		return &r.buckets[0][r.head]
	}
	return r.lowest()
}

// lowest is min with bucket 0 empty: the earliest key of the lowest
// non-empty bucket. A bucket that split would sort into a run (maxRun
// keys at most) is sorted here instead of scanned, and the split that
// follows takes it as it is: out of step, nearly every look is followed by
// such a split, and the scan was as long as the sort's last pass.
func (r *radixHeap) lowest() *key {
	if r.lowB == 0 {
		r.lowB = r.lowestBucket()
		src := r.buckets[r.lowB]
		r.lowI = 0
		if len(src) <= maxRun {
			sortKeys(src)
			r.lowSorted = true
		} else {
			for i := 1; i < len(src); i++ {
				if src[i].before(&src[r.lowI]) {
					r.lowI = i
				}
			}
		}
		r.lowK = src[r.lowI]
	}
	return &r.lowK
}

// pop removes and returns the earliest key. The heap must not be empty.
func (r *radixHeap) pop() key {
	if r.head == len(r.buckets[0]) {
		r.split()
	}
	k := &r.buckets[0][r.head]
	r.head++
	r.n--
	return *k
}

// split refills the empty bucket 0 from the lowest non-empty bucket: that
// bucket's earliest time becomes last, its keys at that time go to bucket
// 0 (sorted by sequence number) and the others to buckets of lower
// digits. (The keys of every other bucket keep theirs: they differ from
// the new last where they differed from the old one, in a digit at least
// as high, and by the same value.)
func (r *radixHeap) split() {
	r.lowest()
	b := r.lowB
	src := r.buckets[b]
	last := src[r.lowI].t
	r.last = last
	z := r.buckets[0][:0]
	r.clearBit(b)
	if len(src) <= maxRun {
		// A few keys (nodes out of step: nearly every key has a time of
		// its own): sorted into a run that pops in order, instead of moved
		// to buckets of lower digits and split again, key by key. last is
		// the run's earliest time; every other bucket keeps its keys, as
		// below, and pushes at or before runEnd join the run.
		if !r.lowSorted {
			sortKeys(src)
		}
		r.last, r.runEnd = src[0].t, src[len(src)-1].t
		r.buckets[0], r.head = src, 0
		r.buckets[b] = z
		r.lowB, r.lowSorted = 0, false // nothing moved below b
		return
	}
	// The buckets below b were empty, so the lowest one the keys move to
	// holds only moved keys: note it and its earliest key on the way, and
	// the next lowest need not scan it. When every event has a time of its
	// own (nodes out of step), nearly every pop splits a bucket of a few
	// keys, and that scan was as long as the split.
	r.runEnd = last
	lowB, lowI := 0, 0
	for i := range src {
		k := &src[i]
		nb := r.bucketOf(k.t)
		if nb == 0 {
			z = append(z, *k)
			continue
		}
		bk := r.buckets[nb]
		switch {
		case lowB == 0 || nb < lowB:
			lowB, lowI = nb, len(bk)
		case nb == lowB && k.before(&bk[lowI]):
			lowI = len(bk)
		}
		r.buckets[nb] = append(bk, *k)
		r.setBit(nb)
	}
	r.buckets[0], r.head = z, 0
	r.buckets[b] = src[:0]
	r.lowB, r.lowI, r.lowSorted = lowB, lowI, false // 0: none moved below b, the next lowest looks
	if lowB != 0 {
		r.lowK = r.buckets[lowB][lowI]
	}
	sortBySeq(z)
}

// sortKeys sorts a few keys by time and sequence number (insertion sort).
func sortKeys(z []key) {
	for i := 1; i < len(z); i++ {
		k := z[i]
		j := i
		for j > 0 && k.before(&z[j-1]) {
			z[j] = z[j-1]
			j--
		}
		z[j] = k
	}
}

// sortBySeq sorts keys by sequence number: insertion sort, as a split
// moves keys in the order they were pushed, which is mostly theirs (a
// symmetric run puts a hundred keys at one time, nearly sorted). Should
// the keys be far from sorted, it gives up after a few moves per key and
// sorts them properly.
func sortBySeq(z []key) {
	budget := 8 * len(z)
	for i := 1; i < len(z); i++ {
		k := z[i]
		j := i
		for j > 0 && k.seq < z[j-1].seq {
			z[j] = z[j-1]
			j--
		}
		z[j] = k
		if budget -= i - j; budget < 0 {
			slices.SortFunc(z, func(a, b key) int { return cmp.Compare(a.seq, b.seq) })
			return
		}
	}
}

// filter keeps only the keys for which keep is true. Each bucket keeps its
// keys' order (bucket 0 stays sorted by sequence number); the lowest
// bucket's earliest key is found again by the next min.
func (r *radixHeap) filter(keep func(*key) bool) {
	z, w := r.buckets[0], 0
	for i := r.head; i < len(z); i++ {
		if keep(&z[i]) {
			z[w] = z[i]
			w++
		}
	}
	r.buckets[0], r.head, r.n = z[:w], 0, w
	for b := 1; b < len(r.buckets); b++ {
		if r.mask[(b-1)>>6]&(1<<((b-1)&63)) == 0 {
			continue
		}
		src, w := r.buckets[b], 0
		for i := range src {
			if keep(&src[i]) {
				src[w] = src[i]
				w++
			}
		}
		r.buckets[b] = src[:w]
		if w == 0 {
			r.clearBit(b)
		}
		r.n += w
	}
	r.lowB, r.lowSorted = 0, false
}
