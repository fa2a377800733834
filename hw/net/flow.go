package net

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"slices"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Network models, selected by NetworkSpec.Model.
const (
	// ModelPacket moves every packet hop by hop through FIFO output ports
	// (store and forward, the dissertation).
	ModelPacket = "packet"
	// ModelFlow moves whole messages as fluid flows that share every link
	// they cross with max-min fairness.
	ModelFlow = "flow"
)

// Flow-model treatments of a dragonfly's bundle of parallel global links
// between two groups, selected by NetworkSpec.FlowBundle.
const (
	// BundleExact keeps every link its own resource; a route takes link
	// dst mod k, as in the packet model.
	BundleExact = "exact"
	// BundleAggregate makes the k links of a group pair one resource of k
	// times a link's rate that the pair's flows share max-min fairly.
	BundleAggregate = "aggregate"
)

// NetworkSpec selects how the fabric moves data.
type NetworkSpec struct {
	Model string `toml:"model" doc:"packet (every packet through FIFO output ports) or flow (whole messages as flows sharing links max-min fairly; for very large runs)" src:"RUN"`
	// FlowBundle is how the flow model treats a dragonfly's parallel
	// global links between two groups (docs/network.md, Topologies).
	FlowBundle string `toml:"flow_bundle" doc:"flow model, dragonfly: exact (each parallel global link between two groups its own link, a route taking link dst mod k, as the packet model) or aggregate (the k links one shared link of k times the rate, as if packets spread evenly over them; fewer distinct rates, far cheaper at thousands of GPUs, not the packet model's routes)" src:"RUN"`
	// FlowInterval is the least time between two re-divisions of the
	// bandwidth (docs/network.md, "The re-division interval").
	FlowInterval sim.Time `toml:"flow_interval" doc:"flow model: least time between two re-divisions of the links' bandwidth; 0 (exact, the default) re-divides at every instant a flow starts or ends; above 0 a change within this time of the last re-division waits for the next (a pair's next message replacing its last still at once, which is exact): a started flow waits up to this long for its share and an ended flow's share stays unused as long (an approximation for very large all-to-alls; at most 100us)" src:"RUN"`
}

// MaxFlowInterval bounds network.flow_interval.
const MaxFlowInterval = 100 * sim.Microsecond

// Validate reports an unknown model or bundle treatment, and an aggregate
// bundle outside the flow model.
//
// Each value is held to its own range whatever the others (it returned
// at the first problem, so a bad model hid a bad bundle or interval); a
// value's need of the flow model is checked only under a valid model.
func (s NetworkSpec) Validate() error {
	var errs []error
	modelOK := s.Model == ModelPacket || s.Model == ModelFlow
	if !modelOK {
		errs = append(errs, fmt.Errorf("network.model = %q: must be packet or flow", s.Model))
	}
	switch {
	case s.FlowBundle != BundleExact && s.FlowBundle != BundleAggregate:
		errs = append(errs, fmt.Errorf("network.flow_bundle = %q: must be exact or aggregate", s.FlowBundle))
	case modelOK && s.FlowBundle == BundleAggregate && s.Model != ModelFlow:
		errs = append(errs, fmt.Errorf("network.flow_bundle = aggregate: only with network.model = flow (the packet model routes every packet on its link)"))
	}
	switch {
	case s.FlowInterval < 0 || s.FlowInterval > MaxFlowInterval:
		errs = append(errs, fmt.Errorf("network.flow_interval = %v: must be in [0, %v]", s.FlowInterval, MaxFlowInterval))
	case modelOK && s.FlowInterval > 0 && s.Model != ModelFlow:
		errs = append(errs, fmt.Errorf("network.flow_interval = %v: only with network.model = flow (the packet model has no re-division)", s.FlowInterval))
	}
	return errors.Join(errs...)
}

// Paced is implemented by a flow-mode message whose source cannot feed the
// wire faster than its DMA: the flow never completes before NotBefore.
type Paced interface {
	NotBefore() sim.Time
}

// flow is one message in flow mode. Invariant: while active, it is in the
// flows list of every port of its path, at index pos[h] of path[h].
//
// The fields a reallocation reads for every flow of its set (the search's
// mark, the rates, the bottleneck, the path) come first, in the first two
// of its four cache lines (256 bytes, a size class the allocator aligns
// to 64): in an all-to-all a reallocation visits about a thousand flows
// several times, and the search's and the filling's loads of fields
// spread over five lines were most of their time (EP 64 profile).
type flow struct {
	mark    uint64  // component search epoch
	rate    float64 // bytes per ps; 0 until the first allocation
	oldRate float64 // rate before the current reallocation
	filled  float64 // rate before the current water-filling (port.load)
	version uint64  // bumped on every reschedule; a stale event due now carries an older one
	// at is the port whose water-filling step gave the flow its rate
	// (its bottleneck) when it was last filled: the step at which a
	// filling over every flow freezes it, while its rate stands.
	at     *port
	hops   int32
	frozen bool // water-filling: rate fixed this round
	ticket sim.Ticket
	path   [maxHops]*port

	remaining float64  // wire bytes not yet sent
	last      sim.Time // when remaining was last brought up to date (its last rate change)
	notBefore sim.Time
	serial    uint64  // messages sent before it on the fabric: the order of equal completions
	wire      float64 // wire bytes of the message (payload + per-packet headers)
	pair      uint64
	ev        uint64 // settled fill: the pass that listed it as a kept flow
	atWas     *port  // settled or floor fill: at before it, given back if the fill gives up

	f   *Fabric
	p   Packet
	pos [maxHops]int32
}

