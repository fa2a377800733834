package pcie

import (
	"errors"
	"fmt"
	"strings"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// Attachments of a device (soc.nic_attach).
const (
	// AttachPCIe: the device sits behind a PCIe link (the LogGP model).
	AttachPCIe = "pcie"
	// AttachDirectory: the device hangs on the APU's coherent system
	// directory next to the CPU LLC and the GPU L2 (the dissertation's
	// §3.1: "Both the GPU Last Level Cache (LLC), CPU LLC and NIC are
	// connected to a coherent system directory"); no PCIe is charged.
	AttachDirectory = "directory"
)

// SoCSpec holds the on-chip attachment of an APU node's NIC: where the NIC
// hangs and what its coherent accesses and the MMIO stores to it cost.
type SoCSpec struct {
	// NICAttach is AttachDirectory on the APU presets (the dissertation's
	// §3.1 puts the NIC on the coherent system directory and confines the
	// PCIe model to dGPU cross-memory accesses) and AttachPCIe elsewhere
	// (the ComP-Net paper's §5.1: "All proposed designs have the NIC access
	// the queues through PCIe").
	NICAttach string `toml:"nic_attach" doc:"where the NIC attaches: directory (APU: on the coherent system directory; its DMA is a coherent access — directory lookup, then the L3/DRAM access — and MMIO stores to it are on-chip posted writes; no PCIe link is charged; the dissertation's §3.1) or pcie (behind the PCIe link; the ComP-Net paper's §5.1 for every ComP-Net design)" src:"DOC"`
	// MMIOLatency is an on-chip uncached posted store to a device register
	// (host → NIC doorbell, GPU → NIC trigger, CP → NIC doorbell, NIC → GPU
	// AQL doorbell: Link.MMIOStore, host → GPU AQL doorbell:
	// gpu.GPU.SetHostDoorbell): 50 ns, gem5's default x86 memory-bus ↔ I/O-bus bridge
	// delay (gem5 configs/common/FSConfig.py, Bridge(delay='50ns')); the
	// APU script of the GPU model the documents used attaches PIO devices
	// through a zero-latency crossbar (configs/example/apu_se.py), so 0–50 ns
	// brackets the simulator family. A non-posted MMIO read costs twice it.
	MMIOLatency sim.Time `toml:"mmio_latency" doc:"directory attachment: latency of an on-chip uncached posted MMIO store to a device register (doorbells to the NIC, the host's and the NIC's AQL doorbells to the GPU, triggers); a non-posted MMIO read costs twice it; 50ns = gem5's memory-bus to I/O-bus bridge delay (configs/common/FSConfig.py), the documents' simulator family spans 0-50ns" src:"DEFAULT"`
	// DirLatency is the system directory's lookup before a coherent access
	// is served: 15 ns, the 30-cycle response latency of gem5's GPU_VIPER
	// directory controller at the 2 GHz Ruby clock
	// (configs/ruby/GPU_VIPER.py DirCntrl.response_latency = 30;
	// configs/ruby/Ruby.py --ruby-clock 2GHz), the protocol of the AMD APU
	// model the documents name.
	DirLatency sim.Time `toml:"dir_latency" doc:"system-directory lookup before each coherent NIC access on the directory attachment (then the L3/DRAM access of the memory model), and before each access past the GPU L2 and each packet-processor DMA of an APU-mode GPU on the documents' presets, whose host L3 sits in the same directory (cpu.cache.l3_path); 15ns = gem5 GPU_VIPER directory response latency, 30 cycles at the 2GHz Ruby clock (configs/ruby/GPU_VIPER.py)" src:"DEFAULT"`
}

// DefaultSoC returns the APU presets' on-chip attachment.
func DefaultSoC() SoCSpec {
	return SoCSpec{NICAttach: AttachDirectory, MMIOLatency: 50 * sim.Nanosecond, DirLatency: 15 * sim.Nanosecond}
}

// Validate reports every invalid field.
func (s SoCSpec) Validate() error {
	var errs []error
	if s.NICAttach != AttachPCIe && s.NICAttach != AttachDirectory {
		errs = append(errs, fmt.Errorf("soc.nic_attach = %q: must be one of %s", s.NICAttach, strings.Join([]string{AttachDirectory, AttachPCIe}, ", ")))
	}
	if s.MMIOLatency < 0 || s.MMIOLatency > sim.Microsecond {
		errs = append(errs, fmt.Errorf("soc.mmio_latency = %v: must be in [0s, 1us]", s.MMIOLatency))
	}
	if s.DirLatency < 0 || s.DirLatency > sim.Microsecond {
		errs = append(errs, fmt.Errorf("soc.dir_latency = %v: must be in [0s, 1us]", s.DirLatency))
	}
	return errors.Join(errs...)
}

// onChip is a link's on-chip mode: the device on the coherent system
// directory instead of behind PCIe.
type onChip struct {
	mmio sim.Time // posted MMIO store, device-bound (Down)
	// access is one coherent access of the device (Up): the directory
	// lookup, then the L3/DRAM access of the memory model. The documents'
	// simulator probes a dirty owner instead of memory; the memory model
	// here does not track which cache owns a line, so every access pays
	// the memory access — the longer of the two.
	access sim.Time
}

// NewOnChip returns the attachment of a device on the APU's coherent
// system directory: accesses the device makes (Up: DMA reads and writes,
// atomics) are coherent accesses costing the directory lookup and memLat
// (the memory model's L3/DRAM access) and streaming at memBW; stores to
// the device's registers (Down: doorbells, triggers) are on-chip posted
// writes of soc.mmio_latency, issued at most one per gap g of s. No PCIe
// latency, overhead or per-byte time is charged.
func NewOnChip(s Spec, soc SoCSpec, memLat sim.Time, memBW unit.Rate) *Link {
	oc := s
	oc.Bandwidth = memBW
	l := New(oc)
	l.onChip = &onChip{mmio: soc.MMIOLatency, access: soc.DirLatency + memLat}
	return l
}

// OnChip reports whether the link is a directory attachment (NewOnChip).
func (l *Link) OnChip() bool { return l.onChip != nil }

// MMIOStore returns when a posted MMIO store that the device on a
// directory attachment issues at now to another device's register on the
// chip (the NIC's AQL doorbell to the GPU) reaches it: soc.mmio_latency
// later, as the stores to the device's own registers (Down) take. It
// panics on a PCIe link, where such a store is a posted write over it.
func (l *Link) MMIOStore(now sim.Time) sim.Time {
	if l.onChip == nil {
		panic("pcie: MMIOStore on a PCIe link")
	}
	return now + l.onChip.mmio
}

// postedOnChip is PostedWrite on a directory attachment.
func (l *Link) postedOnChip(d Dir, now sim.Time, n unit.Bytes) (senderFree, visible sim.Time) {
	if d == Down {
		// An uncached store: the issuer goes on at once (one per g); the
		// register sees it mmio_latency later, in order.
		t := l.issue(d, now)
		s := &l.sides[d]
		s.bytes += uint64(n)
		return t, max(t+l.onChip.mmio, s.free)
	}
	// A coherent write by the device: the bytes stream at the memory's
	// rate, then the directory orders them and memory takes them.
	end := l.stream(d, now, n, 1)
	l.sides[d].txns++
	return end, end + l.onChip.access
}

// readOnChip is Read on a directory attachment.
func (l *Link) readOnChip(req Dir, now sim.Time, n unit.Bytes) sim.Time {
	if req == Down {
		// A non-posted MMIO read of a device register: twice the posted
		// store's latency.
		t := l.issue(req, now)
		return t + 2*l.onChip.mmio
	}
	l.sides[req].txns++
	return l.stream(1-req, now+l.onChip.access, n, 1)
}
