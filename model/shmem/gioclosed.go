package shmem

import (
	"math/bits"
	"sort"

	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/sim"
)

// The GIO templater in closed form over the QPs nobody has posted to.
//
// ROC_SHMEM's GPU-IB backend connects every context to every PE, and the
// host templater fills every free slot of each QP, one slot per QP per
// round-robin pass (gio.go). Most of those QPs are never posted to (a
// ring work-group puts to one neighbour, a Jacobi work-group to at most
// four), yet their templating sets when the used QPs' slots are ready:
// the templater's core and its link direction are busy with them, and the
// visibility of each template wakes the stalled work-groups. Done as
// events that is six per slot (the template instructions, two posted
// writes' sender time, their two landings in GPU memory, the visibility)
// and the slots' bytes: most of a GIO run's events and memory.
//
// Here the templater computes a stretch of consecutive such QPs (in its
// pass order, up to the next QP that has had a post) at once and keeps its
// core busy for the stretch's whole time in one run, and the rest follows
// when, and only if, something can see it:
//
//   - its core: the stretch ends within the core's current time slice, so
//     no other thread could take the core inside it either way (a running
//     thread yields only at a slice end), and the instructions are charged;
//   - its link direction (host → GPU): only the templater writes in it
//     (the GPU's own link, not a chip-to-chip one), so computing its
//     posted writes ahead leaves the link exactly as writing them in turn;
//   - the slots' words: nothing reads a slot before its QP's first post
//     (the NIC reads it after a doorbell, the GPU reads its shadow), so
//     they are written then (materialize): the landings that were due by
//     then at once, the others at their landing times;
//   - the templated count: read by the QP's post only, so it is set then
//     too, with the stretch's later writes to that QP as events at their
//     ends;
//   - the visibility of each template notifies the templater's signal,
//     which wakes the stalled work-groups and the waiting templater. A
//     notification changes something only for a waiter whose condition
//     holds; conditions become true when a slot of a posted QP is
//     templated (afterTemplate) and when a completion frees a slot while
//     the templater waits (the QP's retire hook), so at those moments the
//     next closed-form visibility after now is scheduled as an event
//     (notifyNext), and the last one of each stretch always is (the run's
//     end time and its pending work stay as they were).
//
// Times, the templater's core statistics, the link and every count stay
// those of the event form (TestGIOClosedFormMatchesEvents, the golden
// CSVs); the events are fewer. closedOK lists when it applies.

// tmplOp is one closed-form template write: slot k of the QP at index i
// (context × PE) with rkey key, its words issued from a, the first
// landing at land1, the templater done at end, the second landing (the
// template visible) at vis.
type tmplOp struct {
	i, k     int32
	key      uint32
	dead     bool // its visibility became an event of its own (materialize)
	a, land1 sim.Time
	end, vis sim.Time
}

// closedStretch caps the template writes of one closed-form stretch (its
// ops stay in memory until they are visible).
const closedStretch = 1024

// closedOK reports whether the templater may run over unposted QPs in
// closed form: its runs take time (a zero run yields to the other events
// of its instant, which a stretch would not), its posted writes cross
// the GPU's own PCIe link (a chip-to-chip link also carries the CPU's
// and GPU's accesses; an on-chip attachment has no link), and no
// visibility checker records when each word is stored.
func (b *gioBackend) closedOK() bool {
	n := b.dev.rt.node
	l := n.GPULink
	return b.spec.TemplateInstr > 0 && n.CPU.Spec().Instr(b.spec.TemplateInstr) > 0 &&
		l != nil && !l.ChipToChip() && !l.OnChip() && n.Mem.Checker() == nil
}

