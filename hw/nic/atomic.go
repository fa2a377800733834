package nic

import (
	"encoding/binary"
	"math"
)

// applyAtomic computes dst := dst op src element-wise (little-endian
// elements of type t); for CSwap an element is replaced only when it
// equals operand.
func applyAtomic(dst, src []byte, op AtomicOp, t AtomicType, operand uint64) {
	sz := t.Size()
	for i := 0; i+sz <= len(dst) && i+sz <= len(src); i += sz {
		a, b := load(dst[i:], sz), load(src[i:], sz)
		store(dst[i:], sz, combine(a, b, op, t, operand&mask(sz)))
	}
}

func mask(sz int) uint64 {
	if sz == 8 {
		return math.MaxUint64
	}
	return 1<<(8*sz) - 1
}

func load(b []byte, sz int) uint64 {
	switch sz {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

func store(b []byte, sz int, v uint64) {
	switch sz {
	case 1:
		b[0] = byte(v)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(v))
	default:
		binary.LittleEndian.PutUint64(b, v)
	}
}

// signed sign-extends the bits of a signed integer element.
func signed(v uint64, t AtomicType) int64 {
	switch t {
	case Int8:
		return int64(int8(v))
	case Int16:
		return int64(int16(v))
	case Int32:
		return int64(int32(v))
	}
	return int64(v)
}

func bool64(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// combine returns the new element bits for a op b.
func combine(a, b uint64, op AtomicOp, t AtomicType, operand uint64) uint64 {
	switch op {
	case Swap:
		return b
	case CSwap:
		if a == operand {
			return b
		}
		return a
	case Band:
		return a & b
	case Bor:
		return a | b
	case Bxor:
		return a ^ b
	case Land:
		return bool64(a != 0 && b != 0)
	case Lor:
		return bool64(a != 0 || b != 0)
	case Lxor:
		return bool64((a != 0) != (b != 0))
	}
	switch t {
	case Float32:
		x, y := math.Float32frombits(uint32(a)), math.Float32frombits(uint32(b))
		return uint64(math.Float32bits(float32(arith(float64(x), float64(y), op, x < y, x > y))))
	case Float64:
		x, y := math.Float64frombits(a), math.Float64frombits(b)
		return math.Float64bits(arith(x, y, op, x < y, x > y))
	case Int8, Int16, Int32, Int64:
		x, y := signed(a, t), signed(b, t)
		return intArith(a, b, op, x < y, x > y)
	}
	return intArith(a, b, op, a < b, a > b)
}

func arith(x, y float64, op AtomicOp, less, greater bool) float64 {
	switch op {
	case Sum:
		return x + y
	case Prod:
		return x * y
	case Min:
		if greater {
			return y
		}
	case Max:
		if less {
			return y
		}
	}
	return x
}

// intArith works on raw bits: sums and products wrap modulo the element
// size (store truncates), which is right for both signed and unsigned.
func intArith(a, b uint64, op AtomicOp, less, greater bool) uint64 {
	switch op {
	case Sum:
		return a + b
	case Prod:
		return a * b
	case Min:
		if greater {
			return b
		}
	case Max:
		if less {
			return b
		}
	}
	return a
}
