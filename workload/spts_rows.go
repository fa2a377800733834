package workload

import (
	"encoding/binary"
	"math"

	"github.com/gpunetsim/gpunetsim/hw/mem"
)

// spTSRows is one node's block of the matrix in node memory: CSR row
// offsets (8 B, relative to the block), column indices (4 B), values and
// the right-hand side (fp64).
type spTSRows struct {
	lo, hi                int
	rowPtr, col, val, rhs mem.Addr
}

// allocRows places rows [lo, hi) of pl's matrix and right-hand side in
// pool of m, with their bytes when m is functional.
func allocRows(m *mem.Memory, pool mem.Pool, pl *spTSPlan, lo, hi int) spTSRows {
	a := pl.a
	base := a.RowPtr[lo]
	nnz := uint64(a.RowPtr[hi] - base)
	r := spTSRows{lo: lo, hi: hi,
		rowPtr: m.Alloc(pool, 8*uint64(hi-lo+1), "spts.rowptr"), col: m.Alloc(pool, 4*max(1, nnz), "spts.col"),
		val: m.Alloc(pool, 8*max(1, nnz), "spts.val"), rhs: m.Alloc(pool, 8*uint64(max(1, hi-lo)), "spts.y")}
	if !m.Functional() {
		return r
	}
	for i := lo; i <= hi; i++ {
		m.Store64(r.rowPtr+mem.Addr(8*(i-lo)), uint64(a.RowPtr[i]-base))
	}
	var b [4]byte
	for k := range nnz {
		binary.LittleEndian.PutUint32(b[:], uint32(a.Col[uint64(base)+k]))
		m.Write(r.col+mem.Addr(4*k), b[:])
		m.Store64(r.val+mem.Addr(8*k), math.Float64bits(a.Val[uint64(base)+k]))
	}
	for i := lo; i < hi; i++ {
		m.Store64(r.rhs+mem.Addr(8*(i-lo)), math.Float64bits(pl.y[i]))
	}
	return r
}

// offset returns row i's first nonzero's index in the block's arrays.
func (r spTSRows) offset(pl *spTSPlan, i int) uint64 {
	return uint64(pl.a.RowPtr[i] - pl.a.RowPtr[r.lo])
}

// row returns row i's columns, values and right-hand side as node memory
// holds them (the host copy in a payload-free run, whose arrays carry no
// bytes).
func (r spTSRows) row(m *mem.Memory, pl *spTSPlan, i int) ([]int32, []float64, float64) {
	cs, vs := pl.a.Row(i)
	if !m.Functional() {
		return cs, vs, pl.y[i]
	}
	off := r.offset(pl, i)
	raw := make([]byte, 4*len(cs))
	m.Read(r.col+mem.Addr(4*off), raw)
	cols, vals := make([]int32, len(cs)), make([]float64, len(cs))
	for k := range cols {
		cols[k] = int32(binary.LittleEndian.Uint32(raw[4*k:]))
		vals[k] = math.Float64frombits(m.Load64(r.val + mem.Addr(8*(off+uint64(k)))))
	}
	return cols, vals, math.Float64frombits(m.Load64(r.rhs + mem.Addr(8*(i-r.lo))))
}