// flowState is the fabric's flow-mode bookkeeping.
type flowState struct {
	f      *Fabric
	epoch  uint64
	queued map[uint64][]*flow  // per (src, dst) pair: messages behind the active one, FIFO
	busy   map[uint64]bool     // pairs with an active flow
	lastAt map[uint64]sim.Time // per pair: latest delivery, so a pair's messages arrive in order
	ports  []*port             // scratch: component ports
	flows  []*flow             // scratch: component flows
	heap   []*port             // scratch: water-filling's ports by share
	stack  []*port             // scratch: the component search's ports to visit
	step   uint64              // water-filling steps so far (port.touched)
	check  uint64              // widen's passes so far (port.checked)
	moved  []*port             // scratch: ports one step changed
	resch  []*flow             // scratch: flows whose completion moves
	keys   []uint64            // scratch: sortBySerial's keys
	tmp    []*flow             // scratch: sortBySerial's copy
	sent   uint64              // messages sent so far (flow.serial)
	cap    float64             // link capacity, bytes per ps
	active int
	// dirty holds the ports of the flows started or ended at the current
	// time since the last reallocation, which runs once, as an event at
	// this time after those already due (pending). Why: a halo exchange
	// starts and ends most of its flows at a few instants (98 % of
	// changes at 64 nodes shared their time with the one before), and
	// recomputing the component at each change made the work grow as
	// changes × component.
	dirty   []*port
	pending bool
	// ended and started hold the flows that ended and started since the
	// last reallocation (see replaced).
	ended, started []*flow
	// fullOnly (tests) makes every reallocation water-fill, never take
	// replaced's path: the oracle the replacement is checked against.
	fullOnly bool
	// replacements counts the reallocations replaced did (tests).
	replacements int
	ports0       int32   // ports given an id so far (port.id)
	all          []*port // the ports given an id, by id (the tests' oracle)
	// afterRealloc, when set (tests), runs after every reallocation.
	afterRealloc func()
	// floor: a flow whose rate is below it keeps its rate in this
	// reallocation (floorOf); 0 when every reached flow is filled again.
	floor float64
	// unsafe: the search met a rate too near the floor, or two kept
	// rates too near each other, to trust the floor (settle).
	unsafe bool
	// lower: when unsafe, a floor below every rate that made it so
	// (settle), which the reallocation tries next.
	lower float64
	// noFloor (tests) makes every reallocation fill without a floor.
	noFloor bool
	// crossNear is the floor fill's search crossing, besides the
	// bottleneck ports, every port whose load is within crossSlack of
	// its capacity (collect); false (tests) crosses the bottleneck ports
	// only and leaves such ports to widen. nearCrossed counts the ports
	// it crossed that were no bottleneck (tests).
	crossNear   bool
	nearCrossed int
	rates       []float64 // scratch: settle's kept rates
	// floored and fallbacks count the reallocations that filled with a
	// floor and those that had to drop it (tests, docs).
	floored, fallbacks int
	// keptSeen counts the flows ports kept at their rates (tests).
	keptSeen int
	// noSettled (tests) makes every reallocation fill with the floor,
	// never try the settled fill (settled.go).
	noSettled bool
	kept      []*flow // scratch: the settled fill's kept flows
	// settledRounds is the refills the settled fill may do before it
	// gives up (maxSettledRounds; tests draw fewer).
	settledRounds int
	// settledSmall is settledSmall, the set size up to which the settled
	// fill may refill maxSmallRounds times (tests draw fewer, so that
	// sets pass it and reach the work budget).
	settledSmall int
	// settledSkip is the reallocations left that fill with the floor
	// without trying the settled fill, settledBackoff the last such
	// count (doubled at each give-up in a row, 0 after a success).
	settledSkip, settledBackoff int
	// settledGrew: the last settled fill gave up because its set kept
	// growing (the refill bounds).
	settledGrew bool
	// settledKept counts the kept flows the settled fill took at their
	// own steps, settledGaveUp the settled fills given up (tests, docs).
	settledKept, settledGaveUp int
	// settledWork is the flows the settled fill under way has filled,
	// summed over its fillings; floorFlows the flows the floor's fills
	// re-divide, a moving average over the last few (settledDone).
	settledWork int
	floorFlows  float64
	// interval is network.flow_interval: a re-division (not a
	// replacement) within it of the last one (at lastFull; ran says
	// whether there was one) waits for lastFull + interval, its ports and
	// flows gathered in waitPorts, waitEnded and waitStarted until then
	// (waiting: the flowWait event is scheduled). 0: none waits.
	interval               sim.Time
	lastFull               sim.Time
	ran, waiting           bool
	waitPorts              []*port
	waitEnded, waitStarted []*flow
	// waited counts the re-divisions that waited (tests, docs).
	waited int
}

// UseFlows switches the fabric to the flow model (network.model = flow).
// Call it before the first Send.
func (f *Fabric) UseFlows() {
	f.fl = &flowState{f: f, settledRounds: maxSettledRounds, settledSmall: settledSmall, crossNear: true, queued: map[uint64][]*flow{}, busy: map[uint64]bool{}, lastAt: map[uint64]sim.Time{}, cap: 1 / f.perByte}
}

// wireBytes is what an n-byte message costs on the wire: the payload plus
// one header per link packet, as the packet model would send it.
func (f *Fabric) wireBytes(n unit.Bytes) float64 {
	pk := max(1, (n+f.link.Payload-1)/f.link.Payload)
	return float64(n + pk*f.link.Header)
}