// templateClosed templates, from candidate i on, the unposted QPs up to
// the next posted one (or the pass's end, the core's slice end, or
// closedStretch writes) in closed form, and runs the templater's core for
// their time. It returns the candidate to go on from (-1: the pass is
// over) and the slots templated; with none templated and next == i the
// caller templates i as events. With some templated, the caller then
// runs the templater's core for run (cpu.Thread.RunInstr of
// made × shmem.gio.template_instr).
func (b *gioBackend) templateClosed(t *cpu.Thread, i int) (next, made int, run sim.Duration) {
	left := t.SliceLeft()
	if left <= 0 {
		return i, 0, 0
	}
	b.trimOps()
	d := b.dev
	npes := d.npes
	n := d.rt.node
	link := n.GPULink
	instr := n.CPU.Spec().Instr(b.spec.TemplateInstr)
	depth := uint64(b.vn.Spec().QPDepth)
	start := t.Now()
	limit := start + left
	stop := b.nextPosted(i)
	cur := start
	j := i
	for ; j >= 0 && (stop < 0 || j < stop); j = b.nextCand(j + 1) {
		c, pe := b.ctxs[j/npes], j%npes
		if pe == d.pe || uint64(c.templated.at(pe)) >= depth { // full (an unposted QP completes nothing)
			b.cand[j/64] &^= 1 << (j % 64)
			continue
		}
		if made == closedStretch {
			break
		}
		// templateSlot's timeline: the instructions, then each word's
		// posted write, the thread held until its side is done.
		a := cur + instr
		trial := *link
		sf1, at1 := trial.PostedWrite(pcie.Down, a, 8)
		sf2, at2 := trial.PostedWrite(pcie.Down, sf1, 8)
		if sf1 <= a || sf2 <= sf1 || sf2 > limit {
			break
		}
		*link = trial
		key := b.keys[pe]
		b.ops = append(b.ops, tmplOp{i: int32(j), k: int32(c.templated.at(pe)), key: key, a: a, land1: at1, end: sf2, vis: max(a, at1, at2)})
		*c.templated.ref(pe)++
		b.stats.Templates++
		made++
		cur = sf2
		if uint64(c.templated.at(pe)) >= depth {
			b.cand[j/64] &^= 1 << (j % 64)
		}
	}
	if made > 0 {
		b.schedNotify(b.ops[len(b.ops)-1].vis) // the stretch's last visibility
	}
	return j, made, cur - start
}

// nextPosted returns the first posted index at or after i, or -1.
func (b *gioBackend) nextPosted(i int) int {
	for w := i / 64; w < len(b.posted); w++ {
		m := b.posted[w]
		if w == i/64 {
			m &^= 1<<(i%64) - 1
		}
		if m != 0 {
			return w*64 + bits.TrailingZeros64(m)
		}
	}
	return -1
}

// trimOps drops the closed-form writes that are visible by now (their
// landings are past too).
func (b *gioBackend) trimOps() {
	now := b.eng().Now()
	h := b.opsHead
	for h < len(b.ops) && b.ops[h].vis <= now {
		h++
	}
	if h == len(b.ops) {
		b.ops, h = b.ops[:0], 0
	} else if h > len(b.ops)/2 && h > 256 {
		b.ops = append(b.ops[:0], b.ops[h:]...)
		h = 0
	}
	b.opsHead = h
}

// afterTemplate runs after a posted QP's slot is templated (as events):
// a stalled work-group may now go on at the next notification, which may
// be a closed-form write's visibility.
func (b *gioBackend) afterTemplate() {
	if b.work.Waiting() > 0 {
		b.notifyNext()
	}
}

// notifyNext schedules the first closed-form visibility after now that
// is not yet an event.
func (b *gioBackend) notifyNext() {
	now := b.eng().Now()
	ops := b.ops[b.opsHead:]
	k := sort.Search(len(ops), func(k int) bool { return ops[k].vis > now })
	for ; k < len(ops); k++ {
		if !ops[k].dead {
			b.schedNotify(ops[k].vis)
			return
		}
	}
}

// schedNotify schedules a notification of the templater's signal at t
// unless one is pending then.
func (b *gioBackend) schedNotify(t sim.Time) {
	for _, p := range b.notifyAt {
		if p == t {
			return
		}
	}
	b.notifyAt = append(b.notifyAt, t)
	b.eng().AtH(t, (*closedNotifier)(b), 0)
}

// closedNotifier is the visibility of a closed-form template write.
type closedNotifier gioBackend

// Handle notifies the templater's signal.
func (w *closedNotifier) Handle(uint64) {
	b := (*gioBackend)(w)
	now := b.eng().Now()
	for k, p := range b.notifyAt {
		if p == now {
			b.notifyAt = append(b.notifyAt[:k], b.notifyAt[k+1:]...)
			break
		}
	}
	b.work.Notify()
}

// gioWords are the template's words in a WQE: rkey with QP number, wr_id.
var gioWords = []int{4, 5}

