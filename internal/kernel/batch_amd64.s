//go:build amd64 && !goexperiment.simd && !purego

#include "textflag.h"

// func gemm4Asm(k, m, add int, a0, a1, a2, a3, b *float64, ldb int, c0, c1, c2, c3 *float64)
// GemmNN on one panel of four rows (gemm_amd64.go). Columns in blocks of eight (two vectors
// per row: eight accumulators Y0–Y7), then four (Y0, Y2, Y4, Y6), then a masked tail of one
// to three (VMASKMOVPD with ·laneMask, which never touches the masked-out memory). Per block,
// the four rows of C are loaded (or zeroed) first, then the inner loop runs p = 0..k−1:
// row p of B (one or two vectors), a_i[p] broadcast for each row i, one fused multiply-add
// per accumulator; then the four rows are stored. Registers: R8–R11 the rows of A, DI the
// base of B, CX its row stride in bytes, R13 = k, AX = p, DX the block's column offset in
// bytes, SI the columns left, BX the running pointer into B (and the rows of C).
TEXT ·gemm4Asm(SB), NOSPLIT, $0-104
	MOVQ k+0(FP), R13
	MOVQ m+8(FP), SI
	MOVQ a0+24(FP), R8
	MOVQ a1+32(FP), R9
	MOVQ a2+40(FP), R10
	MOVQ a3+48(FP), R11
	MOVQ b+56(FP), DI
	MOVQ ldb+64(FP), CX
	SHLQ $3, CX
	XORQ DX, DX


gm8:
	CMPQ SI, $8
	JB   gm4
	MOVQ add+16(FP), BX
	TESTQ BX, BX
	JZ   gm8zero
	MOVQ c0+72(FP), BX
	VMOVUPD (BX)(DX*1), Y0
	VMOVUPD 32(BX)(DX*1), Y1
	MOVQ c1+80(FP), BX
	VMOVUPD (BX)(DX*1), Y2
	VMOVUPD 32(BX)(DX*1), Y3
	MOVQ c2+88(FP), BX
	VMOVUPD (BX)(DX*1), Y4
	VMOVUPD 32(BX)(DX*1), Y5
	MOVQ c3+96(FP), BX
	VMOVUPD (BX)(DX*1), Y6
	VMOVUPD 32(BX)(DX*1), Y7
	JMP  gm8k

gm8zero:
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7

gm8k:
	LEAQ (DI)(DX*1), BX
	XORQ AX, AX

gm8loop:
	VMOVUPD (BX), Y8
	VMOVUPD 32(BX), Y9
	VBROADCASTSD (R8)(AX*8), Y10
	VFMADD231PD Y8, Y10, Y0
	VFMADD231PD Y9, Y10, Y1
	VBROADCASTSD (R9)(AX*8), Y11
	VFMADD231PD Y8, Y11, Y2
	VFMADD231PD Y9, Y11, Y3
	VBROADCASTSD (R10)(AX*8), Y12
	VFMADD231PD Y8, Y12, Y4
	VFMADD231PD Y9, Y12, Y5
	VBROADCASTSD (R11)(AX*8), Y13
	VFMADD231PD Y8, Y13, Y6
	VFMADD231PD Y9, Y13, Y7
	ADDQ CX, BX
	INCQ AX
	CMPQ AX, R13
	JB   gm8loop
	MOVQ c0+72(FP), BX
	VMOVUPD Y0, (BX)(DX*1)
	VMOVUPD Y1, 32(BX)(DX*1)
	MOVQ c1+80(FP), BX
	VMOVUPD Y2, (BX)(DX*1)
	VMOVUPD Y3, 32(BX)(DX*1)
	MOVQ c2+88(FP), BX
	VMOVUPD Y4, (BX)(DX*1)
	VMOVUPD Y5, 32(BX)(DX*1)
	MOVQ c3+96(FP), BX
	VMOVUPD Y6, (BX)(DX*1)
	VMOVUPD Y7, 32(BX)(DX*1)
	ADDQ $64, DX
	SUBQ $8, SI
	JMP  gm8

