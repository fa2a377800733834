package pcie

import (
	"errors"
	"fmt"

	"github.com/gpunetsim/gpunetsim/sim"
	"github.com/gpunetsim/gpunetsim/unit"
)

// C2CSpec describes a chip-to-chip link between a CPU and its GPU inside
// one package (NVLink-C2C between a Grace CPU and its Hopper GPU): memory
// on the far side of it is reached coherently, but every access crosses
// the link. On false means there is no such link (every other preset: a
// dGPU behind PCIe, or an APU whose CPU and GPU share one memory). A
// strategy that runs its GPU in dGPU mode (write-back L2, not probed) on
// such a node keeps the link as the GPU's path to host memory.
type C2CSpec struct {
	On        bool      `toml:"on" doc:"a CPU-GPU chip-to-chip link (NVLink-C2C) joins each GPU to its CPU: host memory (the CPU's) and GPU memory (the GPU's HBM) are two memories in one coherent address space, and GPU accesses to host memory, CPU accesses to GPU memory and the NIC's DMA to GPU memory cross the link, with its latency and one byte server per direction; false = no such link (a dGPU behind PCIe, or an APU's one shared memory), the other c2c values unused" src:"DEFAULT"`
	Bandwidth unit.Rate `toml:"bandwidth" doc:"chip-to-chip link rate per direction (c2c.on)" src:"DEFAULT"`
	Latency   sim.Time  `toml:"latency" doc:"one-way latency of a chip-to-chip crossing (link and the coherent fabric's ports at both ends), on top of the far memory's own latency (c2c.on)" src:"DEFAULT"`
	// Arrays is where the workloads' arrays live on a superchip: a
	// placement choice of the program (cudaMalloc or malloc), not a
	// hardware value.
	Arrays string `toml:"arrays" doc:"where the workloads' arrays live on a superchip (c2c.on): hbm (cudaMalloc: the GPU's HBM) or host (malloc'd host memory, the Grace's LPDDR5X): with host, every buffer a GPU strategy allocates for its data lies in host memory, so the GPU's kernel array traffic crosses the link (its bandwidth per direction, half the bytes each way) and takes the host memory's bandwidth (cpu.dram_bandwidth), its loads and stores of them cross it too, and the CPU and the NIC reach them without crossing it (the device-shmem and device-verbs strategies' symmetric heaps and segments stay GPU memory, as NVSHMEM's cudaMalloc'd heap); a placement choice, not a hardware value" src:"DEFAULT"`
}

// Placements of the workloads' arrays on a superchip (C2CSpec.Arrays).
const (
	ArraysHBM  = "hbm"
	ArraysHost = "host"
)

// ArraysInHost reports whether the workloads' arrays live in host memory
// beyond the link.
func (s C2CSpec) ArraysInHost() bool { return s.On && s.Arrays == ArraysHost }

// Validate reports every invalid field.
func (s C2CSpec) Validate() error {
	var errs []error
	if s.Bandwidth <= 0 {
		errs = append(errs, fmt.Errorf("c2c.bandwidth = %v: must be > 0", s.Bandwidth))
	}
	if s.Latency < 0 || s.Latency > sim.Millisecond {
		errs = append(errs, fmt.Errorf("c2c.latency = %v: must be in [0, 1ms]", s.Latency))
	}
	switch {
	case s.Arrays != ArraysHBM && s.Arrays != ArraysHost:
		errs = append(errs, fmt.Errorf("c2c.arrays = %q: must be %s or %s", s.Arrays, ArraysHBM, ArraysHost))
	case s.Arrays == ArraysHost && !s.On:
		errs = append(errs, fmt.Errorf("c2c.arrays = %s: needs c2c.on = true (host memory beyond NVLink-C2C; elsewhere a GPU strategy's arrays live in GPU memory)", s.Arrays))
	}
	return errors.Join(errs...)
}

// DefaultC2C is a GH200 superchip's NVLink-C2C: 900 GB/s both directions
// together, 450 GB/s per direction (NVIDIA GH200 datasheet). Its latency
// is no published figure: 200 ns one way is a choice between an
// on-package SerDes crossing (tens of ns) and a PCIe Gen5 root-complex
// crossing (250 ns here), to be swept. Presets without the link carry
// these values switched off (On false).
func DefaultC2C() C2CSpec {
	return C2CSpec{Bandwidth: unit.Rate(450e9), Latency: 200 * sim.Nanosecond, Arrays: ArraysHBM}
}

// NewC2C returns the link of a C2C spec: a full-duplex byte server per
// direction with the spec's one-way latency and no per-transaction issue
// cost (a load/store fabric, not a DMA protocol). Up is GPU → CPU side
// (the GPU's stores to host memory, the data of a CPU or NIC read of GPU
// memory), Down is CPU side → GPU.
func NewC2C(s C2CSpec) *Link {
	l := New(Spec{Latency: s.Latency, Bandwidth: s.Bandwidth, MPS: 4 * unit.KiB, MaxReadReq: 4 * unit.KiB, P2PReadPenalty: 1})
	l.c2c = true
	return l
}

// Behind returns when the data of a read of n bytes whose request left the
// near side of l at now has arrived, for a read that must first cross
// c2c (a NIC's read of GPU memory on a C2C node: PCIe to the CPU's root
// complex, then C2C to the GPU's memory). near is when the read would
// complete over l alone; the C2C read starts when the request reaches
// l's far end, and its data streams on into l as it arrives (cut-through),
// so the later of the two pipelines' ends decides, each with the other
// hop's latency added.
func Behind(l, c2c *Link, now, near sim.Time, n unit.Bytes) sim.Time {
	ls, cs := l.spec, c2c.spec
	far := c2c.Read(Down, now+ls.Overhead+ls.Latency, n, false)
	return max(near+2*cs.Latency, far+ls.Latency)
}
