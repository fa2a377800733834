package nic

import (
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/sim"
)

// AnyID in ME.MatchID admits messages from every initiator.
const AnyID = -1

// ---------------------------------------------------------------------------
// Commands (the dissertation (Portals 4))

// Op is the operation of a Command.
type Op uint8

// Command operations. CmdSwap takes AtomicOp Swap or CSwap; CmdCTInc and
// CmdCTSet act on Command.CT with Command.CTValue and move no data.
const (
	CmdPut         Op = iota // move MD data to the target ME
	CmdGet                   // fetch target ME data into the MD
	CmdAtomic                // target := target AtomicOp incoming, element-wise
	CmdFetchAtomic           // as CmdAtomic; the old target values return into ResultMD
	CmdSwap                  // Swap/CSwap of one element; the old value returns into ResultMD
	CmdCTInc                 // CT.success += CTValue (NIC-local; fires triggered ops)
	CmdCTSet                 // CT.success = CTValue (NIC-local; fires triggered ops)
)

var opNames = [...]string{"put", "get", "atomic", "fetch-atomic", "swap", "ct-inc", "ct-set"}

// String returns the printed name of an Op.
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return "op?"
}

// AckType is the ack an initiator requests for a put or atomic (Portals
// ack_req). The zero value is AckReq.
type AckType uint8

// Ack types (the dissertation (Portals 4)).
const (
	AckReq   AckType = iota // full ACK event (and CT count if MDEventCTAck)
	CTAckReq                // ack counted on the MD's CT only, no ACK event
	OCAckReq                // ack once the operation completed at the target (same as AckReq here: delivery is completion)
	NoAckReq                // no ack packet
)

// AtomicOp is the operation of an atomic (the dissertation (Portals 4)).
type AtomicOp uint8

// Atomic operations. Swap stores the incoming value; CSwap stores it only
// when the target equals Command.Operand.
const (
	Sum AtomicOp = iota
	Prod
	Min
	Max
	Band
	Bor
	Bxor
	Land
	Lor
	Lxor
	Swap
	CSwap
)

// AtomicType is the element type of an atomic.
type AtomicType uint8

// Atomic element types, little-endian in memory.
const (
	Int8 AtomicType = iota
	Uint8
	Int16
	Uint16
	Int32
	Uint32
	Int64
	Uint64
	Float32
	Float64
)

// Size returns the element size in bytes.
func (t AtomicType) Size() int {
	switch t {
	case Int8, Uint8:
		return 1
	case Int16, Uint16:
		return 2
	case Int32, Uint32, Float32:
		return 4
	default:
		return 8
	}
}

// Command is one NIC command: a Portals initiator operation or a CT
// operation. Offsets and lengths are in bytes.
type Command struct {
	Op           Op
	MD           *MD    // local buffer: source of a put/atomic, destination of a get
	LocalOffset  uint64 // offset into MD
	Length       uint64 // bytes moved (atomics: a multiple of AtomicType.Size())
	Target       int    // destination node (fabric endpoint index)
	PT           int    // portal table index at the target
	MatchBits    uint64
	RemoteOffset uint64 // offset into the target ME (ignored by MANAGE_LOCAL MEs)
	HdrData      uint64
	Ack          AckType
	AtomicOp     AtomicOp
	AtomicType   AtomicType
	Operand      uint64 // CSwap compare value (the element's bits, little-endian)
	UserPtr      any    // returned in initiator events

	ResultMD     *MD    // fetch/swap: where the old values go
	ResultOffset uint64 // offset into ResultMD

	CT      *CT    // CmdCTInc/CmdCTSet: the counter
	CTValue uint64 // CmdCTInc: increment; CmdCTSet: new success value

	// CompletionFlag, when non-zero, is a word the NIC sets to 1 by a posted
	// DMA write (8 B) when the op completes locally: on SEND for puts and
	// atomics, on REPLY for gets, fetches and swaps.
	CompletionFlag mem.Addr
}

// DeferredID names a command posted with PostDeferred. 0 is never issued.
type DeferredID uint64

// ---------------------------------------------------------------------------
// Memory descriptors, list entries (the dissertation (Portals 4))

// MDOptions select the initiator events an MD posts and counts.
type MDOptions uint32

// MD options (Portals PTL_MD_*). By default every initiator full event
// (SEND, ACK, REPLY) is posted to MD.EQ when it is non-nil and nothing is
// counted.
const (
	MDEventSendDisable    MDOptions = 1 << iota // no SEND full event
	MDEventSuccessDisable                       // no successful full events at all
	MDEventCTSend                               // count SEND on MD.CT
	MDEventCTReply                              // count REPLY on MD.CT
	MDEventCTAck                                // count ACK (and CT_ACK) on MD.CT
	MDEventCTBytes                              // count bytes (mlength) instead of events
)

// MD is an initiator memory descriptor: [Start, Start+Length) of the node's
// memory, with the EQ and CT that receive its events.
type MD struct {
	Start   mem.Addr
	Length  uint64
	EQ      *EQ // may be nil
	CT      *CT // may be nil
	Options MDOptions
}

// MEOptions are the options of a matching list entry (Portals PTL_ME_*).
type MEOptions uint32