gm4:
	CMPQ SI, $4
	JB   gmtail
	MOVQ add+16(FP), BX
	TESTQ BX, BX
	JZ   gm4zero
	MOVQ c0+72(FP), BX
	VMOVUPD (BX)(DX*1), Y0
	MOVQ c1+80(FP), BX
	VMOVUPD (BX)(DX*1), Y2
	MOVQ c2+88(FP), BX
	VMOVUPD (BX)(DX*1), Y4
	MOVQ c3+96(FP), BX
	VMOVUPD (BX)(DX*1), Y6
	JMP  gm4k

gm4zero:
	VXORPD Y0, Y0, Y0
	VXORPD Y2, Y2, Y2
	VXORPD Y4, Y4, Y4
	VXORPD Y6, Y6, Y6

gm4k:
	LEAQ (DI)(DX*1), BX
	XORQ AX, AX

gm4loop:
	VMOVUPD (BX), Y8
	VBROADCASTSD (R8)(AX*8), Y10
	VFMADD231PD Y8, Y10, Y0
	VBROADCASTSD (R9)(AX*8), Y11
	VFMADD231PD Y8, Y11, Y2
	VBROADCASTSD (R10)(AX*8), Y12
	VFMADD231PD Y8, Y12, Y4
	VBROADCASTSD (R11)(AX*8), Y13
	VFMADD231PD Y8, Y13, Y6
	ADDQ CX, BX
	INCQ AX
	CMPQ AX, R13
	JB   gm4loop
	MOVQ c0+72(FP), BX
	VMOVUPD Y0, (BX)(DX*1)
	MOVQ c1+80(FP), BX
	VMOVUPD Y2, (BX)(DX*1)
	MOVQ c2+88(FP), BX
	VMOVUPD Y4, (BX)(DX*1)
	MOVQ c3+96(FP), BX
	VMOVUPD Y6, (BX)(DX*1)
	ADDQ $32, DX
	SUBQ $4, SI

gmtail:
	TESTQ SI, SI
	JZ   gmdone
	SHLQ $5, SI
	LEAQ ·laneMask(SB), R12
	VMOVUPD (R12)(SI*1), Y15
	MOVQ add+16(FP), BX
	TESTQ BX, BX
	JZ   gmtzero
	MOVQ c0+72(FP), BX
	VMASKMOVPD (BX)(DX*1), Y15, Y0
	MOVQ c1+80(FP), BX
	VMASKMOVPD (BX)(DX*1), Y15, Y2
	MOVQ c2+88(FP), BX
	VMASKMOVPD (BX)(DX*1), Y15, Y4
	MOVQ c3+96(FP), BX
	VMASKMOVPD (BX)(DX*1), Y15, Y6
	JMP  gmtk

gmtzero:
	VXORPD Y0, Y0, Y0
	VXORPD Y2, Y2, Y2
	VXORPD Y4, Y4, Y4
	VXORPD Y6, Y6, Y6

gmtk:
	LEAQ (DI)(DX*1), BX
	XORQ AX, AX

gmtloop:
	VMASKMOVPD (BX), Y15, Y8
	VBROADCASTSD (R8)(AX*8), Y10
	VFMADD231PD Y8, Y10, Y0
	VBROADCASTSD (R9)(AX*8), Y11
	VFMADD231PD Y8, Y11, Y2
	VBROADCASTSD (R10)(AX*8), Y12
	VFMADD231PD Y8, Y12, Y4
	VBROADCASTSD (R11)(AX*8), Y13
	VFMADD231PD Y8, Y13, Y6
	ADDQ CX, BX
	INCQ AX
	CMPQ AX, R13
	JB   gmtloop
	MOVQ c0+72(FP), BX
	VMASKMOVPD Y0, Y15, (BX)(DX*1)
	MOVQ c1+80(FP), BX
	VMASKMOVPD Y2, Y15, (BX)(DX*1)
	MOVQ c2+88(FP), BX
	VMASKMOVPD Y4, Y15, (BX)(DX*1)
	MOVQ c3+96(FP), BX
	VMASKMOVPD Y6, Y15, (BX)(DX*1)

gmdone:
	VZEROUPPER
	RET