// sendFlow starts (or queues behind its pair's active message) a flow-mode
// message. Messages of one (src, dst) pair are served in order, as the
// packet model's FIFO ports deliver them.
func (f *Fabric) sendFlow(p Packet, route [maxHops]*port, hops int) {
	src, dst := p.Route()
	fl := &flow{f: f, p: p, path: route, hops: int32(hops), pair: uint64(src)<<32 | uint64(uint32(dst)),
		wire: f.wireBytes(p.PayloadBytes())}
	fl.remaining = fl.wire
	f.fl.sent++
	fl.serial = f.fl.sent
	if pc, ok := p.(Paced); ok {
		fl.notBefore = pc.NotBefore()
	}
	for h := range hops {
		route[h].pkts += uint64(max(1, (p.PayloadBytes()+f.link.Payload-1)/f.link.Payload))
		route[h].bytes += uint64(fl.wire)
	}
	if f.fl.busy[fl.pair] {
		f.fl.queued[fl.pair] = append(f.fl.queued[fl.pair], fl)
		return
	}
	f.startFlow(fl)
}

func (f *Fabric) startFlow(fl *flow) {
	fs := f.fl
	fs.busy[fl.pair] = true
	fs.active++
	now := f.e.Now()
	fl.last = now
	for h := range fl.hops {
		pt := fl.path[h]
		fl.pos[h] = int32(len(pt.flows))
		pt.flows = append(pt.flows, fl)
	}
	fs.started = append(fs.started, fl)
	f.changed(fl, false)
}

// SetFlowInterval sets network.flow_interval (after UseFlows): the least
// time between two re-divisions of the bandwidth that are not a pair's
// next message replacing its last. 0, the default, re-divides at every
// instant something changed (exact max-min rates).
//
// What it approximates: between two re-divisions a flow that started has
// no rate (it waits) and the share of a flow that ended stays unused, so
// every start is late by up to d and the links are under-used as long;
// no port is ever given more than its capacity. Why: in an all-to-all of
// hundreds of GPUs (MoE's dispatch and combine) a lone acknowledgement or
// a piece whose pair has nothing queued starts or ends every few tens of
// nanoseconds, and each re-divides the bandwidth of the whole
// all-to-all, hundreds to thousands of flows joined through their
// bottleneck ports; with d the re-divisions are at most one per d.
func (f *Fabric) SetFlowInterval(d sim.Time) {
	f.fl.interval = d
}

// FlowWaits returns how many re-divisions waited for the interval
// (network.flow_interval).
func (f *Fabric) FlowWaits() int { return f.fl.waited }

// changed notes that flow fl started or ended now: its ports join the
// next reallocation, which is scheduled for now if it is not already. Of a
// flow that ended, only its bottleneck ports (port.neck) join: a port
// that is no bottleneck is not full and was never chosen, and without the
// flow it has more room still, so no flow's rate depends on it (its other
// flows, if their rates change through another port, bring it into the
// set themselves, or widen does when it fills up).
func (f *Fabric) changed(fl *flow, ended bool) {
	fs := f.fl
	for h := range fl.hops {
		pt := fl.path[h]
		if ended && !pt.neck {
			continue
		}
		if pt.id == 0 {
			fs.ports0++
			pt.id = fs.ports0
			fs.all = append(fs.all, pt)
		}
		fs.dirty = append(fs.dirty, pt)
	}
	if !fs.pending {
		fs.pending = true
		f.e.AtH(f.e.Now(), (*flowRealloc)(fs), 0)
	}
}

// flowRealloc is the event that reallocates the rates after the changes
// of one instant.
type flowRealloc flowState

func (r *flowRealloc) Handle(uint64) {
	fs := (*flowState)(r)
	fs.pending = false
	now := fs.f.e.Now()
	switch {
	case fs.f.replaced():
	case fs.interval > 0 && fs.ran && now < fs.lastFull+fs.interval:
		// Too soon after the last re-division: these changes wait for
		// the next one, their started flows without a rate until then.
		fs.waitPorts = append(fs.waitPorts, fs.dirty...)
		fs.waitEnded = append(fs.waitEnded, fs.ended...)
		fs.waitStarted = append(fs.waitStarted, fs.started...)
		fs.waited++
		if !fs.waiting {
			fs.waiting = true
			fs.f.e.AtH(fs.lastFull+fs.interval, (*flowWait)(fs), 0)
		}
	default:
		fs.unwait() // the changes that waited re-divide with these
		fs.f.reallocate(fs.dirty)
		fs.lastFull, fs.ran = now, true
	}
	clear(fs.dirty)
	fs.dirty = fs.dirty[:0]
	clear(fs.ended)
	clear(fs.started)
	fs.ended, fs.started = fs.ended[:0], fs.started[:0]
	if fs.afterRealloc != nil {
		fs.afterRealloc()
	}
}

// flowWait is the event at which the changes that waited for the
// re-division interval join the current instant's, whose reallocation
// then re-divides them all (or, when every flow that ended meanwhile was
// replaced by one on its path that started meanwhile, hands each started
// flow its ended flow's rate, which is then exact: the paths are those of
// the last re-division).
type flowWait flowState

func (w *flowWait) Handle(uint64) {
	fs := (*flowState)(w)
	fs.waiting = false
	if len(fs.waitPorts) == 0 {
		return // a re-division since took them
	}
	fs.unwait()
	if !fs.pending {
		fs.pending = true
		fs.f.e.AtH(fs.f.e.Now(), (*flowRealloc)(fs), 0)
	}
}

