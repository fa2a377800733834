// Package mem models a node's physical memory as real bytes: allocations in
// one address space (host and GPU pools in dGPU mode, one pool in APU mode),
// functional reads and writes, and watches that wake pollers when a word
// changes. Payload-free memories keep addresses and timing but no bytes, for
// very large runs.
//
// Spec: the dissertation (memory modes and the visibility rules the caches
// above it enforce). Left out: virtual memory, pages and TLBs; the caches
// themselves live with their agents (hw/gpu, hw/cpu).
//
// The simulator's own memory: a functional allocation's bytes are a Go
// slice made on first access, on ordinary 4 KiB pages (transparent huge
// pages stalled in compaction), and one of 4 MiB or more is populated by
// the kernel from another goroutine (MADV_POPULATE_WRITE) so that the
// first-touch faults of a gigabyte of node memory run on the other core.
// A Snapshot keeps a range's bytes of one moment without copying them
// until the range is reached (every access goes through Bytes), so a
// NIC's payload read and landing are one copy instead of two. A ring's
// receive slots (ScratchSlots) keep their bytes in a few buffers that go
// from each consumed slot to the next, so that landing a payload neither
// faults pages in nor gives them back.
package mem