// func gemmNT43Asm(k, add, ni, nj int, a0, a1, a2, a3, b0, b1, b2, c0, c1, c2, c3 *float64)
// GemmNT on one block of four rows of A and three rows of B (batch_amd64.go): twelve vector
// accumulators Y0–Y11 (Y(3i+j) for row i of A and row j of B) over the k entries, four per
// step. The last k mod 4 entries come first, by masked loads (zeros in the other lanes) into
// the accumulators themselves, so that the main loop needs no tail: Y12–Y14 hold the three
// vectors of B, Y15 the vector of A (or the mask). Then each accumulator's four lanes are
// summed (VEXTRACTF128, VADDPD, VHADDPD) and, for i < ni and j < nj only, stored (add ≠ 0:
// added) at c_i[j]; rows and columns beyond them (a partial block, whose pointers repeat the
// last real row) are computed and dropped. Registers: R8–R11 the rows of A, R12, R13, DI
// those of B, AX the byte offset, CX the bytes of the full vectors.
TEXT ·gemmNT43Asm(SB), NOSPLIT, $0-120
	MOVQ k+0(FP), CX
	MOVQ a0+32(FP), R8
	MOVQ a1+40(FP), R9
	MOVQ a2+48(FP), R10
	MOVQ a3+56(FP), R11
	MOVQ b0+64(FP), R12
	MOVQ b1+72(FP), R13
	MOVQ b2+80(FP), DI
	MOVQ CX, DX
	ANDQ $3, DX
	ANDQ $-4, CX
	SHLQ $3, CX
	TESTQ DX, DX
	JNZ  ntmtail

	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y10, Y10, Y10
	VXORPD Y11, Y11, Y11
	JMP  ntmain

ntmtail:
	SHLQ $5, DX
	LEAQ ·laneMask(SB), SI
	VMOVUPD (SI)(DX*1), Y15
	VMASKMOVPD (R12)(CX*1), Y15, Y12
	VMASKMOVPD (R13)(CX*1), Y15, Y13
	VMASKMOVPD (DI)(CX*1), Y15, Y14
	VMASKMOVPD (R8)(CX*1), Y15, Y0
	VMULPD Y13, Y0, Y1
	VMULPD Y14, Y0, Y2
	VMULPD Y12, Y0, Y0
	VMASKMOVPD (R9)(CX*1), Y15, Y3
	VMULPD Y13, Y3, Y4
	VMULPD Y14, Y3, Y5
	VMULPD Y12, Y3, Y3
	VMASKMOVPD (R10)(CX*1), Y15, Y6
	VMULPD Y13, Y6, Y7
	VMULPD Y14, Y6, Y8
	VMULPD Y12, Y6, Y6
	VMASKMOVPD (R11)(CX*1), Y15, Y9
	VMULPD Y13, Y9, Y10
	VMULPD Y14, Y9, Y11
	VMULPD Y12, Y9, Y9

ntmain:
	XORQ AX, AX

ntloop:
	CMPQ AX, CX
	JAE  ntreduce
	VMOVUPD (R12)(AX*1), Y12
	VMOVUPD (R13)(AX*1), Y13
	VMOVUPD (DI)(AX*1), Y14
	VMOVUPD (R8)(AX*1), Y15
	VFMADD231PD Y12, Y15, Y0
	VFMADD231PD Y13, Y15, Y1
	VFMADD231PD Y14, Y15, Y2
	VMOVUPD (R9)(AX*1), Y15
	VFMADD231PD Y12, Y15, Y3
	VFMADD231PD Y13, Y15, Y4
	VFMADD231PD Y14, Y15, Y5
	VMOVUPD (R10)(AX*1), Y15
	VFMADD231PD Y12, Y15, Y6
	VFMADD231PD Y13, Y15, Y7
	VFMADD231PD Y14, Y15, Y8
	VMOVUPD (R11)(AX*1), Y15
	VFMADD231PD Y12, Y15, Y9
	VFMADD231PD Y13, Y15, Y10
	VFMADD231PD Y14, Y15, Y11
	ADDQ $32, AX
	JMP  ntloop