// unwait moves the changes that waited for the re-division interval to
// the current instant's.
func (fs *flowState) unwait() {
	fs.dirty = append(fs.dirty, fs.waitPorts...)
	fs.ended = append(fs.ended, fs.waitEnded...)
	fs.started = append(fs.started, fs.waitStarted...)
	clear(fs.waitPorts)
	clear(fs.waitEnded)
	clear(fs.waitStarted)
	fs.waitPorts, fs.waitEnded, fs.waitStarted = fs.waitPorts[:0], fs.waitEnded[:0], fs.waitStarted[:0]
}

// Handle is a flow's completion event; arg is the version it was scheduled
// with (a later reallocation cancels it, or makes it stale when it was due
// now and could not be cancelled).
func (fl *flow) Handle(arg uint64) {
	if arg != fl.version {
		return
	}
	fl.ticket = 0
	f := fl.f
	now := f.e.Now()
	fl.remaining = 0
	for h := range fl.hops {
		pt := fl.path[h]
		pt.load -= fl.rate
		i := fl.pos[h]
		lastFl := pt.flows[len(pt.flows)-1]
		pt.flows[i] = lastFl
		lastFl.pos[lastFl.hopOf(pt)] = i
		pt.flows = pt.flows[:len(pt.flows)-1]
	}
	f.fl.active--
	for h := range fl.hops {
		fl.path[h].donePkts += uint64(max(1, (fl.p.PayloadBytes()+f.link.Payload-1)/f.link.Payload))
		fl.path[h].doneBytes += uint64(fl.wire)
	}
	f.fl.ended = append(f.fl.ended, fl)
	f.changed(fl, true)
	f.deliverFlow(fl, now)
	fs := f.fl
	if q := fs.queued[fl.pair]; len(q) > 0 {
		next := q[0]
		if len(q) == 1 {
			delete(fs.queued, fl.pair)
		} else {
			fs.queued[fl.pair] = q[1:]
		}
		f.startFlow(next)
	} else {
		delete(fs.busy, fl.pair)
	}
}

// hopOf returns the index of port pt on the flow's path.
func (fl *flow) hopOf(pt *port) int32 {
	for h := range fl.hops {
		if fl.path[h] == pt {
			return h
		}
	}
	panic("net: flow not on port " + pt.name)
}

// deliverFlow hands the message to its destination: the last byte left the
// source at now, and reaches the destination after every link's latency,
// every switch's latency and, per store-and-forward switch, one more
// packet's serialisation (the pipeline fill of the packet model).
func (f *Fabric) deliverFlow(fl *flow, now sim.Time) {
	first := min(fl.p.PayloadBytes(), f.link.Payload)
	arrive := now + sim.Duration(fl.hops)*f.link.Latency + sim.Duration(fl.hops-1)*(f.sw.Latency+f.Serialization(first))
	if fl.path[0].capacity > 0 { // the node's GPU fabric
		arrive = now + f.node.spec.Latency + sim.Duration(fl.hops-1)*f.node.serialization(f, first)
	}
	arrive = max(arrive, f.fl.lastAt[fl.pair])
	f.fl.lastAt[fl.pair] = arrive
	f.e.AtH(arrive, (*flowDelivery)(fl), 0)
}

// flowDelivery is the delivery event of a finished flow.
type flowDelivery flow

func (d *flowDelivery) Handle(uint64) { d.f.receive(d.p) }

// reallocate recomputes the max-min fair rates of every flow whose rate
// the changes at the given ports can move, and reschedules the
// completions of those whose rate changed, cancelling the old ones, so the
// engine's queue holds one completion per active flow.
//
// Which flows: the search starts at the changed ports and crosses from a
// flow to another only through a port that was a bottleneck (chosen by a
// water-filling step, or left full) when last water-filled (port.neck). A port that the
// water-filling never chooses changes no other port's state (its own
// state is read by no one, and it is never the heap's minimum), so the
// water-filling without it gives every flow the same rate to the bit; and
// max-min fairness decomposes over the sets of flows joined by bottleneck
// ports. The search's guess is checked after the filling: a port it did
// not cross whose flows' rates now fill it to within slackRel of its
// capacity (a chosen port is full to a few ulps) could be a bottleneck,
// so it is crossed and the set filled again. The rates are thus bit for
// bit those of a water-filling over every active flow of the machine
// (fullRates, the tests' oracle) as long as ties between ports are broken
// by something of the port's own (its id), not by its place in the set.
//
// A flow's remaining bytes are brought up to date only when its rate
// changes (remaining -= old rate × time since the last change), so its
// completion time depends on its own rates only, not on which other flows
// a search happened to reach.
func (f *Fabric) reallocate(seed []*port) {
	fs := f.fl
	switch {
	case fs.noSettled || fs.settledSkip > 0:
		fs.settledSkip = max(0, fs.settledSkip-1)
		f.floorFill(seed)
	case f.settledFill():
		fs.settledBackoff = 0
	default:
		// Given up: the floor's fill; when the set kept growing, the
		// next few reallocations too, more after each such give-up in
		// a row (an all-to-all, whose sets grow over many refills,
		// gives up at most of them). A give-up for a kept flow without
		// a bottleneck (rare) does not back off.
		if fs.settledGrew {
			fs.settledBackoff = min(2*fs.settledBackoff+1, maxSettledBackoff)
			fs.settledSkip = fs.settledBackoff
		}
		f.floorFill(seed)
	}
	f.reschedule()
}

