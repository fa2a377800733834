// Package datatype implements MPI derived datatypes: the constructors of
// MPI-3 §4.1, type maps, full and partial pack/unpack, segments with
// catch-up and reset, and checkpoints, as specified in
// the SC'19 paper. It imports only the standard
// library; the simulator's NIC handlers, host-unpack baseline and datatype
// workloads build on it, and so can anyone who needs MPI-style
// non-contiguous layouts in Go.
//
// # Usage
//
//	t, err := datatype.Vector(4, 2, 3, datatype.Float64()) // or datatype.Parse("vector(4,2,3)<float64>")
//	c := t.Commit()
//	n, err := c.Pack(packed, user, origin, count)   // user[origin] is the MPI buffer address
//	n, err = c.Unpack(user, origin, packed, count)
//
//	seg, err := c.NewSegment(count)                 // partial processing, e.g. per packet
//	_, err = seg.Unpack(user, origin, payload, off, off+len(payload))
//	blocks, err := seg.BlockList(off, off+k, blocks[:0]) // regions only, for DMA-issuing handlers
//
// Buffers are byte slices plus an origin index, so types with negative lower
// bounds or displacements address bytes before the origin. Every operation
// checks, once and before touching memory, that all bytes it will read or
// write lie inside the slices, and returns an error wrapping ErrBuffer
// otherwise; the copy loops then run without bounds checks.
//
// # Types
//
// A Type is immutable. Named types (Byte, Int8 … Uint64, Float32, Float64,
// Complex64, Complex128) are values returned by functions. Constructors
// (Contiguous, Vector, HVector, Indexed, HIndexed, IndexedBlock,
// HIndexedBlock, Struct, Subarray, Resized, Dup) validate their arguments
// (ErrNegative, ErrMismatch, ErrSubarray, ErrOverflow: every size, bound and
// displacement must stay within ±2^61) and compute size, lb, ub, extent,
// true lb/ub and alignment the way MPICH 4.0.2 does:
//
//   - Bounds use MPICH's formulas. A vector spans (blocklen−1)·extent per
//     block even for blocklen 0, so vector(3,0,2)<float64> has extent 32
//     (MPICH) rather than 0 (Open MPI); indexed and struct ignore empty
//     blocks; a type whose every block is empty has lb = ub = 0.
//   - Struct extents are padded up to a multiple of the largest alignment of
//     the elementary types inside (an elementary type is aligned to its
//     size, complex types to their component size), and that alignment is
//     inherited through every constructor, including subarray and resized.
//     So struct_of_subarrays has extent 368 (MPICH), not 364 (Open MPI).
//     The padding applies to struct only, as in both libraries.
//   - Subarray has lb 0 and extent ∏sizes·extent(old); its true bounds come
//     from the data.
//
// The two cases where MPICH and Open MPI disagree follow MPICH: the
// reference fixtures this package is tested against are MPICH's results,
// and the sPIN datatypes paper's handlers build on MPITypes, MPICH's
// datatype-processing library.
//
// Blocks iterates over the flattened type map (offset, length) in pack
// order, merging entries adjacent in memory and stream (the iovec list);
// it walks the type description directly and is the package's reference
// interpreter. String and Parse convert to and from the fixtures' text form
// (`vector(4,2,3)<float64>`, `struct(2;1,1;0,8;float64,int8)`, ...).
//
// # Commit: the loop tree
//
// Commit compiles a type into a tree of nodes — the package's dataloops —
// of seven kinds. Leaf kinds describe contiguous blocks directly: a single
// block (kBlock), count blocks of equal length at a fixed stride (kVecB), at
// listed offsets (kIdxB), or blocks of listed lengths and offsets (kListB).
// Loop kinds place child nodes: count copies at a stride (kRep), copies at
// listed offsets (kIdx), or different children at listed offsets (kList).
// Every node carries a base displacement, its packed size, its raw block
// count and the memory span it touches.
//
// Building the tree normalizes as it goes (the SC'19 paper):
//   - empty subtrees (size 0) disappear; a repetition of 1 is its child;
//   - contiguous runs merge: copies of a block whose stride equals its length
//     become one longer block (contig(n)<float64> is one block; so is any
//     vector whose stride equals its blocklength);
//   - nested repetitions whose strides chain (outer stride = inner count ×
//     inner stride) flatten into one;
//   - offset lists that are arithmetic progressions become strided nodes;
//   - struct and indexed blocks that are plain blocks become one block list,
//     merging neighbours; identical children become an indexed node;
//   - resized and dup vanish (they only change the extent their parent
//     uses), and subarray becomes its nest of strided nodes plus a base;
//   - equal offset lists are shared (LAMMPS' per-property lists), so the
//     kernels keep one copy in cache.
//
// Pack and Unpack walk the tree recursively with the buffer as a base
// pointer plus integer offsets; the count loop is one more repetition node,
// built on the stack per call so it merges like any other level. Leaves
// run specialized kernels:
//   - fixed-width moves for 1, 2, 4, 8, 12, 16, 24, 32, 48 and 64-byte
//     blocks, strided or indexed: up to 12 bytes through general registers
//     (loops unrolled four times), 16 to 64 bytes as 16-byte SSE moves of
//     [16]byte values (wider array assignments would call memmove, and
//     temporaries of array type would be staged on the stack);
//   - 4-byte strided blocks gathered two at a time (two 8-byte loads, one
//     8-byte store), and 4-byte indexed blocks stored in pairs;
//   - on amd64 with AVX, strided blocks of 32 to 1024 bytes (vectors, and
//     the passes of the tiled kernels below) go to one assembly loop
//     (kernel_amd64.s) that moves 64 bytes per step through two 32-byte
//     registers and ends each block with a 32-byte move aligned to the
//     block's end, reading and writing nothing outside the block. Go has
//     no 32-byte moves, and the code it generates for unrolled 16-byte
//     moves spends more instructions on addresses than on data: the
//     assembly loop packs 64 and 256-byte blocks about 1.4× faster than
//     the Go kernels or a memmove per block. Builds without it (other
//     architectures, the purego tag, or -race, whose detector cannot see
//     assembly accesses) use the Go kernels;
//   - copy (memmove) per block for longer blocks (and for blocks over 64
//     bytes without the assembly kernel), and a single copy for a count of
//     a contiguous type.
//
// Two shapes get cache-aware kernels, because a block-by-block walk in
// stream order touches one cache line per block:
//   - transposes — a repetition of strided columns that sit side by side
//     (stride = block length) and do not overlap, the FFT2D receive type —
//     run in tiles of 64-byte row segments, so each line is touched once per
//     tile (8× the stream-order speed for FFT2D);
//   - repetitions of short block lists (arrays of structs, up to 8 blocks)
//     run block by block over tiles of 128 repetitions, each pass a strided
//     copy of one fixed block length. Unpack uses this only when no two
//     blocks overlap, since it changes the order of writes.
//
// Nothing allocates after Commit.
//
// # Segments, catch-up, reset, block lists
//
// A Segment (the SC'19 paper) holds a stack of frames — node, current
// child or block index, instance origin — plus the stream position. Process
// (and Pack, Unpack, BlockList) handles stream bytes [first, last):
//   - first > position: catch-up without emitting. Within the current leaf
//     run this is leaf arithmetic; further, the stack is rebuilt by an
//     arithmetic descent from the root (division at strided levels, binary
//     search over prefix sums at list levels), O(depth·log) whatever the
//     distance. The number of raw blocks skipped is counted in Stats for the
//     handler cost model (model/spin).
//   - first < position: reset to the initial state, then catch up from 0.
//   - then every region overlapping the range is emitted, clipped to it,
//     with adjacent regions merged; runs of whole uniform blocks go to the
//     bulk kernels.
//
// BlockList returns the same regions without copying, for handlers that
// issue DMA writes.
//
// # For NIC offload
//
// Committed.Shape reports whether count elements normalize to a single
// level of blocks — contiguous, vector, index-block or indexed — the forms
// the specialized handlers of the SC'19 paper take; anything else is
// ShapeGeneral and needs the dataloops. Committed.DataloopBytes estimates
// their NIC memory, Checkpoint.Bytes a checkpoint's, Segment.Stats the
// catch-up work (blocks skipped, resets) a handler did.
//
// # Checkpoints
//
// Segment.Checkpoint snapshots a segment (a deep copy of its frames);
// Committed.Checkpoints runs a segment over a message without emitting and
// snapshots it every Δr stream bytes, as the host does for RO-CP and RW-CP
// (the SC'19 paper). Checkpoints are read-only and hold offsets relative to the
// buffer origin, so they serve any buffer and any number of goroutines.
// Read-only use: CheckpointFor picks the nearest checkpoint at or before
// the packet; Restore copies it into a private scratch segment, which then
// catches up and processes. Progressing use: Checkpoint.Segment makes the
// working copy a vHPU owns and advances in place; on an out-of-order packet
// the working copy is restored from the checkpoint (the master copy).
// Checkpoint.Bytes reports this implementation's checkpoint size; the SC'19
// paper's interval model uses the documents' C = 612 B.
//
// # Performance
//
// Benchmarks (BenchmarkVector, BenchmarkMemcpy, BenchmarkSegmentVector in
// this package; BenchmarkApps and BenchmarkMemcpy in datatype/apps) report
// GB/s of packed data with warm caches and 0 allocations per call: the
// mean (GB/s) and the throughput of the 10th-percentile call (GB/s-p10),
// which on a shared machine is far steadier than the mean. `gpunetsim ddt
// bench` prints the same table beside a memcpy measured in the same run.
// The memcpy is Memcpy, which copies as glibc's memcpy does (ordinary
// stores for sizes where Go's copy uses non-temporal ones), so that
// pack/memcpy ratios compare with the copy a C MPI library makes.
// docs/ddt.md records measured numbers against the MPICH 4.0.2 /
// Open MPI 4.1.4 bar and against MPICH 4.0.2 run on the same machine.
//
// # What it leaves out
//
// darray, MPI_LB/MPI_UB markers, the pair types (MPI_DOUBLE_INT …),
// heterogeneous data representation (external32) and Fortran-specific
// named types. Pack and Unpack copy bytes; they never convert.
package datatype