ntreduce:
	VEXTRACTF128 $1, Y0, X12
	VADDPD X12, X0, X0
	VHADDPD X0, X0, X0
	VEXTRACTF128 $1, Y1, X12
	VADDPD X12, X1, X1
	VHADDPD X1, X1, X1
	VEXTRACTF128 $1, Y2, X12
	VADDPD X12, X2, X2
	VHADDPD X2, X2, X2
	VEXTRACTF128 $1, Y3, X12
	VADDPD X12, X3, X3
	VHADDPD X3, X3, X3
	VEXTRACTF128 $1, Y4, X12
	VADDPD X12, X4, X4
	VHADDPD X4, X4, X4
	VEXTRACTF128 $1, Y5, X12
	VADDPD X12, X5, X5
	VHADDPD X5, X5, X5
	VEXTRACTF128 $1, Y6, X12
	VADDPD X12, X6, X6
	VHADDPD X6, X6, X6
	VEXTRACTF128 $1, Y7, X12
	VADDPD X12, X7, X7
	VHADDPD X7, X7, X7
	VEXTRACTF128 $1, Y8, X12
	VADDPD X12, X8, X8
	VHADDPD X8, X8, X8
	VEXTRACTF128 $1, Y9, X12
	VADDPD X12, X9, X9
	VHADDPD X9, X9, X9
	VEXTRACTF128 $1, Y10, X12
	VADDPD X12, X10, X10
	VHADDPD X10, X10, X10
	VEXTRACTF128 $1, Y11, X12
	VADDPD X12, X11, X11
	VHADDPD X11, X11, X11
	MOVQ add+8(FP), SI
	MOVQ ni+16(FP), R8
	MOVQ nj+24(FP), R9
	MOVQ c0+88(FP), BX
	TESTQ SI, SI
	JZ   ntst00
	VADDSD 0(BX), X0, X0

ntst00:
	VMOVSD X0, 0(BX)
	CMPQ R9, $2
	JB   ntrow0
	TESTQ SI, SI
	JZ   ntst01
	VADDSD 8(BX), X1, X1

ntst01:
	VMOVSD X1, 8(BX)
	CMPQ R9, $3
	JB   ntrow0
	TESTQ SI, SI
	JZ   ntst02
	VADDSD 16(BX), X2, X2

ntst02:
	VMOVSD X2, 16(BX)

ntrow0:
	CMPQ R8, $2
	JB   ntdone
	MOVQ c1+96(FP), BX
	TESTQ SI, SI
	JZ   ntst10
	VADDSD 0(BX), X3, X3

ntst10:
	VMOVSD X3, 0(BX)
	CMPQ R9, $2
	JB   ntrow1
	TESTQ SI, SI
	JZ   ntst11
	VADDSD 8(BX), X4, X4

ntst11:
	VMOVSD X4, 8(BX)
	CMPQ R9, $3
	JB   ntrow1
	TESTQ SI, SI
	JZ   ntst12
	VADDSD 16(BX), X5, X5

ntst12:
	VMOVSD X5, 16(BX)

ntrow1:
	CMPQ R8, $3
	JB   ntdone
	MOVQ c2+104(FP), BX
	TESTQ SI, SI
	JZ   ntst20
	VADDSD 0(BX), X6, X6

ntst20:
	VMOVSD X6, 0(BX)
	CMPQ R9, $2
	JB   ntrow2
	TESTQ SI, SI
	JZ   ntst21
	VADDSD 8(BX), X7, X7

ntst21:
	VMOVSD X7, 8(BX)
	CMPQ R9, $3
	JB   ntrow2
	TESTQ SI, SI
	JZ   ntst22
	VADDSD 16(BX), X8, X8

ntst22:
	VMOVSD X8, 16(BX)

ntrow2:
	CMPQ R8, $4
	JB   ntdone
	MOVQ c3+112(FP), BX
	TESTQ SI, SI
	JZ   ntst30
	VADDSD 0(BX), X9, X9

ntst30:
	VMOVSD X9, 0(BX)
	CMPQ R9, $2
	JB   ntrow3
	TESTQ SI, SI
	JZ   ntst31
	VADDSD 8(BX), X10, X10

ntst31:
	VMOVSD X10, 8(BX)
	CMPQ R9, $3
	JB   ntrow3
	TESTQ SI, SI
	JZ   ntst32
	VADDSD 16(BX), X11, X11

ntst32:
	VMOVSD X11, 16(BX)

ntrow3:

ntdone:
	VZEROUPPER
	RET