// floorFill fills the set the changes at the seed ports reach through
// bottleneck ports, keeping the flows below the floor (floorOf).
func (f *Fabric) floorFill(seed []*port) {
	fs := f.fl
	fs.floor = 0
	if !fs.noFloor {
		fs.floor = f.floorOf()
	}
	if fs.floor > 0 {
		fs.floored++
	}
	for tries := 1; !f.fill(seed); tries++ {
		// Fill again with a floor below the rates that made this one
		// unsafe (any floor under floorOf's is exact: those rates are
		// then filled, not kept), and without one after a few tries,
		// which is always safe. Why not at once without: in a
		// symmetric exchange, rates equal but for their last bits are
		// common, and a filling without a floor reaches most of the
		// machine (at 8,192 GPUs, weak, a few percent of the
		// reallocations did that and were a large part of the run).
		fs.floor = fs.lower
		if tries >= maxLowerings {
			fs.floor = 0
		}
		if fs.floor == 0 {
			fs.fallbacks++
		}
	}
	fs.floorFlows += (float64(len(fs.flows)) - fs.floorFlows) / 8
}

// reschedule brings up to date the flows of the set whose rate changed
// (and gives the new ones their first completion) and moves their
// completions.
func (f *Fabric) reschedule() {
	fs := f.fl
	now := f.e.Now()
	// The completions move in the order the messages were sent, so that
	// flows ending at the same picosecond end in that order, whatever the
	// order the set was found in (which depends on which flows changed at
	// this instant).
	resch := fs.resch[:0]
	for _, fl := range fs.flows {
		if fl.rate != fl.oldRate || fl.version == 0 {
			if fl.oldRate > 0 {
				fl.remaining = math.Max(0, fl.remaining-fl.oldRate*float64(now-fl.last))
			}
			fl.last = now
			resch = append(resch, fl)
		} // else its scheduled completion still holds
	}
	sortBySerial(resch, &fs.keys, &fs.tmp)
	for _, fl := range resch {
		fl.version++
		end := now + sim.Time(math.Ceil(fl.remaining/fl.rate))
		f.e.Cancel(fl.ticket)
		fl.ticket = f.e.AtHC(max(end, fl.notBefore), fl, fl.version)
	}
	clear(resch)
	fs.resch = resch[:0]
}

// fill finds the set of flows the changes at the seed ports can reach
// and water-fills them (reallocate). It reports false, leaving every rate
// and port load as it was, when settle found the floor unsafe.
func (f *Fabric) fill(seed []*port) bool {
	fs := f.fl
	fs.epoch++
	fs.unsafe, fs.lower = false, fs.floor
	fs.ports, fs.flows = fs.ports[:0], fs.flows[:0]
	for _, pt := range seed {
		f.collect(pt)
	}
	for done := 0; ; {
		if fs.unsafe {
			f.unfill(fs.flows[:done])
			f.unmark()
			return false
		}
		for _, fl := range fs.flows[done:] {
			fl.oldRate = fl.rate
		}
		done = len(fs.flows)
		for _, fl := range fs.flows {
			fl.frozen = false
			fl.filled = fl.rate
		}
		f.waterFill()
		fs.loadRateChanges()
		if !f.widen() {
			return true
		}
	}
}

// loadRateChanges adds each flow's rate change since its fill began
// (rate less filled) to the load of every port on its path.
func (fs *flowState) loadRateChanges() {
	for _, fl := range fs.flows {
		if d := fl.rate - fl.filled; d != 0 {
			for _, pt := range fl.path[:fl.hops] {
				pt.load += d
			}
		}
	}
}

// unmark gives the set's ports the bottleneck marks, and its flows the
// bottlenecks, they had before this fill (collect kept them), when the
// fill is given up over an unsafe floor. Why: a filling before the
// give-up (the set had grown through widen) left its own marks on the
// ports, and the next try's search crosses only bottleneck ports; a port
// that was full before the reallocation but not after the given-up
// filling lost its mark, the next try did not cross it, and its flows
// kept rates the water-filling over every flow changes (moe throughput
// under COMPNET at EP 64: three flows 9 % off the oracle's rates after
// the 3,624th re-division).
func (f *Fabric) unmark() {
	fs := f.fl
	for _, pt := range fs.ports {
		pt.neck = pt.neckWas
	}
	for _, fl := range fs.flows {
		fl.at = fl.atWas
	}
}

// unfill gives the flows back the rates they had before the reallocation.
func (f *Fabric) unfill(fls []*flow) {
	for _, fl := range fls {
		if d := fl.oldRate - fl.rate; d != 0 {
			for _, pt := range fl.path[:fl.hops] {
				pt.load += d
			}
			fl.rate = fl.oldRate
		}
	}
}

// floorSlack is the relative margin of the floor (floorOf, settle): far
// above the rounding by which a water-filling step's share can fall below
// an earlier step's (a few ulps per subtraction, about 1e-12 for a port
// of hundreds of flows), far below the gaps between the rates of
// different bottlenecks.
const floorSlack = 1e-7