// materialize turns QP i's (context c, PE pe) closed-form templating into
// what the events would have left by now: its slots' words (landed, or
// landing later), its templated count, and each of the current stretch's
// later writes to it as an event at its end with its own visibility. From
// then on its templating runs as events. With shmem.gio.template_at_init
// it writes the slots the host filled at init (every slot, with the
// peer's heap key), as nothing read them before this first post.
func (b *gioBackend) materialize(c *gioCtx, pe, i int) {
	b.posted[i/64] |= 1 << (i % 64)
	qp, err := c.qp(pe)
	if err != nil || qp == nil {
		return // this PE; a connection that cannot be made fails its post
	}
	e := b.eng()
	now := e.Now()
	total := uint64(c.templated.at(pe))
	seen := make([]bool, total)
	for k := b.opsHead; k < len(b.ops); k++ {
		op := &b.ops[k]
		if int(op.i) != i {
			continue
		}
		seen[op.k] = true
		qp.TemplateDeferred(uint64(op.k), nic.WQE{RKey: op.key}, gioWords, []sim.Time{op.land1, op.vis})
		if op.end > now {
			*c.templated.ref(pe)--
			op.dead = true
			e.AtH(op.end, &templateEnd{b: b, c: c, pe: pe, vis: op.vis}, 0)
		}
	}
	var key uint32
	if rb := b.dev.rt.team.devs[pe].backend.(*gioBackend); rb.heap != nil {
		key = rb.heap.Key
	}
	for k := range total {
		// Not in view: landed before; or templated as events (at a slice
		// end), which wrote the slot itself.
		if !seen[k] && !qp.HasTemplate(k) {
			qp.TemplateDeferred(k, nic.WQE{RKey: key}, gioWords, []sim.Time{0, 0})
		}
	}
}

// templateEnd is the end of a closed-form template write to a QP that has
// had a post since: the slot counts as templated and becomes visible
// later, as templateSlot does.
type templateEnd struct {
	b   *gioBackend
	c   *gioCtx
	pe  int
	vis sim.Time
}

// Handle counts the slot and schedules its visibility.
func (h *templateEnd) Handle(uint64) {
	b := h.b
	*h.c.templated.ref(h.pe)++
	b.eng().AtH(h.vis, (*workNotifier)(b), 0)
	b.afterTemplate()
}

// exposedAfterConnect ends closed-form templating on every PE of the
// team when a symmetric allocation is registered after the contexts
// connected (the rkey the templater writes changes from then on): each
// PE's unposted QPs get their closed-form state as events now, the
// stretch's writes from now on with the new rkey of PE pe.
func exposedAfterConnect(devs []*Device, pe int, key uint32, now sim.Time) {
	for _, d := range devs {
		b, ok := d.backend.(*gioBackend)
		if !ok || !b.closed {
			continue
		}
		b.closed = false
		for k := b.opsHead; k < len(b.ops); k++ {
			if op := &b.ops[k]; int(op.i)%d.npes == pe && op.a > now {
				op.key = key
			}
		}
		if b.ctxs[0] == nil {
			continue
		}
		for i := range len(b.posted) * 64 {
			if i < len(b.ctxs)*d.npes && b.posted[i/64]&(1<<(i%64)) == 0 {
				b.materialize(b.ctxs[i/d.npes], i%d.npes, i)
			}
		}
	}
}

// heapKeys returns each PE's current heap rkey (peerHeapKeys) in a slice
// nobody writes, shared by the PEs that see the same keys when they
// connect: every PE that connects before a registration changes one, all
// of them at thousands of PEs, where a copy each was a word per pair.
func (t *Team) heapKeys() []uint32 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if k := t.keys; len(k) == len(t.devs) {
		same := true
		for pe, d := range t.devs {
			var key uint32
			if rb, ok := d.backend.(*gioBackend); ok && rb.heap != nil {
				key = rb.heap.Key
			}
			if key != k[pe] {
				same = false
				break
			}
		}
		if same {
			return k
		}
	}
	t.keys = peerHeapKeys(t.devs)
	return t.keys
}

// peerHeapKeys returns each PE's current heap rkey (0 before its first
// registration), as templateSlot reads it.
func peerHeapKeys(devs []*Device) []uint32 {
	keys := make([]uint32, len(devs))
	for pe, d := range devs {
		if rb, ok := d.backend.(*gioBackend); ok && rb.heap != nil {
			keys[pe] = rb.heap.Key
		}
	}
	return keys
}

// eng returns the PE's simulation engine.
func (b *gioBackend) eng() *sim.Engine { return b.dev.rt.node.Host.Engine() }