// func comb4Asm(dst, a []float64, b float64, x, y []float64)
// dst[i] = a[i mod 4]·x[i] + b·y[i] for i < len(dst) (a multiple of 4): one product and one
// fused multiply-add per vector, two vectors per step, then one.
TEXT ·comb4Asm(SB), NOSPLIT, $0-104
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ a_base+24(FP), AX
	VMOVUPD 0(AX), Y8
	VBROADCASTSD b+48(FP), Y9
	MOVQ x_base+56(FP), SI
	MOVQ y_base+80(FP), DX
	SHLQ $3, CX
	XORQ BX, BX

cb8:
	LEAQ 64(BX), AX
	CMPQ AX, CX
	JA   cb4
	VMULPD (SI)(BX*1), Y8, Y0
	VFMADD231PD (DX)(BX*1), Y9, Y0
	VMULPD 32(SI)(BX*1), Y8, Y1
	VFMADD231PD 32(DX)(BX*1), Y9, Y1
	VMOVUPD Y0, (DI)(BX*1)
	VMOVUPD Y1, 32(DI)(BX*1)
	MOVQ AX, BX
	JMP  cb8

cb4:
	CMPQ BX, CX
	JAE  cbdone
	VMULPD (SI)(BX*1), Y8, Y0
	VFMADD231PD (DX)(BX*1), Y9, Y0
	VMOVUPD Y0, (DI)(BX*1)

cbdone:
	VZEROUPPER
	RET

// func bernBasis4Asm(n int, up, xy, start, tmp, b []float64, tiny float64)
// BernsteinBasis4 (bernstein.go) with the four lanes in one vector: q = min(x, y)/max(x, y)
// (0 where max(x, y) = 0), ρ_t = up[t]·q, v_0 = start, v_1 = v_0·ρ_0, then two chains side
// by side, v_{t+2} = v_t·(ρ_t·ρ_{t+1}) for t = 0, 2, 4, … and t+1 (the last pair may write
// v_{n+1}, which is never read), each zeroed where below tiny, into tmp[4t:]; then
// b[4i:] = tmp[4(n−i):] in the lanes where x ≥ y and tmp[4i:] in the others (VBLENDVPD).
TEXT ·bernBasis4Asm(SB), NOSPLIT, $0-136
	MOVQ n+0(FP), CX
	MOVQ up_base+8(FP), SI
	MOVQ xy_base+32(FP), AX
	VMOVUPD 0(AX), Y0
	VMOVUPD 32(AX), Y1
	VCMPPD $13, Y1, Y0, Y2
	VMAXPD Y1, Y0, Y3
	VMINPD Y1, Y0, Y4
	VDIVPD Y3, Y4, Y4
	VXORPD Y5, Y5, Y5
	VCMPPD $14, Y5, Y3, Y6
	VANDPD Y6, Y4, Y4
	MOVQ start_base+56(FP), AX
	VMOVUPD 0(AX), Y7
	VBROADCASTSD tiny+128(FP), Y8
	MOVQ tmp_base+80(FP), DI
	VMOVUPD Y7, 0(DI)
	TESTQ CX, CX
	JZ   bbplace
	VBROADCASTSD 0(SI), Y9
	VMULPD Y4, Y9, Y9
	VMULPD Y9, Y7, Y12
	VCMPPD $13, Y8, Y12, Y10
	VANDPD Y10, Y12, Y12
	VMOVUPD Y12, 32(DI)
	XORQ BX, BX

bbloop:
	LEAQ 2(BX), AX
	CMPQ AX, CX
	JA   bbplace
	VBROADCASTSD 8(SI)(BX*8), Y10
	VMULPD Y4, Y10, Y10
	VBROADCASTSD 16(SI)(BX*8), Y11
	VMULPD Y4, Y11, Y11
	VMULPD Y10, Y9, Y13
	VMULPD Y11, Y10, Y14
	VMULPD Y13, Y7, Y7
	VCMPPD $13, Y8, Y7, Y15
	VANDPD Y15, Y7, Y7
	VMULPD Y14, Y12, Y12
	VCMPPD $13, Y8, Y12, Y15
	VANDPD Y15, Y12, Y12
	MOVQ BX, DX
	SHLQ $5, DX
	VMOVUPD Y7, 64(DI)(DX*1)
	VMOVUPD Y12, 96(DI)(DX*1)
	VMOVAPD Y11, Y9
	ADDQ $2, BX
	JMP  bbloop

bbplace:
	MOVQ tmp_base+80(FP), SI
	MOVQ CX, DX
	SHLQ $5, DX
	ADDQ SI, DX
	MOVQ b_base+104(FP), DI
	XORQ BX, BX

