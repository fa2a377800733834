package nic

import (
	"fmt"

	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// trigAddrBase is where trigger registers live in the MMIO address space
// (one page per NIC). They are not memory: stores go through TriggerWrite.
const trigAddrBase mem.Addr = 0xFE00_0000_0000

// trigEntrySize is the memory footprint of one trigger entry (memlist).
const trigEntrySize unit.Bytes = 64

// trigEntry is a GPU-TN trigger entry (§3.1). A fired entry leaves the
// table at once and is the event that issues its op CmdLatency later
// (Handle); then the NIC reuses it (gputn.free).
type trigEntry struct {
	tag       uint64
	counter   uint64
	threshold uint64
	hasOp     bool
	op        trigOp
	n         *NIC
	fired     sim.Time // when it fired
}

// trigReg is a host registration (TrigPut/TrigGet).
type trigReg struct {
	tag       uint64
	op        trigOp
	threshold uint64
}

// trigOp is a registered operation: a command of its own, or command i
// of a CommandBlock. A GPU-TN ring registers 2(n−1) puts per node, each
// live until its step: an entry holds a few words instead of a command.
type trigOp struct {
	one *Command
	blk *CommandBlock
	i   int
}

func (o trigOp) command() Command {
	if o.one != nil {
		return *o.one
	}
	return o.blk.cmd(o.i)
}

// CommandBlock is a family of commands made from their index, such as
// the puts of a ring schedule: registered by index (RegisterTriggerOf),
// the NIC keeps the block and the index and makes the command again when
// the entry fires, so the function must return the same command for the
// same index every time.
type CommandBlock struct {
	cmd func(i int) Command
	// word, when set (NotifyRegistered), receives done by a posted DMA
	// write after each of the block's registrations takes effect.
	word mem.Addr
	done uint64 // registrations of the block in effect so far
	n    *NIC   // the NIC that writes word
}

// NewCommandBlock returns the block whose command i is cmd(i).
func NewCommandBlock(cmd func(i int) Command) *CommandBlock { return &CommandBlock{cmd: cmd} }

// NotifyRegistered makes the NIC write, after each of the block's
// registrations takes effect (its entry holds the op), the number of the
// block's registrations in effect so far to the 8-byte word at word, by a
// posted DMA write (one per registration, in issue order, so the word
// only grows). The NIC serves registrations in arrival order, except one
// whose tag already has an entry (an early trigger), which needs no free
// entry and takes effect at once. A kernel that triggers tag i only once
// the word reaches i+1 never triggers before the registration: its
// triggers never need an entry of their own (strict synchronization).
func (b *CommandBlock) NotifyRegistered(word mem.Addr) { b.word = word }

// regNotice is a command block as the handler of its registration word's
// posted write: the write stores the count in effect when it lands (every
// registration counted then has taken effect).
type regNotice CommandBlock

func (h *regNotice) Handle(uint64) {
	h.n.dmaEnd(1)
	h.n.mem.Store64(h.word, h.done)
}

// registered counts a registration of r's block in effect and posts the
// block's registration word (NotifyRegistered), if any.
func (n *NIC) registered(r trigReg) {
	b := r.op.blk
	if b == nil || b.word == 0 {
		return
	}
	b.done++
	b.n = n
	n.dmaWriteH(b.word, 8, (*regNotice)(b))
}

// regQueue is the registrations waiting for a free trigger entry, in
// arrival order, as runs: a run is a registration and the next ones of the
// same command block (indices and tags one up each, the same threshold).
// A GPU-TN ring's host registers all 2(n−1)·w puts of its node far ahead
// of the ring (the entries hold 16): one by one, at a thousand nodes and
// 16 slices, they held 1.3 MB per node; as runs, a few words.
type regQueue struct {
	runs sim.FIFO[regRun]
	n    int // registrations in all
}

// regRun is registrations r, r+1, …, r+n−1 (tag and index j up for the
// j-th).
type regRun struct {
	r trigReg
	n int
}

// Len returns the registrations waiting.
func (q *regQueue) Len() int { return q.n }

// Push adds r after the others, to the last run when it continues it.
func (q *regQueue) Push(r trigReg) {
	q.n++
	if q.runs.Len() > 0 {
		last := q.runs.Back()
		if b := last.r.op.blk; b != nil && b == r.op.blk && last.r.threshold == r.threshold &&
			r.tag == last.r.tag+uint64(last.n) && r.op.i == last.r.op.i+last.n {
			last.n++
			return
		}
	}
	q.runs.Push(regRun{r: r, n: 1})
}

// Pop removes and returns the first registration.
func (q *regQueue) Pop() trigReg {
	q.n--
	f := q.runs.Front()
	r := f.r
	if f.n == 1 {
		q.runs.Pop()
		return r
	}
	f.n--
	f.r.tag++
	f.r.op.i++
	return r
}

// entryTable is the live trigger entries by tag: a short list while there
// are at most smallEntries (the assoc and hash lookups hold 16), a map
// beyond (memlist keeps every registered entry). Every registration, pop
// and retirement looks a tag up: in the list that is a few compares on two
// cache lines, where the map's hashing and probing were 4 % of a GPU-TN
// ring's run. The list's tags are kept beside it (tags[i] is small[i].tag):
// a search reading each entry's tag through its pointer read one cold
// entry after another at a thousand nodes. The list's tags fall into
// buckets (the tag's low bits, tagBuckets of them) whose counts (inB) and,
// for a bucket of one, positions (at) answer most lookups without a scan:
// a GPU-TN ring's live tags are a window of consecutive ones, and the scan
// of all sixteen for a tag not there (every registration's) was 1 % of the
// run's instructions.
type entryTable struct {
	tags  []uint64
	small []*trigEntry
	inB   [tagBuckets]uint8     // live entries of the list in each bucket
	at    [tagBuckets]uint8     // the position in the list of a bucket's one entry (inB 1)
	big   map[uint64]*trigEntry // nil until the list outgrows smallEntries
}

const (
	smallEntries = 32
	tagBuckets   = 64 // a power of two
)

func bucket(tag uint64) int { return int(tag & (tagBuckets - 1)) }

func (t *entryTable) len() int {
	if t.big != nil {
		return len(t.big)
	}
	return len(t.small)
}

func (t *entryTable) get(tag uint64) *trigEntry {
	if t.big != nil {
		return t.big[tag]
	}
	i := t.find(tag)
	if i < 0 {
		return nil
	}
	return t.small[i]
}

// find returns the position of tag's entry in the list, or −1.
func (t *entryTable) find(tag uint64) int {
	b := bucket(tag)
	switch t.inB[b] {
	case 0:
		return -1
	case 1:
		if i := int(t.at[b]); t.tags[i] == tag {
			return i
		}
		return -1
	}
	for i, g := range t.tags {
		if g == tag {
			return i
		}
	}
	return -1
}

// put adds e, whose tag has no entry.
func (t *entryTable) put(e *trigEntry) {
	if t.big == nil && len(t.small) < smallEntries {
		b := bucket(e.tag)
		t.inB[b]++
		t.at[b] = uint8(len(t.small)) // (read only while inB[b] is 1)
		t.tags = append(t.tags, e.tag)
		t.small = append(t.small, e)
		return
	}
	if t.big == nil {
		t.big = make(map[uint64]*trigEntry, 2*smallEntries)
		for _, o := range t.small {
			t.big[o.tag] = o
		}
		clear(t.small)
		t.small, t.tags = t.small[:0], t.tags[:0]
		t.inB = [tagBuckets]uint8{}
	}
	t.big[e.tag] = e
}

// del removes e, which is in the table.
func (t *entryTable) del(e *trigEntry) {
	if t.big != nil {
		delete(t.big, e.tag)
		return
	}
	i := t.find(e.tag)
	last := len(t.small) - 1
	t.small[i], t.tags[i] = t.small[last], t.tags[last]
	t.small[last] = nil
	t.small, t.tags = t.small[:last], t.tags[:last]
	b := bucket(e.tag)
	t.inB[b]--
	if t.inB[b] == 1 { // the bucket's other entry: where is it?
		for j, g := range t.tags {
			if bucket(g) == b {
				t.at[b] = uint8(j)
			}
		}
	}
	if i < last { // the last entry moved to i
		if mb := bucket(t.tags[i]); t.inB[mb] == 1 {
			t.at[mb] = uint8(i)
		}
	}
}

// gputn is the NIC's GPU-TN state.
type gputn struct {
	entries entryTable               // live entries by tag
	fifo    sim.FIFO[uint64]         // tags visible in the trigger FIFO
	used    int                      // FIFO slots taken: queued + writes in flight (credits)
	space   sim.Signal               // notified when a FIFO slot frees
	busy    bool                     // the pop unit is working on fifo[0]
	stalled bool                     // fifo[0] waits for a free entry
	waiting regQueue                 // registrations waiting for a free entry
	cache   []uint64                 // memlist: on-NIC entry cache, most recent first
	memlist bool                     // Spec.TrigLookup is "memlist" (compared once, in New)
	free    sim.FreeList[*trigEntry] // entries whose op has issued, for reuse
	regFree sim.FreeList[*tnReg]     // registrations done with, for reuse
}

// The GPU-TN events of a NIC that need nothing but the NIC (and a tag) are
// the NIC itself under these types: no allocation per event.
type (
	tnArrive    NIC // a trigger store becomes visible: its tag enters the FIFO (arg: the tag)
	tnPopDone   NIC // the pop unit is done with the FIFO head
	tnEntryFree NIC // a fired entry has retired
)

func (h *tnArrive) Handle(tag uint64) { (*NIC)(h).triggerArrived(tag) }
func (h *tnPopDone) Handle(uint64)    { (*NIC)(h).popDone() }
func (h *tnEntryFree) Handle(uint64)  { (*NIC)(h).entryFreed() }

// tnReg is a host registration on its way to the NIC (the hostOp of its
// host command), reused once delivered.
type tnReg struct {
	n *NIC
	r trigReg
}

func (g *tnReg) exec() {
	n, r := g.n, g.r
	g.r = trigReg{}
	n.tn.regFree.Put(g)
	n.onHostRegister(r)
}

// register posts r from host thread p (RegisterTrigger, RegisterTriggerOf).
func (n *NIC) register(p *sim.Proc, r trigReg) {
	t := &n.tn
	g, ok := t.regFree.Get()
	if !ok {
		g = &tnReg{n: n}
	}
	g.r = r
	n.hostPostOp(p, "trig register", true, g)
}

// TriggerAddr returns the trigger register's MMIO address, to hand to a
// kernel (GetTriggerAddr, §3.2). It is an address value only: GPU code
// stores to it with TriggerWrite.
func (n *NIC) TriggerAddr() mem.Addr { return trigAddrBase + mem.Addr(n.id)<<12 }

// TriggerWrite models a system-scope atomic store of tag to the trigger
// address by GPU work-group process p (§3.2): p blocks while the trigger
// FIFO has no free slot (PCIe back-pressure: a slot is taken from issue
// until the NIC pops the entry), then the store is a posted 8 B write over
// the NIC's link (p sleeps until its side is done); at visibility the tag
// enters the FIFO. Only the NIC's link is charged: the GPU's own path to
// the root complex (dGPU mode) and the release before the store are the
// caller's.
func (n *NIC) TriggerWrite(p *sim.Proc, tag uint64) {
	for !n.TryTriggerWrite(p, tag) {
	}
}

// TryTriggerWrite is TriggerWrite for a step process (sim.SpawnSteps): with
// the trigger FIFO full it waits for space and returns false (call it
// again after the wait); otherwise it posts the write, waits for the
// posted write to leave and returns true.
func (n *NIC) TryTriggerWrite(p *sim.Proc, tag uint64) bool {
	t := &n.tn
	if t.used >= n.spec.TrigFIFODepth {
		p.Wait(&t.space, n.name+" trigger FIFO full")
		return false
	}
	t.used++
	var sf, vis sim.Time
	if n.c2c != nil {
		// A GH200's GPU reaches the NIC over NVLink-C2C to the Grace,
		// then the NIC's PCIe link from the Grace's root complex.
		var at sim.Time
		sf, at = n.c2c.PostedWrite(pcie.Up, p.Now(), 8)
		_, vis = n.link.PostedWrite(pcieDown, at, 8)
	} else {
		sf, vis = n.link.PostedWrite(pcieDown, p.Now(), 8)
	}
	n.e.AtH(vis, (*tnArrive)(n), tag)
	p.SleepUntil(sf)
	return true
}

// triggerArrived puts a visible trigger store's tag into the FIFO.
func (n *NIC) triggerArrived(tag uint64) {
	t := &n.tn
	t.fifo.Push(tag)
	n.stats.TrigFIFOMax = max(n.stats.TrigFIFOMax, t.fifo.Len())
	n.kickPop()
}

// RegisterTrigger registers tag's operation from host thread p (the
// GPU-TN TrigPut/TrigGet, §3.3 onHostRegister): doorbell and descriptor
// fetch as for Doorbell, then the entry for tag gets cmd and threshold and
// fires at once if its counter already reached threshold. A fired entry
// retires when its op issues (CmdLatency later); completionFlag (0: none)
// is set on SEND for puts and atomics, on REPLY for gets and fetches.
//
// Policy when all TrigMaxEntries entries are live (assoc, hash): the
// registration waits on the NIC, in FIFO order with other waiting
// registrations, and is served before a stalled trigger FIFO when an entry
// retires. p does not wait. Registering a tag whose live entry already has
// an op counts a TagReuseWarnings and replaces the op and threshold (the
// earlier op is lost: the host and GPU did not synchronise the reuse).
func (n *NIC) RegisterTrigger(p *sim.Proc, tag uint64, cmd Command, threshold uint64, completionFlag mem.Addr) {
	if completionFlag != 0 {
		cmd.CompletionFlag = completionFlag
	}
	n.check(cmd)
	n.register(p, trigReg{tag, trigOp{one: &cmd}, threshold})
}

// RegisterTriggerOf is RegisterTrigger of command i of b (its completion
// flag is the command's own): the same doorbell, fetch and entry, but the
// entry keeps b and i rather than the command.
func (n *NIC) RegisterTriggerOf(p *sim.Proc, tag uint64, b *CommandBlock, i int, threshold uint64) {
	n.check(b.cmd(i))
	n.register(p, trigReg{tag, trigOp{blk: b, i: i}, threshold})
}

// TriggerEntryLimit returns how many trigger entries can be live at once:
// nic.trig_max_entries with the assoc and hash lookups, 0 (no limit) with
// memlist, whose entries live in memory.
func (n *NIC) TriggerEntryLimit() int {
	if !n.limited() {
		return 0
	}
	return n.spec.TrigMaxEntries
}

// TriggerEntries returns the number of live trigger entries.
func (n *NIC) TriggerEntries() int { return n.tn.entries.len() }

// TriggerCount returns the counter of tag's live entry (false: none).
func (n *NIC) TriggerCount(tag uint64) (uint64, bool) {
	e := n.tn.entries.get(tag)
	if e == nil {
		return 0, false
	}
	return e.counter, true
}

func (n *NIC) onHostRegister(r trigReg) {
	t := &n.tn
	e := t.entries.get(r.tag)
	if e == nil {
		if t.waiting.Len() > 0 || !n.canAlloc() {
			n.stats.TrigRegWaits++
			t.waiting.Push(r)
			return
		}
		e = n.alloc(r.tag)
	}
	n.apply(e, r)
}

// apply puts registration r into its entry e and fires e if its counter
// already reached the threshold.
func (n *NIC) apply(e *trigEntry, r trigReg) {
	if e.hasOp {
		n.stats.TagReuseWarnings++
	}
	e.op, e.threshold, e.hasOp = r.op, r.threshold, true
	n.registered(r)
	if e.counter >= e.threshold {
		n.fireEntry(e)
	}
}

// limited reports whether the entry count is bounded (assoc, hash); a
// memlist keeps entries in memory with an on-NIC cache of TrigMaxEntries.
func (n *NIC) limited() bool { return !n.tn.memlist }

func (n *NIC) canAlloc() bool {
	return !n.limited() || n.tn.entries.len() < n.spec.TrigMaxEntries
}

func (n *NIC) alloc(tag uint64) *trigEntry {
	if !n.canAlloc() {
		panic(fmt.Sprintf("%s: trigger entry for tag %#x allocated with %d live entries", n.name, tag, n.tn.entries.len()))
	}
	t := &n.tn
	e, ok := t.free.Get()
	if ok {
		e.tag = tag
	} else {
		e = &trigEntry{tag: tag, n: n}
	}
	n.tn.entries.put(e)
	n.stats.TrigEntriesMax = max(n.stats.TrigEntriesMax, n.tn.entries.len())
	return e
}

// fireEntry issues e's op CmdLatency from now (e.Handle) and retires e
// now.
func (n *NIC) fireEntry(e *trigEntry) {
	n.stats.TrigFires++
	n.tn.entries.del(e)
	e.fired = n.e.Now()
	n.e.AtH(e.fired+n.spec.CmdLatency, e, 0)
	n.e.AtH(e.fired, (*tnEntryFree)(n), 0)
}

// Handle issues the fired entry's op; the entry is then free for reuse.
// (Its command is made now rather than at the fire: a command block
// makes the same command for an index every time, and a single command
// is never changed once registered.)
func (e *trigEntry) Handle(uint64) {
	n := e.n
	n.span("gputn fire", e.fired, n.e.Now())
	cmd := e.op.command()
	*e = trigEntry{n: n}
	n.tn.free.Put(e)
	n.issue(cmd)
}

// entryFreed serves waiting registrations, then a stalled FIFO.
func (n *NIC) entryFreed() {
	t := &n.tn
	for t.waiting.Len() > 0 && n.canAlloc() {
		r := t.waiting.Pop()
		e := t.entries.get(r.tag)
		if e == nil {
			e = n.alloc(r.tag)
		}
		n.apply(e, r)
	}
	if t.stalled && n.canAlloc() {
		t.stalled = false
		t.busy = true
		n.e.AtH(n.e.Now()+n.spec.TrigPop+n.lookupCost(*t.fifo.Front()), (*tnPopDone)(n), 0)
	}
}

// kickPop starts the pop unit on the FIFO head if it is idle.
func (n *NIC) kickPop() {
	t := &n.tn
	if t.busy || t.stalled || t.fifo.Len() == 0 {
		return
	}
	t.busy = true
	n.e.AtH(n.e.Now()+n.spec.TrigPop+n.lookupCost(*t.fifo.Front()), (*tnPopDone)(n), 0)
}

// lookupCost is the tag lookup beyond TrigPop: none for the associative
// match and the hash table (constant time, folded into TrigPop); for
// memlist, a hit in the on-NIC cache of TrigMaxEntries entries is free and
// a miss costs a 64 B DMA read of the entry from memory (LRU replacement).
func (n *NIC) lookupCost(tag uint64) sim.Time {
	if n.limited() {
		return 0
	}
	t := &n.tn
	for i, c := range t.cache {
		if c == tag {
			copy(t.cache[1:i+1], t.cache[:i])
			t.cache[0] = tag
			return 0
		}
	}
	if len(t.cache) < n.spec.TrigMaxEntries {
		t.cache = append(t.cache, 0)
	}
	copy(t.cache[1:], t.cache)
	t.cache[0] = tag
	now := n.e.Now()
	return n.link.Read(pcieUp, now, trigEntrySize, false) - now
}

// popDone runs onTriggerWrite (§3.3) for the FIFO head.
func (n *NIC) popDone() {
	t := &n.tn
	t.busy = false
	tag := *t.fifo.Front()
	e := t.entries.get(tag)
	if e == nil {
		if !n.canAlloc() {
			t.stalled = true
			n.stats.TrigStalls++
			return
		}
		e = n.alloc(tag)
	}
	t.fifo.Pop()
	t.used--
	t.space.Notify()
	e.counter++
	if e.hasOp && e.counter >= e.threshold {
		n.fireEntry(e)
	}
	n.kickPop()
}
