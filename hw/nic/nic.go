package nic

import (
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/net"
	"github.com/gpunetsim/gpunetsim/hw/pcie"
	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// NIC is one node's network interface. Create it with New and attach it to
// the fabric (New does so at index id).
type NIC struct {
	e          *sim.Engine
	id         int
	name       string
	track      string
	spec       Spec
	mem        *mem.Memory
	link       *pcie.Link
	fab        *net.Fabric
	maxPayload unit.Bytes
	stats      Stats
}

// Stats are a NIC's counters.
type Stats struct {
	Commands         uint64 // commands executed (host, triggered, GPU-TN, deferred)
	PacketsTx        uint64
	PacketsRx        uint64
	BytesTx          uint64 // payload bytes sent
	BytesRx          uint64 // payload bytes received
	Matches          uint64 // header packets matched on a priority or overflow list
	Unexpected       uint64 // messages that matched the overflow list
	Drops            uint64 // messages dropped (no match, PT disabled)
	EQDrops          uint64 // events lost to a full EQ
	TriggeredFired   uint64 // triggered ops issued
	TrigFIFOMax      int    // GPU-TN trigger FIFO max occupancy
	TrigEntriesMax   int    // GPU-TN max simultaneously live trigger entries
	TrigFires        uint64 // GPU-TN ops issued
	TrigStalls       uint64 // GPU-TN FIFO stalls for lack of a free entry
	TagReuseWarnings uint64 // GPU-TN registrations while a live entry had an op
	DMAFIFOMax       int    // max outstanding DMA requests
}

// New returns a NIC for node id and attaches it to fab at index id.
func New(e *sim.Engine, id int, name string, spec Spec, m *mem.Memory, link *pcie.Link, fab *net.Fabric, maxPayload unit.Bytes) *NIC {
	n := &NIC{e: e, id: id, name: name, track: name + ".nic", spec: spec, mem: m, link: link, fab: fab, maxPayload: maxPayload}
	fab.Attach(id, n)
	return n
}

// ID returns the node id (fabric endpoint index).
func (n *NIC) ID() int { return n.id }

// Name returns the NIC's name.
func (n *NIC) Name() string { return n.name }

// Spec returns the NIC's parameters.
func (n *NIC) Spec() Spec { return n.spec }

// Stats returns a copy of the counters.
func (n *NIC) Stats() Stats { return n.stats }

// Receive implements net.Endpoint.
func (n *NIC) Receive(p net.Packet) {}

// Doorbell posts cmd from a host thread.
func (n *NIC) Doorbell(p *sim.Proc, cmd Command) {}

// Execute issues cmd now + CmdLatency.
func (n *NIC) Execute(cmd Command) {}

// PostTriggered posts a triggered op.
func (n *NIC) PostTriggered(p *sim.Proc, cmd Command, ct *CT, threshold uint64) {}

// Arm attaches cmd to ct.
func (n *NIC) Arm(cmd Command, ct *CT, threshold uint64) {}

// PostDeferred posts without activating.
func (n *NIC) PostDeferred(p *sim.Proc, cmd Command) DeferredID { return 0 }

// ActivateDoorbell activates a deferred command.
func (n *NIC) ActivateDoorbell(p *sim.Proc, id DeferredID) {}

// TriggerAddr returns the MMIO trigger address.
func (n *NIC) TriggerAddr() mem.Addr { return 0 }

// TriggerWrite stores tag to the trigger address.
func (n *NIC) TriggerWrite(p *sim.Proc, tag uint64) {}

// RegisterTrigger registers a GPU-TN trigger entry.
func (n *NIC) RegisterTrigger(p *sim.Proc, tag uint64, cmd Command, threshold uint64, completionFlag mem.Addr) {}

// NewCT allocates a counting event.
func (n *NIC) NewCT() *CT { return &CT{} }

// NewEQ allocates an event queue.
func (n *NIC) NewEQ(size int, ring mem.Addr) *EQ { return &EQ{} }

// PTAlloc allocates a portal table entry.
func (n *NIC) PTAlloc(eq *EQ, flowCtl bool) int { return 0 }

// PTEnable re-enables a PT.
func (n *NIC) PTEnable(pt int) {}

// MEAppend appends an ME.
func (n *NIC) MEAppend(pt int, me ME, list List) *MEntry { return nil }

// MEUnlink unlinks an ME.
func (n *NIC) MEUnlink(m *MEntry) bool { return false }

// CT is a counting event.
type CT struct{ sig sim.Signal }

// Get returns success and failure.
func (c *CT) Get() (success, failure uint64) { return 0, 0 }

// Signal is notified on change.
func (c *CT) Signal() *sim.Signal { return &c.sig }

// Inc adds to success.
func (c *CT) Inc(n uint64) {}

// Set sets success.
func (c *CT) Set(v uint64) {}

// IncFailure adds to failure.
func (c *CT) IncFailure(n uint64) {}

// EQ is an event queue.
type EQ struct{ sig sim.Signal }

// Get pops an event.
func (q *EQ) Get() (Event, bool) { return Event{}, false }

// Signal is notified on every event.
func (q *EQ) Signal() *sim.Signal { return &q.sig }
