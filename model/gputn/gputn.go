package gputn

import (
	"math"

	"github.com/gpunetsim/gpunetsim/hw/cpu"
	"github.com/gpunetsim/gpunetsim/hw/gpu"
	"github.com/gpunetsim/gpunetsim/hw/mem"
	"github.com/gpunetsim/gpunetsim/hw/nic"
	"github.com/gpunetsim/gpunetsim/model/cost"
)

// Host is the host side of GPU-TN on one node.
type Host struct {
	t   *cpu.Thread
	nic *nic.NIC
	sw  cost.Spec
	// all is the MD the puts are made on: bound once over the whole
	// address space (as OpenSHMEM over Portals does), a put's source is
	// its offset. A ring's puts are made twice each (checked when
	// registered, made again when fired): an MD per put was most of what
	// they allocated.
	all *nic.MD
}

// NewHost returns the GPU-TN host API for thread t on NIC n (RdmaInit).
func NewHost(t *cpu.Thread, n *nic.NIC, sw cost.Spec) *Host {
	return &Host{t: t, nic: n, sw: sw, all: &nic.MD{Length: math.MaxUint64}}
}

// Put describes the network operation a trigger entry issues.
type Put struct {
	Src          mem.Addr
	Length       uint64
	Target       int
	PT           int
	RemoteOffset uint64
	MatchBits    uint64
	// CompletionFlag, if non-zero, is set to 1 by the NIC when the put
	// completes locally (the send buffer is reusable).
	CompletionFlag mem.Addr
}

// TrigPut builds the Portals put and registers it under tag with the given
// threshold. It may be called before or after the kernel that triggers it
// starts (relaxed synchronization).
func (h *Host) TrigPut(tag uint64, p Put, threshold uint64) {
	defer h.t.Span("TrigPut", h.t.Now())
	h.t.Instr(h.sw.PortalsPost)
	h.nic.RegisterTrigger(h.t.Proc, tag, h.putCommand(p), threshold, p.CompletionFlag)
}

// TrigPutBlock registers count puts, as count TrigPut calls would, one
// after the other (the host is charged for each in turn): registration i
// is put(i) under tag(i) with the given threshold. The NIC keeps put and
// the index, not a command per entry (nic.CommandBlock), so put must give
// the same put for the same i every time.
func (h *Host) TrigPutBlock(count int, tag func(i int) uint64, put func(i int) Put, threshold uint64) {
	h.TrigPutBlockCounted(count, tag, put, threshold, 0)
}

// TrigPutBlockCounted is TrigPutBlock whose NIC also writes, after each
// registration takes effect, the number of the block's registrations in
// effect to the 8-byte word at registered (0: none; see
// nic.CommandBlock.NotifyRegistered). A kernel that waits for the word to
// reach i+1 before it triggers put i never triggers ahead of the host: with
// the registrations made in trigger order it cannot fill the trigger
// entries with early triggers and stall the NIC's trigger FIFO.
func (h *Host) TrigPutBlockCounted(count int, tag func(i int) uint64, put func(i int) Put, threshold uint64, registered mem.Addr) {
	blk := nic.NewCommandBlock(func(i int) nic.Command {
		p := put(i)
		c := h.putCommand(p)
		c.CompletionFlag = p.CompletionFlag
		return c
	})
	blk.NotifyRegistered(registered)
	h.t.Proc.RunSteps(&trigPuts{h: h, blk: blk, tag: tag, threshold: threshold, count: count})
}

// EntryLimit returns how many trigger entries the NIC holds at once (0: no
// limit; nic.NIC.TriggerEntryLimit).
func (h *Host) EntryLimit() int { return h.nic.TriggerEntryLimit() }

func (h *Host) putCommand(p Put) nic.Command {
	return nic.Command{Op: nic.CmdPut, MD: h.all, LocalOffset: uint64(p.Src), Length: p.Length,
		Target: p.Target, PT: p.PT, RemoteOffset: p.RemoteOffset, MatchBits: p.MatchBits, Ack: nic.NoAckReq}
}

// TrigGet registers a get of length bytes from the target's ME into dst.
func (h *Host) TrigGet(tag uint64, dst mem.Addr, length uint64, target, pt int, remoteOffset uint64, threshold uint64, flag mem.Addr) {
	h.t.Instr(h.sw.PortalsPost)
	cmd := nic.Command{Op: nic.CmdGet, MD: &nic.MD{Start: dst, Length: length}, Length: length,
		Target: target, PT: pt, RemoteOffset: remoteOffset}
	h.nic.RegisterTrigger(h.t.Proc, tag, cmd, threshold, flag)
}

// TrigAddr is the NIC's memory-mapped trigger address as a kernel holds
// it (GetTriggerAddr).
type TrigAddr struct{ nic *nic.NIC }

// Addr returns the MMIO address value.
func (a TrigAddr) Addr() mem.Addr { return a.nic.TriggerAddr() }

// TriggerAddr returns the NIC's trigger address, to pass to kernels.
func (h *Host) TriggerAddr() TrigAddr { return TrigAddr{h.nic} }

// Trigger is the kernel-side network trigger: a system-scope atomic store
// of tag to the trigger address (a posted MMIO write). The caller must have
// released its data at system scope first.
func Trigger(wg *gpu.WG, a TrigAddr, tag uint64) { a.nic.TriggerWrite(wg.Proc, tag) }

// TriggerWorkGroup is work-group granularity: barrier, system-scope
// release, then the leader stores the tag.
func TriggerWorkGroup(wg *gpu.WG, n TrigAddr, tag uint64) {
	var t WGTrigger
	for !t.Try(wg, n, tag) {
	}
}

// WGTrigger is TriggerWorkGroup for a work-group body in steps
// (gpu.Kernel.Steps); its zero value is ready. Keep one per work-group.
type WGTrigger struct{ phase uint8 }

// Try runs the trigger's next part: the barrier, the system-scope release
// (two parts), the trigger store. It returns false when the part waited
// and Try must be called again, in the work-group's next step; true when
// the trigger store is posted (its wait may be pending: end the step).
func (t *WGTrigger) Try(wg *gpu.WG, n TrigAddr, tag uint64) bool {
	switch t.phase {
	case 0:
		t.phase = 1
		wg.Barrier()
		return false
	case 1:
		if wg.TryRelease(gpu.System) {
			t.phase = 2
		}
		return false
	default:
		if !n.nic.TryTriggerWrite(wg.Proc, tag) {
			return false
		}
		t.phase = 0
		return true
	}
}

// TriggerWorkItem is work-item granularity: after a system-scope release,
// every work-item stores its own tag, tagBase + global id.
func TriggerWorkItem(wg *gpu.WG, n TrigAddr, tagBase uint64) {
	wg.Release(gpu.System)
	for i := range wg.Size {
		Trigger(wg, n, tagBase+uint64(wg.ID*wg.Size+i))
	}
}

// TriggerMixed is mixed granularity: groups of k work-items share a tag
// (registered with threshold k), tagBase + global id / k.
func TriggerMixed(wg *gpu.WG, n TrigAddr, tagBase uint64, k int) {
	wg.Release(gpu.System)
	for i := range wg.Size {
		Trigger(wg, n, tagBase+uint64((wg.ID*wg.Size+i)/k))
	}
}