// ME options.
const (
	MEOpPut                MEOptions = 1 << iota // accept puts and atomics
	MEOpGet                                      // accept gets (and the fetch side of atomics)
	MEUseOnce                                    // unlink after the first match (AUTO_UNLINK event)
	MEManageLocal                                // land messages at a NIC-managed local offset
	MENoTruncate                                 // do not match a message longer than the free space
	MEEventDisable                               // post no full events for this ME
	MEEventSuccessDisable                        // post no successful full events
	MEEventOverflowDisable                       // post no events while it is an overflow-list ME
	MEEventUnlinkDisable                         // post no AUTO_UNLINK event
	MEEventCTComm                                // count PUT/GET/ATOMIC/FETCH_ATOMIC on ME.CT
	MEEventCTOverflow                            // count PUT_OVERFLOW etc. on ME.CT
	MEEventCTBytes                               // count bytes (mlength) instead of events
)

// ME is a matching list entry description (the dissertation (Portals 4)).
type ME struct {
	Start      mem.Addr
	Length     uint64
	MatchID    int // initiator node admitted, or AnyID
	MatchBits  uint64
	IgnoreBits uint64
	Options    MEOptions
	MinFree    uint64 // MANAGE_LOCAL: unlink when Length − local offset < MinFree
	CT         *CT    // may be nil
	UserPtr    any    // returned in target events
	// Ctx, when non-nil, is the sPIN execution context (the SC'19 paper)
	// that processes the entry's put packets instead of the plain DMA path.
	Ctx ExecContext
}

// List names a PT list.
type List uint8

// PT lists an ME can be appended to.
const (
	Priority List = iota
	Overflow
)

// MEntry is a linked (or formerly linked) ME. Its methods read NIC state
// and cost nothing.
type MEntry struct {
	me      ME
	pt      int
	list    List
	linked  bool
	offset  uint64 // MANAGE_LOCAL local offset
	seq     uint64
	present bool // still in its list slice
}

// ME returns the entry's description.
func (m *MEntry) ME() ME { return m.me }

// Linked reports whether the entry is still on its list.
func (m *MEntry) Linked() bool { return m.linked }

// LocalOffset returns the MANAGE_LOCAL offset: bytes consumed so far.
func (m *MEntry) LocalOffset() uint64 { return m.offset }

// ---------------------------------------------------------------------------
// Events (the dissertation (Portals 4))

// EventType is the type of a full event.
type EventType uint8

// Event types.
const (
	EventSend EventType = iota
	EventAck
	EventReply
	EventPut
	EventGet
	EventAtomic
	EventFetchAtomic
	EventPutOverflow
	EventGetOverflow
	EventAtomicOverflow
	EventLink
	EventAutoUnlink
	EventAutoFree
	EventSearch
	EventPTDisabled
	EventTask // XTQ: a task the target NIC could not deliver or enqueue (NIFail says why)
)

var eventNames = [...]string{"SEND", "ACK", "REPLY", "PUT", "GET", "ATOMIC", "FETCH_ATOMIC",
	"PUT_OVERFLOW", "GET_OVERFLOW", "ATOMIC_OVERFLOW", "LINK", "AUTO_UNLINK", "AUTO_FREE", "SEARCH", "PT_DISABLED", "TASK"}

// String returns the printed name of an EventType.
func (t EventType) String() string {
	if int(t) < len(eventNames) {
		return eventNames[t]
	}
	return "EVENT?"
}

// FailType is an event's ni_fail_type.
type FailType uint8

// Failure types. FailOK is success.
const (
	FailOK          FailType = iota
	FailDropped              // no ME matched (or the PT's EQ was full without flow control)
	FailPTDisabled           // the PT was disabled (flow control)
	FailUndelivered          // the target does not exist or has no such PT
	FailHandler              // a sPIN handler returned FAIL (the SC'19 paper)
)

// XTQ failure types (xtq.go), reported in TASK events and failed acks.
const (
	FailTaskNoBuffer   FailType = FailHandler + 1 + iota // no posted receive buffer matched
	FailTaskTooLarge                                     // larger than what is left of the posted buffer
	FailTaskNoKernel                                     // kernel index not registered (Event.HdrData holds it)
	FailTaskNoQueue                                      // queue index not registered (Event.HdrData holds it)
	FailTaskQueueFull                                    // GPU queue full under nic.xtq_full_policy = drop
	FailTaskNoFunction                                   // CPU task: function index not registered (Event.HdrData holds it)
	FailTaskWrongAgent                                   // the queue index names a queue of the other agent (Event.HdrData holds it)
)

var failNames = [...]string{"OK", "DROPPED", "PT_DISABLED", "UNDELIVERABLE", "HANDLER_FAIL", "XTQ_NO_BUFFER", "XTQ_TOO_LARGE",
	"XTQ_NO_KERNEL", "XTQ_NO_QUEUE", "XTQ_QUEUE_FULL", "XTQ_NO_FUNCTION", "XTQ_WRONG_AGENT"}

// String returns the printed name of a FailType.
func (f FailType) String() string {
	if int(f) < len(failNames) {
		return failNames[f]
	}
	return "FAIL?"
}

// Event is a full Portals event.
type Event struct {
	Type         EventType
	Initiator    int // initiating node
	PT           int
	MatchBits    uint64
	RLength      uint64 // requested length
	MLength      uint64 // manipulated (delivered) length
	RemoteOffset uint64
	Start        mem.Addr // where the data is (target) or the MD start (initiator)
	UserPtr      any
	HdrData      uint64
	NIFail       FailType
	AtomicOp     AtomicOp
	AtomicType   AtomicType
	Time         sim.Time // when the event became visible in the EQ
}