// floorOf returns the rate below which no flow's rate can change in this
// reallocation: the lowest rate of the flows that ended, and the lowest
// rate a flow that started can get (at least its ports' least capacity
// per flow, as a port's share only grows during a water-filling), less
// twice floorSlack; 0 when there is none.
//
// Why: water-filling freezes flows in steps of non-decreasing share. A
// flow that ends at rate r was frozen at a step of share r; every step
// before it chose a port without it, whose state does not depend on it,
// so without it the same steps run in the same order and freeze the same
// flows at the same rates; every flow frozen later gets at least r. A
// flow that starts and gets rate r changes, likewise, no step of share
// below r. So the flows below the floor keep their rates bit for bit, and
// the reallocation only fills the others, over each port's capacity less
// the kept flows' rates (settle). In a halo exchange the flows that keep
// their rates are most of those a change reaches: the slow flows across
// a dragonfly's global links stay as they are while the fast ones end.
func (f *Fabric) floorOf() float64 {
	fs := f.fl
	low := math.Inf(1)
	for _, fl := range fs.ended {
		low = min(low, fl.rate)
	}
	for _, fl := range fs.started {
		for _, pt := range fl.path[:fl.hops] {
			c := fs.cap
			if pt.capacity > 0 {
				c = pt.capacity
			}
			low = min(low, c/float64(len(pt.flows)))
		}
	}
	if math.IsInf(low, 1) || !(low > 0) {
		return 0
	}
	return low * (1 - 2*floorSlack)
}

// settle sets port pt's base and kept from its flows outside the set
// (kept at their rates, below the floor), taking their rates away from
// the capacity in ascending order, the order a water-filling over every
// flow froze them in; a kept rate within floorSlack of another (whose
// order the rounding of the shares could have swapped) or any rate within
// floorSlack of the floor (which the rounding could put on the other
// side) makes the floor unsafe (fs.unsafe).
func (f *Fabric) settle(pt *port) {
	fs := f.fl
	pt.base = fs.cap
	if pt.capacity > 0 {
		pt.base = pt.capacity
	}
	pt.kept = 0
	if fs.floor == 0 {
		return
	}
	rates := fs.rates[:0]
	sorted := true
	for _, fl := range pt.flows {
		if fl.version == 0 {
			continue // no rate yet
		}
		r := fl.rate
		if math.Abs(r-fs.floor) <= fs.floor*floorSlack {
			f.unsafeBelow(r)
		}
		if fl.mark != fs.epoch {
			if n := len(rates); n > 0 && r < rates[n-1] {
				sorted = false
			}
			rates = append(rates, r)
		}
	}
	if !sorted {
		slices.Sort(rates)
	}
	for i, r := range rates {
		if i > 0 && r != rates[i-1] && r-rates[i-1] <= r*floorSlack {
			f.unsafeBelow(rates[i-1])
		}
		pt.base -= r
	}
	pt.kept = len(rates)
	fs.keptSeen += len(rates)
	fs.rates = rates[:0]
}

// maxLowerings bounds the floors a reallocation tries (reallocate)
// before it fills without one.
const maxLowerings = 4

// unsafeBelow marks the floor unsafe because of rate r (within floorSlack
// of the floor, or the lower of two kept rates within floorSlack of each
// other) and lowers the floor to try next (fs.lower) below r by twice
// floorSlack: r is then filled, not kept, and no longer near that floor.
// The next floor is below this one (r is at most floor × (1+floorSlack)).
func (f *Fabric) unsafeBelow(r float64) {
	fs := f.fl
	fs.unsafe = true
	fs.lower = min(fs.lower, r*(1-2*floorSlack))
}

// maxReplaced bounds the flows that replaced matches at one instant (a
// quadratic search; the pieces of device-shmem puts end one or two at a
// time).
const maxReplaced = 32

// replaced handles, without water-filling, the reallocation of an instant
// at which every flow that ended was replaced by one that started on the
// same path (a pair's next queued piece: the device-shmem strategies'
// 64 KiB puts, whose every end starts the next). It reports whether it did.
//
// Why it is exact: the water-filling's rates depend only on the multiset
// of the flows' paths (each step gives every unfrozen flow of the port of
// least (share, id) the same share and subtracts that one value from each
// port it crosses, so neither the order of a port's flows nor the heap's
// layout matters, and flows of one path freeze at the same step). A
// replacement leaves the multiset as it was, so a water-filling would
// compute every rate again bit for bit (and choose the same bottleneck
// ports) and give each new flow the rate of the flow it replaces. What the
// water-filling's reallocation does besides is done here the same way: no
// other flow's rate changes, so none is brought up to date or moved, and
// the flows without a completion yet (the new ones) get one, in send
// order. TestReplacedMatchesFullReallocation runs the same traffic both
// ways and compares every delivery.
func (f *Fabric) replaced() bool {
	fs := f.fl
	n := len(fs.ended)
	if fs.fullOnly || n == 0 || n != len(fs.started) || n > maxReplaced {
		return false
	}
	// Pair each started flow with an ended one of the same path (equality
	// of paths is an equivalence, so taking the first match finds a
	// pairing whenever one exists).
	for i, st := range fs.started {
		j := i
		for j < n && !samePath(fs.ended[j], st) {
			j++
		}
		if j == n {
			return false
		}
		fs.ended[i], fs.ended[j] = fs.ended[j], fs.ended[i]
	}
	now := f.e.Now()
	for i, st := range fs.started {
		st.rate, st.at = fs.ended[i].rate, fs.ended[i].at
		st.last = now // it may have waited for the re-division interval
		for _, pt := range st.path[:st.hops] {
			pt.load += st.rate
		}
	}
	resch := append(fs.resch[:0], fs.started...)
	sortBySerial(resch, &fs.keys, &fs.tmp)
	for _, fl := range resch {
		fl.version++
		end := now + sim.Time(math.Ceil(fl.remaining/fl.rate))
		fl.ticket = f.e.AtHC(max(end, fl.notBefore), fl, fl.version)
	}
	clear(resch)
	fs.resch = resch[:0]
	fs.replacements++
	return true
}

