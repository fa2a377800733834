// Package cost holds the instruction-count model of runtime software
// (the dissertation): a software path costs instructions / (IPC × f) on
// the core that runs it, plus the memory, PCIe and MMIO accesses the
// simulation charges separately.
package cost
