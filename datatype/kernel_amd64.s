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

// func transpose16AVX(user, packed unsafe.Pointer, groups, rows, rowStride, pf int, pack bool)
//
// transpose16AVX moves groups×4 adjacent columns of rows 16-byte elements
// (rowStride bytes between rows; the packed stream holds column after
// column, rows×16 bytes each) four columns at a time: one row's 64 bytes
// move as two 32-byte loads (pack) or stores (unpack) in the user buffer
// and four 16-byte stores (loads) in the four packed columns. While it
// works on row i of a group it prefetches row i+pf of the user buffer;
// over the last pf rows of a group it prefetches the first rows of the
// next group instead, and over the last group's last pf rows nothing, so
// every prefetched address is a byte the kernel itself accesses (a
// column's rows far apart defeat the hardware prefetchers: each row is a
// different page). Only the bytes of the elements are read and written.
TEXT ·transpose16AVX(SB), NOSPLIT, $0-49
	MOVQ user+0(FP), SI
	MOVQ packed+8(FP), DI
	MOVQ groups+16(FP), R11
	MOVQ rows+24(FP), R12
	MOVQ rowStride+32(FP), R9
	MOVQ pf+40(FP), R13
	MOVBLZX pack+48(FP), R15
	TESTQ R11, R11
	JLE  tdone
	TESTQ R12, R12
	JLE  tdone
	CMPQ R13, R12
	JLE  pfok
	MOVQ R12, R13          // pf ≤ rows
pfok:
	MOVQ R12, R8
	SHLQ $4, R8            // R8 = column bytes = rows·16
	LEAQ (R8)(R8*2), R10   // R10 = 3 column bytes
	MOVQ R13, R14
	IMULQ R9, R14          // R14 = pf rows ahead, in bytes
	MOVQ R14, DX
	MOVQ R12, AX
	IMULQ R9, AX
	SUBQ AX, DX
	ADDQ $64, DX           // DX = offset of the next group's row i+pf−rows

tgroup:
	MOVQ SI, AX            // AX: user row i of this group
	MOVQ DI, BX            // BX: packed row i of the group's first column
	MOVQ R12, CX
	SUBQ R13, CX           // rows−pf rows prefetch within the group
	JZ   ttail
tnear:
	PREFETCHT0 (AX)(R14*1)
	TESTQ R15, R15
	JZ   unear
	VMOVDQU 0(AX), Y0
	VMOVDQU 32(AX), Y1
	VMOVDQU X0, 0(BX)
	VEXTRACTI128 $1, Y0, (BX)(R8*1)
	VMOVDQU X1, (BX)(R8*2)
	VEXTRACTI128 $1, Y1, (BX)(R10*1)
	JMP  nnext
unear:
	VMOVDQU 0(BX), X0
	VINSERTI128 $1, (BX)(R8*1), Y0, Y0
	VMOVDQU (BX)(R8*2), X1
	VINSERTI128 $1, (BX)(R10*1), Y1, Y1
	VMOVDQU Y0, 0(AX)
	VMOVDQU Y1, 32(AX)
nnext:
	ADDQ R9, AX
	ADDQ $16, BX
	DECQ CX
	JNZ  tnear

ttail:
	MOVQ R13, CX           // the last pf rows
	TESTQ CX, CX
	JZ   tgnext
tfar:
	CMPQ R11, $1
	JE   tnopf             // last group: nothing left to prefetch
	PREFETCHT0 (AX)(DX*1)
tnopf:
	TESTQ R15, R15
	JZ   ufar
	VMOVDQU 0(AX), Y0
	VMOVDQU 32(AX), Y1
	VMOVDQU X0, 0(BX)
	VEXTRACTI128 $1, Y0, (BX)(R8*1)
	VMOVDQU X1, (BX)(R8*2)
	VEXTRACTI128 $1, Y1, (BX)(R10*1)
	JMP  fnext
ufar:
	VMOVDQU 0(BX), X0
	VINSERTI128 $1, (BX)(R8*1), Y0, Y0
	VMOVDQU (BX)(R8*2), X1
	VINSERTI128 $1, (BX)(R10*1), Y1, Y1
	VMOVDQU Y0, 0(AX)
	VMOVDQU Y1, 32(AX)
fnext:
	ADDQ R9, AX
	ADDQ $16, BX
	DECQ CX
	JNZ  tfar

tgnext:
	ADDQ $64, SI
	LEAQ (DI)(R8*4), DI
	DECQ R11
	JNZ  tgroup
	VZEROUPPER

tdone:
	RET

// func memcpyAVX(d, s unsafe.Pointer, n int)
//
// memcpyAVX copies n ≥ 256 bytes from s to d (which must not overlap) the
// way glibc's memcpy copies sizes between its rep-movsb and non-temporal
// thresholds (L(more_8x_vec) → L(loop_4x_vec_forward) in
// memmove-vec-unaligned-erms.S): the first vector and the last four are
// loaded up front, the destination is aligned to 32 bytes, and a loop moves
// 128 bytes per iteration with unaligned loads and aligned, ordinary
// (temporal) stores, so the copy stays in the caches; the saved tail is
// stored last.
TEXT ·memcpyAVX(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ s+8(FP), SI
	MOVQ n+16(FP), CX
	LEAQ (DI)(CX*1), R9    // end of d
	VMOVDQU 0(SI), Y0      // head
	VMOVDQU -128(SI)(CX*1), Y1
	VMOVDQU -96(SI)(CX*1), Y2
	VMOVDQU -64(SI)(CX*1), Y3
	VMOVDQU -32(SI)(CX*1), Y4
	VMOVDQU Y0, 0(DI)
	MOVQ DI, AX
	ANDQ $31, AX
	MOVQ $32, BX
	SUBQ AX, BX            // 1–32 bytes to the next 32-byte boundary
	ADDQ BX, DI
	ADDQ BX, SI
	SUBQ BX, CX
	CMPQ CX, $128
	JBE  mtail

mloop:
	VMOVDQU 0(SI), Y5
	VMOVDQU 32(SI), Y6
	VMOVDQU 64(SI), Y7
	VMOVDQU 96(SI), Y8
	VMOVDQA Y5, 0(DI)
	VMOVDQA Y6, 32(DI)
	VMOVDQA Y7, 64(DI)
	VMOVDQA Y8, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $128, CX
	CMPQ CX, $128
	JA   mloop

mtail:
	VMOVDQU Y1, -128(R9)
	VMOVDQU Y2, -96(R9)
	VMOVDQU Y3, -64(R9)
	VMOVDQU Y4, -32(R9)
	VZEROUPPER
	RET