// samePath reports whether two flows cross the same ports in the same order.
func samePath(a, b *flow) bool {
	return a.hops == b.hops && a.path == b.path
}

// slackRel is how far below its capacity (relative) the flows of a port
// the search did not cross must stay for the port to be certainly no
// bottleneck: a port the water-filling chooses ends full up to the
// rounding of its subtractions (about steps × 2⁻⁵³ of its capacity),
// far inside this margin.
const slackRel = 1e-6

// loadSlack is where widen stops trusting a port's running load and adds
// its flows' rates up: the load's rounding error is at most an ulp of the
// capacity per update (about 1.1e-16 c), so a load below c*(1-loadSlack)
// puts the exact sum below c*(1-slackRel) for any port updated fewer than
// 10⁹ times since its last exact sum. Why: widen adding up every flow of
// every port of a set's flows was the largest part of a reallocation at
// 8,192 GPUs (a fifth of the run).
const loadSlack = 2 * slackRel

// widen checks the ports of the set's flows that the search did not cross:
// each whose flows' rates sum to within slackRel of its capacity is
// crossed now (it, its flows and, through bottleneck ports, theirs join
// the set). It reports whether the set grew, so the filling must be redone.
func (f *Fabric) widen() bool {
	fs := f.fl
	fs.check++
	n, np := len(fs.flows), len(fs.ports)
	for _, fl := range fs.flows[:n] {
		for _, pt := range fl.path[:fl.hops] {
			if pt.mark == fs.epoch || pt.checked == fs.check {
				continue
			}
			pt.checked = fs.check
			c := fs.cap
			if pt.capacity > 0 {
				c = pt.capacity
			}
			if pt.load < c*(1-loadSlack) {
				continue // certainly below c*(1-slackRel): no bottleneck
			}
			sum := 0.0
			for _, g := range pt.flows {
				sum += g.rate
			}
			pt.load = sum // drop the rounding the updates gathered
			if sum >= c*(1-slackRel) {
				f.collect(pt)
			}
		}
	}
	return len(fs.ports) > np
}

// sortBySerial sorts flows by serial. Each key packs a serial above the
// flow's index, so the sort compares integers rather than calling a
// comparison that loads two flows (that sort was a tenth of an
// all-to-all's run); serials are distinct, so the order is the same.
// Above radixMin flows the keys are sorted by their serial bits a byte at
// a time (radixSort): a reallocation of an all-to-all moves hundreds of
// completions, and a comparison sort's unpredictable branches were a
// tenth of the run again (EP 64 under COMPNET).
func sortBySerial(fls []*flow, keys *[]uint64, tmp *[]*flow) {
	const idxBits = 24
	if len(fls) >= 1<<idxBits || len(fls) > 0 && fls[0].f.fl.sent >= 1<<(64-idxBits) {
		slices.SortFunc(fls, func(a, b *flow) int { return cmp.Compare(a.serial, b.serial) })
		return
	}
	k := (*keys)[:0]
	for i, fl := range fls {
		k = append(k, fl.serial<<idxBits|uint64(i))
	}
	sorted := k
	if len(k) < radixMin {
		slices.Sort(k)
	} else {
		serialBits := uint(bits.Len64(fls[0].f.fl.sent))
		k = slices.Grow(k, len(k))
		sorted = radixSort(k, k[len(k):2*len(k)], idxBits, idxBits+serialBits)
	}
	t := append((*tmp)[:0], fls...)
	for i, key := range sorted {
		fls[i] = t[key&(1<<idxBits-1)]
	}
	clear(t)
	*keys, *tmp = k[:0], t[:0]
}

// radixMin is the least number of keys sortBySerial sorts by radix.
const radixMin = 64

// radixSort sorts keys by their bits lo..hi (least significant digit
// first, a byte per pass, each pass stable), using buf (as long as keys)
// as the other buffer, and returns the one holding the sorted keys. Keys
// equal in those bits keep their order.
func radixSort(keys, buf []uint64, lo, hi uint) []uint64 {
	var count [256]int
	for shift := lo; shift < hi; shift += 8 {
		count = [256]int{}
		for _, k := range keys {
			count[byte(k>>shift)]++
		}
		sum := 0
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for _, k := range keys {
			d := byte(k >> shift)
			buf[count[d]] = k
			count[d]++
		}
		keys, buf = buf, keys
	}
	return keys
}

// collect adds port pt and, transitively, every flow on it and every
// bottleneck port (port.neck) of those flows to the set of this epoch. The search keeps its
// ports to visit in fs.stack and looks at a port's mark before pushing it:
// in an all-to-all every flow's ports are already in the component when
// the flow is reached, and a call per hop was a fifth of a run.
func (f *Fabric) collect(pt *port) {
	fs := f.fl
	if pt.mark == fs.epoch {
		return
	}
	pt.mark, pt.neckWas = fs.epoch, pt.neck
	stack := append(fs.stack[:0], pt)
	for len(stack) > 0 {
		pt := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		fs.ports = append(fs.ports, pt)
		for _, fl := range pt.flows {
			if fl.mark == fs.epoch || fl.rate < fs.floor && fl.version != 0 {
				continue // in the set already, or kept at its rate
			}
			fl.mark, fl.atWas = fs.epoch, fl.at
			fs.flows = append(fs.flows, fl)
			for _, q := range fl.path[:fl.hops] {
				if q.mark == fs.epoch {
					continue
				}
				if q.neck || fs.crossNear && fs.nearFull(q) {
					if !q.neck {
						fs.nearCrossed++
					}
					q.mark, q.neckWas = fs.epoch, q.neck
					stack = append(stack, q)
				}
			}
		}
		f.settle(pt)
	}
	clear(stack)
	fs.stack = stack[:0]
}

