//go:build amd64 && !race && !purego

#include "textflag.h"

// func cpuAVX() bool
//
// cpuAVX reports whether the CPU supports AVX and the operating system
// saves the YMM registers (CPUID.1:ECX.OSXSAVE and AVX, XCR0 bits 1 and 2).
TEXT ·cpuAVX(SB), NOSPLIT, $0-1
	MOVL $1, AX
	XORL CX, CX
	CPUID
	ANDL $0x18000000, CX // OSXSAVE (bit 27) and AVX (bit 28)
	CMPL CX, $0x18000000
	JNE  no
	XORL CX, CX
	XGETBV
	ANDL $6, AX          // XMM and YMM state enabled
	CMPL AX, $6
	JNE  no
	MOVB $1, ret+0(FP)
	RET
no:
	MOVB $0, ret+0(FP)
	RET

// func stridedAVX(d unsafe.Pointer, dstride int, s unsafe.Pointer, sstride, count, blen int)
//
// stridedAVX copies count blocks of blen ≥ 32 bytes from s (sstride apart)
// to d (dstride apart), 64 bytes at a time through two YMM registers; the
// last 1–63 bytes of a block move as one or two 32-byte moves ending at the
// block's end (overlapping bytes already copied), so no byte outside a
// block is read or written. Blocks are copied in order.
TEXT ·stridedAVX(SB), NOSPLIT, $0-48
	MOVQ d+0(FP), DI
	MOVQ dstride+8(FP), R8
	MOVQ s+16(FP), SI
	MOVQ sstride+24(FP), R9
	MOVQ count+32(FP), CX
	MOVQ blen+40(FP), R10
	TESTQ CX, CX
	JLE  done

block:
	MOVQ SI, AX
	MOVQ DI, BX
	MOVQ R10, DX
	CMPQ DX, $64
	JB   tail

loop64:
	VMOVDQU 0(AX), Y0
	VMOVDQU 32(AX), Y1
	VMOVDQU Y0, 0(BX)
	VMOVDQU Y1, 32(BX)
	ADDQ $64, AX
	ADDQ $64, BX
	SUBQ $64, DX
	CMPQ DX, $64
	JAE  loop64

tail:
	// 0 ≤ DX < 64 bytes left; the block is at least 32 bytes long, so
	// [AX+DX-32, AX+DX) lies inside it.
	TESTQ DX, DX
	JZ   next
	CMPQ DX, $32
	JBE  last32
	VMOVDQU 0(AX), Y0
	VMOVDQU Y0, 0(BX)

last32:
	VMOVDQU -32(AX)(DX*1), Y1
	VMOVDQU Y1, -32(BX)(DX*1)

next:
	ADDQ R9, SI
	ADDQ R8, DI
	DECQ CX
	JNZ  block
	VZEROUPPER

done:
	RET