bbploop:
	CMPQ BX, CX
	JA   bbdone
	VMOVUPD (SI), Y11
	VBLENDVPD Y2, (DX), Y11, Y11
	VMOVUPD Y11, (DI)
	ADDQ $32, SI
	SUBQ $32, DX
	ADDQ $32, DI
	INCQ BX
	JMP  bbploop

bbdone:
	VZEROUPPER
	RET

// Constants of logAsm: ·spConst (asm_amd64.go), 32 bytes per entry, as in asm_amd64.s.
#define LG_ONE ·spConst+32(SB)
#define LG_HALF ·spConst+608(SB)
#define LG_T52P1023 ·spConst+640(SB)
#define LG_LOGOFF ·spConst+672(SB)
#define LG_T52BITS ·spConst+704(SB)
#define LG_MANT ·spConst+736(SB)
#define LG_SQRTHALF ·spConst+768(SB)
#define LG_TWO ·spConst+800(SB)
#define LG_L1 ·spConst+832(SB)
#define LG_L2 ·spConst+864(SB)
#define LG_L3 ·spConst+896(SB)
#define LG_L4 ·spConst+928(SB)
#define LG_L5 ·spConst+960(SB)
#define LG_L6 ·spConst+992(SB)
#define LG_L7 ·spConst+1024(SB)
#define LG_L8 ·spConst+1056(SB)
#define LG_L9 ·spConst+1088(SB)
#define LG_L10 ·spConst+1120(SB)
#define LG_LN2LO ·spConst+1152(SB)
#define LG_LN2HI ·spConst+1184(SB)

// LOGCORE computes log(w) into Y7 for w in Y0 (positive, normal, finite; using Y1, Y2, Y6–Y15):
// logCore (generic.go) with corr = 0: t = bits(w) + (bits(1) − bits(√½)); k = exponent of t;
// f = mantissa of t scaled to [√½, √2) minus 1; s = f/(2 + f); z = s²; R = z·Estrin(z);
// hfsq = f²/2; c = s·(hfsq + R) + k·ln2Lo; log = k·ln2Hi + (f − (hfsq − c)).
#define LOGCORE \
	VPADDQ LG_LOGOFF, Y0, Y7; \
	VPSRLQ $52, Y7, Y8; \
	VPOR LG_T52BITS, Y8, Y8; \
	VSUBPD LG_T52P1023, Y8, Y8; \
	VPAND LG_MANT, Y7, Y7; \
	VPADDQ LG_SQRTHALF, Y7, Y7; \
	VSUBPD LG_ONE, Y7, Y7; \
	VADDPD LG_TWO, Y7, Y9; \
	VDIVPD Y9, Y7, Y9; \
	VMULPD Y9, Y9, Y10; \
	VMULPD Y10, Y10, Y11; \
	VMULPD Y11, Y11, Y12; \
	VMULPD Y12, Y12, Y13; \
	VMOVUPD LG_L2, Y14; \
	VFMADD213PD LG_L1, Y10, Y14; \
	VMOVUPD LG_L4, Y15; \
	VFMADD213PD LG_L3, Y10, Y15; \
	VFMADD231PD Y15, Y11, Y14; \
	VMOVUPD LG_L6, Y15; \
	VFMADD213PD LG_L5, Y10, Y15; \
	VMOVUPD LG_L8, Y1; \
	VFMADD213PD LG_L7, Y10, Y1; \
	VFMADD231PD Y1, Y11, Y15; \
	VMOVUPD LG_L10, Y1; \
	VFMADD213PD LG_L9, Y10, Y1; \
	VFMADD231PD Y15, Y12, Y14; \
	VFMADD231PD Y1, Y13, Y14; \
	VMULPD Y10, Y14, Y14; \
	VMULPD Y7, Y7, Y1; \
	VMULPD LG_HALF, Y1, Y1; \
	VMULPD LG_LN2LO, Y8, Y6; \
	VADDPD Y14, Y1, Y2; \
	VFMADD231PD Y2, Y9, Y6; \
	VSUBPD Y6, Y1, Y1; \
	VSUBPD Y1, Y7, Y7; \
	VFMADD231PD LG_LN2HI, Y8, Y7

