// Package mem models a node's physical memory as real bytes: allocations in
// one address space (host and GPU pools in dGPU mode, one pool in APU mode),
// functional reads and writes, and watches that wake pollers when a word
// changes. Payload-free memories keep addresses and timing but no bytes, for
// very large runs.
//
// Spec: hardware.md §5 (memory modes and the visibility rules the caches
// above it enforce). Left out: virtual memory, pages and TLBs; the caches
// themselves live with their agents (hw/gpu, hw/cpu).
package mem