// crossSlack: the floor fill's search (collect) crosses, besides the
// bottleneck ports, every port whose running load is within this much
// (relative) of its capacity. Why: in an all-to-all (moe throughput
// under COMPNET at EP 64) a fill water-filled 1.40 times on average,
// because widen found, after the filling, a port the search had not
// crossed now full, and the set was filled again (36 % of the
// water-filling's flow visits); of the ports widen added, 97 % were
// within 1 % of their capacity before the re-division. Crossing them at
// once is exact by widen's own argument (a set may hold any port whose
// flows it fills: the filling over it gives every flow the rate of the
// filling over every flow, and widen still checks the ports left out);
// it only chooses how many fillings find the set.
const crossSlack = 0.01

// nearFull reports whether port pt's running load is within crossSlack
// of its capacity.
func (fs *flowState) nearFull(pt *port) bool {
	c := fs.cap
	if pt.capacity > 0 {
		c = pt.capacity
	}
	return pt.load >= c*(1-crossSlack)
}

// waterFill gives the component's flows their max-min fair rates
// (progressive filling): repeatedly find the port whose remaining capacity
// split among its unfrozen flows is smallest, give those flows that share,
// and freeze them. The ports with unfrozen flows wait in a heap by
// (share, id), each at most once (port.heapAt), moved in place when a step
// changes its share, so each step costs the ports it changes, not a scan
// of the component (at thousands of GPUs the scan was most of a run's
// time). The ports chosen, their order and so every rate are those of the
// scan that takes the port of the smallest share and, among equal shares,
// the smallest id.
func (f *Fabric) waterFill() {
	fs := f.fl
	h := fs.heap[:0]
	for _, pt := range fs.ports {
		pt.capLeft = pt.base
		pt.unfrozen = len(pt.flows) - pt.kept
		pt.heapAt = -1
		pt.neck = false
		if pt.unfrozen > 0 {
			pt.share = pt.capLeft / float64(pt.unfrozen)
			pt.heapAt = int32(len(h))
			h = append(h, pt)
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		siftDown(h, i)
	}
	left := len(fs.flows)
	for left > 0 {
		best := h[0]
		share := best.share
		best.neck = true
		h = removeAt(h, 0)
		fs.step++
		moved := fs.moved[:0]
		for _, fl := range best.flows {
			if fl.frozen || fl.mark != fs.epoch {
				continue // frozen, or kept at its rate (below the floor)
			}
			fl.frozen, fl.rate, fl.at = true, share, best
			left--
			for hp := range fl.hops {
				pt := fl.path[hp]
				if pt.mark != fs.epoch {
					continue // not in the set: no bottleneck (reallocate)
				}
				pt.capLeft -= share
				pt.unfrozen--
				if pt.touched != fs.step {
					pt.touched = fs.step
					moved = append(moved, pt)
				}
			}
		}
		h = rekey(h, moved)
		fs.moved = moved[:0]
	}
	// A port left full though no step chose it (its flows all froze at
	// another port of the same share) is crossed by the next search too:
	// widen would find it full and fill the set again.
	for _, pt := range fs.ports {
		if c := fs.cap; !pt.neck {
			if pt.capacity > 0 {
				c = pt.capacity
			}
			pt.neck = pt.capLeft <= c*slackRel
		}
	}
	clear(h)
	fs.heap = h[:0]
}

// lessPort orders water-filling's heap: by share, then id.
func lessPort(a, b *port) bool {
	return a.share < b.share || a.share == b.share && a.id < b.id
}

func siftUp(h []*port, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !lessPort(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		h[i].heapAt, h[p].heapAt = int32(i), int32(p)
		i = p
	}
}

func siftDown(h []*port, i int) {
	n := len(h)
	for {
		l, m := 2*i+1, i
		if l < n && lessPort(h[l], h[m]) {
			m = l
		}
		if r := l + 1; r < n && lessPort(h[r], h[m]) {
			m = r
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		h[i].heapAt, h[m].heapAt = int32(i), int32(m)
		i = m
	}
}

// removeAt takes entry i out of the heap.
func removeAt(h []*port, i int) []*port {
	h[i].heapAt = -1
	n := len(h) - 1
	if i != n {
		h[i] = h[n]
		h[i].heapAt = int32(i)
	}
	h[n] = nil
	h = h[:n]
	if i < n {
		siftDown(h, i)
		siftUp(h, i)
	}
	return h
}

// rekey moves each port of moved that is still in the heap to its place
// after a water-filling step: out of the heap when it has no unfrozen
// flow left, else at its new share (capacity left over unfrozen flows).
func rekey(h, moved []*port) []*port {
	for _, pt := range moved {
		if pt.heapAt < 0 {
			continue
		}
		if pt.unfrozen == 0 {
			h = removeAt(h, int(pt.heapAt))
			continue
		}
		old := pt.share
		pt.share = pt.capLeft / float64(pt.unfrozen)
		if pt.share < old {
			siftUp(h, int(pt.heapAt))
		} else {
			siftDown(h, int(pt.heapAt))
		}
	}
	return h
}

// ActiveFlows returns the number of flow-mode messages on the wire.
func (f *Fabric) ActiveFlows() int {
	if f.fl == nil {
		return 0
	}
	return f.fl.active
}