// func logAsm(dst, x []float64)
// dst[i] = log(x[i]) by LOGCORE, four lanes per step, the last one to three through masked
// loads and stores; lanes that are not positive normal finite numbers get meaningless values
// (Log fixes them).
TEXT ·logAsm(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	XORQ BX, BX

lgloop:
	CMPQ CX, $4
	JB   lgtail
	VMOVUPD (SI)(BX*1), Y0
	LOGCORE
	VMOVUPD Y7, (DI)(BX*1)
	ADDQ $32, BX
	SUBQ $4, CX
	JMP  lgloop

lgtail:
	TESTQ CX, CX
	JZ    lgdone
	SHLQ  $5, CX
	LEAQ  ·laneMask(SB), AX
	VMOVUPD    (AX)(CX*1), Y3
	VMASKMOVPD (SI)(BX*1), Y3, Y0
	LOGCORE
	VMASKMOVPD Y7, Y3, (DI)(BX*1)

lgdone:
	VZEROUPPER
	RET

// func gather4Asm(dst, src []float64, s int, lane []float64)
// dst[4k:4k+4] = src[k·s : k·s+4]·lane for k < len(dst)/4: one unaligned vector load, one
// product and one store per k.
TEXT ·gather4Asm(SB), NOSPLIT, $0-80
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	SHRQ $2, CX
	MOVQ src_base+24(FP), SI
	MOVQ s+48(FP), DX
	SHLQ $3, DX
	MOVQ lane_base+56(FP), AX
	VMOVUPD 0(AX), Y8

g4loop:
	TESTQ CX, CX
	JZ    g4done
	VMULPD (SI), Y8, Y0
	VMOVUPD Y0, (DI)
	ADDQ DX, SI
	ADDQ $32, DI
	DECQ CX
	JMP  g4loop

g4done:
	VZEROUPPER
	RET

// func scatter4AddAsm(dst []float64, s int, src, lane []float64)
// dst[k·s : k·s+4] += src[4k:4k+4]·lane for k < len(src)/4 (the product rounded, then the sum:
// as the Go loop).
TEXT ·scatter4AddAsm(SB), NOSPLIT, $0-80
	MOVQ dst_base+0(FP), DI
	MOVQ s+24(FP), DX
	SHLQ $3, DX
	MOVQ src_base+32(FP), SI
	MOVQ src_len+40(FP), CX
	SHRQ $2, CX
	MOVQ lane_base+56(FP), AX
	VMOVUPD 0(AX), Y8

s4loop:
	TESTQ CX, CX
	JZ    s4done
	VMULPD (SI), Y8, Y0
	VADDPD (DI), Y0, Y0
	VMOVUPD Y0, (DI)
	ADDQ DX, DI
	ADDQ $32, SI
	DECQ CX
	JMP  s4loop

s4done:
	VZEROUPPER
	RET

// func spread2Asm(dst, src []float64)
// dst[4k:4k+2] = src[2k:2k+2] for k < len(src)/2: one 16-byte load and store per k.
TEXT ·spread2Asm(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	SHRQ $1, CX

sp2loop:
	TESTQ CX, CX
	JZ    sp2done
	VMOVUPD (SI), X0
	VMOVUPD X0, (DI)
	ADDQ $16, SI
	ADDQ $32, DI
	DECQ CX
	JMP  sp2loop

sp2done:
	VZEROUPPER
	RET

// func comb2Asm(dst, a []float64, b float64, x, y []float64)
// dst[2k+l] = a[l]·x[4k+l] + b·y[4k+l] for l < 2 and k < len(dst)/2: one product and one
// fused multiply-add on two lanes per k.
TEXT ·comb2Asm(SB), NOSPLIT, $0-104
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	SHRQ $1, CX
	MOVQ a_base+24(FP), AX
	VMOVUPD 0(AX), X8
	VMOVDDUP b+48(FP), X9
	MOVQ x_base+56(FP), SI
	MOVQ y_base+80(FP), DX

cb2loop:
	TESTQ CX, CX
	JZ    cb2done
	VMULPD (SI), X8, X0
	VFMADD231PD (DX), X9, X0
	VMOVUPD X0, (DI)
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $16, DI
	DECQ CX
	JMP  cb2loop

cb2done:
	VZEROUPPER
	RET
