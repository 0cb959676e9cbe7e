//go:build amd64 && !goexperiment.simd && !purego

#include "textflag.h"

// AVX2+FMA kernels of the default amd64 build (asm_amd64.go says when they run). Every kernel
// ends with VZEROUPPER: SSE code the compiler emits for the caller runs 2–3× slower with the
// upper halves of the vector registers dirty (BenchmarkScalarAfterExp). Tails shorter than
// four lanes use masked loads and stores (VMASKMOVPD with ·laneMask), which never touch the
// memory of the masked-out lanes.

// Vector constants of softplusAsm: ·spConst, 32 bytes per entry (asm_amd64.go).
#define SIGN ·spConst+0(SB)
#define ONE ·spConst+32(SB)
#define EXPLO ·spConst+64(SB)
#define LOG2E ·spConst+96(SB)
#define MAGIC ·spConst+128(SB)
#define NLN2HI ·spConst+160(SB)
#define NLN2LO ·spConst+192(SB)
#define E2 ·spConst+224(SB)
#define E3 ·spConst+256(SB)
#define E4 ·spConst+288(SB)
#define E5 ·spConst+320(SB)
#define E6 ·spConst+352(SB)
#define E7 ·spConst+384(SB)
#define E8 ·spConst+416(SB)
#define E9 ·spConst+448(SB)
#define E10 ·spConst+480(SB)
#define E11 ·spConst+512(SB)
#define E12 ·spConst+544(SB)
#define E13 ·spConst+576(SB)
#define HALF ·spConst+608(SB)
#define T52P1023 ·spConst+640(SB)
#define LOGOFF ·spConst+672(SB)
#define T52BITS ·spConst+704(SB)
#define MANT ·spConst+736(SB)
#define SQRTHALF ·spConst+768(SB)
#define TWO ·spConst+800(SB)
#define L1 ·spConst+832(SB)
#define L2 ·spConst+864(SB)
#define L3 ·spConst+896(SB)
#define L4 ·spConst+928(SB)
#define L5 ·spConst+960(SB)
#define L6 ·spConst+992(SB)
#define L7 ·spConst+1024(SB)
#define L8 ·spConst+1056(SB)
#define L9 ·spConst+1088(SB)
#define L10 ·spConst+1120(SB)
#define LN2LO ·spConst+1152(SB)
#define LN2HI ·spConst+1184(SB)
#define T52P1077 ·spConst+1216(SB)
#define TWOM54 ·spConst+1248(SB)

// EXPBODY computes u = e^−|r| into Y3 for r in Y0 (using Y0–Y13); LOGBODY then computes
// softplus(r) into Y4 and σ(r) into Y2 from r in Y0 and u in Y3 (using Y0–Y15). No general
// register is used. The algorithm of softplus4 in simd_amd64.go (exp of x = −|r| by
// Cody–Waite reduction and a degree-13 polynomial, 2ⁿ applied in two steps;
// log(w) for w = 1 + u by exponent split and the atanh series, with the rounding error of
// 1 + u carried as c/w), step by step:
//   x = r | sign, x = max(x, −746); n = round(x/log 2); rHi = x − n·ln2Hi (exact);
//   rLo = −n·ln2Lo; r = rHi + rLo; q = Estrin(r); p = 1 + (rHi + (rLo + r²·q));
//   u = (p·2ⁿ⁺⁵⁴)·2⁻⁵⁴ (n ≥ −1076: the first product is exact, the second rounds once,
//   also to a subnormal); w = 1 + u; inv = 1/w; corr = ((1 − w) + u)·inv;
//   t = bits(w) + (bits(1) − bits(√½)); k = exponent of t; f = mantissa of t scaled to
//   [√½, √2) minus 1; s = f/(2 + f); z = s²; R = z·Estrin(z); hfsq = f²/2;
//   c = s·(hfsq + R) + (k·ln2Lo + corr); l = k·ln2Hi + (f − (hfsq − c));
//   σ = inv·(u if r's sign bit is set, else 1); softplus = max(r, 0) + l; NaN r gives r.
#define EXPBODY \
	VORPD SIGN, Y0, Y1; \
	VMAXPD EXPLO, Y1, Y1; \
	VMOVUPD LOG2E, Y2; \
	VFMADD213PD MAGIC, Y1, Y2; \
	VSUBPD MAGIC, Y2, Y2; \
	VFMADD231PD NLN2HI, Y2, Y1; \
	VMULPD NLN2LO, Y2, Y3; \
	VADDPD Y3, Y1, Y4; \
	VMULPD Y4, Y4, Y5; \
	VMULPD Y5, Y5, Y6; \
	VMULPD Y6, Y6, Y7; \
	VMOVUPD E3, Y8; \
	VFMADD213PD E2, Y4, Y8; \
	VMOVUPD E5, Y9; \
	VFMADD213PD E4, Y4, Y9; \
	VMOVUPD E7, Y10; \
	VFMADD213PD E6, Y4, Y10; \
	VMOVUPD E9, Y11; \
	VFMADD213PD E8, Y4, Y11; \
	VMOVUPD E11, Y12; \
	VFMADD213PD E10, Y4, Y12; \
	VMOVUPD E13, Y13; \
	VFMADD213PD E12, Y4, Y13; \
	VFMADD231PD Y9, Y5, Y8; \
	VFMADD231PD Y11, Y5, Y10; \
	VFMADD231PD Y13, Y5, Y12; \
	VFMADD231PD Y10, Y6, Y8; \
	VFMADD231PD Y12, Y7, Y8; \
	VFMADD231PD Y8, Y5, Y3; \
	VADDPD Y3, Y1, Y3; \
	VADDPD ONE, Y3, Y3; \
	VADDPD T52P1077, Y2, Y2; \
	VPSLLQ $52, Y2, Y2; \
	VMULPD Y2, Y3, Y3; \
	VMULPD TWOM54, Y3, Y3

#define LOGBODY \
	VADDPD ONE, Y3, Y4; \
	VMOVUPD ONE, Y5; \
	VDIVPD Y4, Y5, Y5; \
	VMOVUPD ONE, Y6; \
	VSUBPD Y4, Y6, Y6; \
	VADDPD Y3, Y6, Y6; \
	VMULPD Y5, Y6, Y6; \
	VPADDQ LOGOFF, Y4, Y7; \
	VPSRLQ $52, Y7, Y8; \
	VPOR T52BITS, Y8, Y8; \
	VSUBPD T52P1023, Y8, Y8; \
	VPAND MANT, Y7, Y7; \
	VPADDQ SQRTHALF, Y7, Y7; \
	VSUBPD ONE, Y7, Y7; \
	VADDPD TWO, Y7, Y9; \
	VDIVPD Y9, Y7, Y9; \
	VMULPD Y9, Y9, Y10; \
	VMULPD Y10, Y10, Y11; \
	VMULPD Y11, Y11, Y12; \
	VMULPD Y12, Y12, Y13; \
	VMOVUPD L2, Y14; \
	VFMADD213PD L1, Y10, Y14; \
	VMOVUPD L4, Y15; \
	VFMADD213PD L3, Y10, Y15; \
	VFMADD231PD Y15, Y11, Y14; \
	VMOVUPD L6, Y15; \
	VFMADD213PD L5, Y10, Y15; \
	VMOVUPD L8, Y1; \
	VFMADD213PD L7, Y10, Y1; \
	VFMADD231PD Y1, Y11, Y15; \
	VMOVUPD L10, Y1; \
	VFMADD213PD L9, Y10, Y1; \
	VFMADD231PD Y15, Y12, Y14; \
	VFMADD231PD Y1, Y13, Y14; \
	VMULPD Y10, Y14, Y14; \
	VMULPD Y7, Y7, Y1; \
	VMULPD HALF, Y1, Y1; \
	VFMADD231PD LN2LO, Y8, Y6; \
	VADDPD Y14, Y1, Y2; \
	VFMADD231PD Y2, Y9, Y6; \
	VSUBPD Y6, Y1, Y1; \
	VSUBPD Y1, Y7, Y7; \
	VFMADD231PD LN2HI, Y8, Y7; \
	VMOVUPD ONE, Y2; \
	VBLENDVPD Y0, Y3, Y2, Y2; \
	VMULPD Y5, Y2, Y2; \
	VXORPD Y1, Y1, Y1; \
	VMAXPD Y1, Y0, Y4; \
	VADDPD Y7, Y4, Y4; \
	VCMPPD $3, Y0, Y0, Y1; \
	VBLENDVPD Y1, Y0, Y4, Y4; \
	VBLENDVPD Y1, Y0, Y2, Y2

// func softplusAsm(sp, sg, r []float64)
// Blocks of up to 64 elements in two passes, as softplusGo: u = e^−|r| into a buffer on
// the stack (EXPBODY), then the rest (LOGBODY). Each pass is a chain of ≈ 70 cycles per
// vector, short enough for the processor to overlap several vectors; one pass per vector
// (≈ 150 cycles of latency) was 1.6× slower.
TEXT ·softplusAsm(SB), 0, $512-72
	MOVQ sp_base+0(FP), DI
	MOVQ sg_base+24(FP), DX
	MOVQ r_base+48(FP), SI
	MOVQ r_len+56(FP), CX
	LEAQ buf-512(SP), R12

spblock:
	TESTQ CX, CX
	JZ    spdone
	MOVQ  $64, R9
	CMPQ  CX, R9
	CMOVQLT CX, R9
	XORQ  BX, BX
	MOVQ  R9, R10

sppassa:
	CMPQ R10, $4
	JB   sptaila
	VMOVUPD (SI)(BX*1), Y0
	EXPBODY
	VMOVUPD Y3, (R12)(BX*1)
	ADDQ    $32, BX
	SUBQ    $4, R10
	JMP     sppassa

sptaila:
	TESTQ R10, R10
	JZ    sppassb0
	SHLQ  $5, R10
	LEAQ  ·laneMask(SB), AX
	VMOVUPD    (AX)(R10*1), Y15
	VMASKMOVPD (SI)(BX*1), Y15, Y0
	EXPBODY
	VMOVUPD    Y3, (R12)(BX*1)

sppassb0:
	XORQ BX, BX
	MOVQ R9, R10

sppassb:
	CMPQ R10, $4
	JB   sptailb
	VMOVUPD (SI)(BX*1), Y0
	VMOVUPD (R12)(BX*1), Y3
	LOGBODY
	VMOVUPD Y4, (DI)(BX*1)
	VMOVUPD Y2, (DX)(BX*1)
	ADDQ    $32, BX
	SUBQ    $4, R10
	JMP     sppassb

sptailb:
	TESTQ R10, R10
	JZ    spnext
	SHLQ  $5, R10
	LEAQ  ·laneMask(SB), AX
	VMOVUPD    (AX)(R10*1), Y15
	VMASKMOVPD (SI)(BX*1), Y15, Y0
	VMOVUPD    (R12)(BX*1), Y3
	LOGBODY
	VMOVUPD    (AX)(R10*1), Y15
	VMASKMOVPD Y4, Y15, (DI)(BX*1)
	VMASKMOVPD Y2, Y15, (DX)(BX*1)

spnext:
	SUBQ R9, CX
	SHLQ $3, R9
	ADDQ R9, SI
	ADDQ R9, DI
	ADDQ R9, DX
	JMP  spblock

spdone:
	VZEROUPPER
	RET

// func expAsm(dst, x []float64)
// dst[i] = e^x for x = x[i] ≤ 0 (Exp checks the signs first): EXPBODY computes e^−|x|, which
// is e^x there; four lanes per step, the last one to three through masked loads and stores.
TEXT ·expAsm(SB), NOSPLIT, $0-48
	MOVQ dst_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	XORQ BX, BX

exloop:
	CMPQ CX, $4
	JB   extail
	VMOVUPD (SI)(BX*1), Y0
	EXPBODY
	VMOVUPD Y3, (DI)(BX*1)
	ADDQ $32, BX
	SUBQ $4, CX
	JMP  exloop

extail:
	TESTQ CX, CX
	JZ    exdone
	SHLQ  $5, CX
	LEAQ  ·laneMask(SB), AX
	VMOVUPD    (AX)(CX*1), Y15
	VMASKMOVPD (SI)(BX*1), Y15, Y0
	EXPBODY
	VMASKMOVPD Y3, Y15, (DI)(BX*1)

exdone:
	VZEROUPPER
	RET

// TANHBODY computes tanh(x) into Y6 for x in Y0 (kept), with Y15 = the clamp lo (= −40)
// broadcast (using Y1–Y13): t = max(−2|x|, lo); n = round(t/log 2), r = t − n·log 2
// (Cody–Waite, as EXPBODY); m = eʳ − 1 = rHi + (rLo + r²·q) (EXPBODY's polynomial, before its
// 1 + ·); s = 2ⁿ; E = s·m + (s − 1) = e^t − 1 (one fused multiply-add, s − 1 exact for
// n ≥ −53); tanh|x| = (0 − E)/(2 + E) (+0 at x = ±0); the sign of x put back; NaN x gives x.
#define TANHBODY \
	VORPD SIGN, Y0, Y1; \
	VADDPD Y1, Y1, Y1; \
	VMAXPD Y15, Y1, Y1; \
	VMOVUPD LOG2E, Y2; \
	VFMADD213PD MAGIC, Y1, Y2; \
	VSUBPD MAGIC, Y2, Y2; \
	VFMADD231PD NLN2HI, Y2, Y1; \
	VMULPD NLN2LO, Y2, Y3; \
	VADDPD Y3, Y1, Y4; \
	VMULPD Y4, Y4, Y5; \
	VMULPD Y5, Y5, Y6; \
	VMULPD Y6, Y6, Y7; \
	VMOVUPD E3, Y8; \
	VFMADD213PD E2, Y4, Y8; \
	VMOVUPD E5, Y9; \
	VFMADD213PD E4, Y4, Y9; \
	VMOVUPD E7, Y10; \
	VFMADD213PD E6, Y4, Y10; \
	VMOVUPD E9, Y11; \
	VFMADD213PD E8, Y4, Y11; \
	VMOVUPD E11, Y12; \
	VFMADD213PD E10, Y4, Y12; \
	VMOVUPD E13, Y13; \
	VFMADD213PD E12, Y4, Y13; \
	VFMADD231PD Y9, Y5, Y8; \
	VFMADD231PD Y11, Y5, Y10; \
	VFMADD231PD Y13, Y5, Y12; \
	VFMADD231PD Y10, Y6, Y8; \
	VFMADD231PD Y12, Y7, Y8; \
	VFMADD231PD Y8, Y5, Y3; \
	VADDPD Y3, Y1, Y3; \
	VADDPD T52P1023, Y2, Y2; \
	VPSLLQ $52, Y2, Y2; \
	VSUBPD ONE, Y2, Y4; \
	VFMADD231PD Y3, Y2, Y4; \
	VADDPD TWO, Y4, Y5; \
	VXORPD Y7, Y7, Y7; \
	VSUBPD Y4, Y7, Y6; \
	VDIVPD Y5, Y6, Y6; \
	VANDPD SIGN, Y0, Y7; \
	VORPD Y7, Y6, Y6; \
	VCMPPD $3, Y0, Y0, Y7; \
	VBLENDVPD Y7, Y0, Y6, Y6

// func tanhAsm(dst, x []float64, lo float64)
// dst[i] = tanh(x[i]) by TANHBODY (lo = −40, the clamp of −2|x|), four lanes per step, the
// last one to three through masked loads and stores (mask in Y14).
TEXT ·tanhAsm(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ x_base+24(FP), SI
	MOVQ x_len+32(FP), CX
	VBROADCASTSD lo+48(FP), Y15
	XORQ BX, BX

thloop:
	CMPQ CX, $4
	JB   thtail
	VMOVUPD (SI)(BX*1), Y0
	TANHBODY
	VMOVUPD Y6, (DI)(BX*1)
	ADDQ $32, BX
	SUBQ $4, CX
	JMP  thloop

thtail:
	TESTQ CX, CX
	JZ    thdone
	SHLQ  $5, CX
	LEAQ  ·laneMask(SB), AX
	VMOVUPD    (AX)(CX*1), Y14
	VMASKMOVPD (SI)(BX*1), Y14, Y0
	TANHBODY
	VMASKMOVPD Y6, Y14, (DI)(BX*1)

thdone:
	VZEROUPPER
	RET

// func axpyAsm(a float64, x, y []float64)
// y[i] += a·x[i] (one fused multiply-add per element), eight then four lanes per step.
TEXT ·axpyAsm(SB), NOSPLIT, $0-56
	VBROADCASTSD a+0(FP), Y0
	MOVQ x_base+8(FP), SI
	MOVQ y_base+32(FP), DI
	MOVQ y_len+40(FP), CX
	XORQ BX, BX
	CMPQ CX, $8
	JB   axpy4s

axpy8:
	VMOVUPD     (DI)(BX*1), Y1
	VMOVUPD     32(DI)(BX*1), Y2
	VFMADD231PD (SI)(BX*1), Y0, Y1
	VFMADD231PD 32(SI)(BX*1), Y0, Y2
	VMOVUPD     Y1, (DI)(BX*1)
	VMOVUPD     Y2, 32(DI)(BX*1)
	ADDQ        $64, BX
	SUBQ        $8, CX
	CMPQ        CX, $8
	JAE         axpy8

axpy4s:
	CMPQ CX, $4
	JB   axpytail
	VMOVUPD     (DI)(BX*1), Y1
	VFMADD231PD (SI)(BX*1), Y0, Y1
	VMOVUPD     Y1, (DI)(BX*1)
	ADDQ        $32, BX
	SUBQ        $4, CX

axpytail:
	TESTQ CX, CX
	JZ    axpydone
	SHLQ  $5, CX
	LEAQ  ·laneMask(SB), AX
	VMOVUPD     (AX)(CX*1), Y15
	VMASKMOVPD  (SI)(BX*1), Y15, Y2
	VMASKMOVPD  (DI)(BX*1), Y15, Y1
	VFMADD231PD Y2, Y0, Y1
	VMASKMOVPD  Y1, Y15, (DI)(BX*1)

axpydone:
	VZEROUPPER
	RET

// func dotAsm(x, y []float64) float64
// Σ x[i]·y[i] with four vector accumulators (sixteen lanes per step), then four lanes, then
// the masked tail; the lanes are summed pairwise at the end.
TEXT ·dotAsm(SB), NOSPLIT, $0-56
	MOVQ   x_base+0(FP), SI
	MOVQ   y_base+24(FP), DI
	MOVQ   x_len+8(FP), CX
	XORQ   BX, BX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	CMPQ   CX, $16
	JB     dot4s

dot16:
	VMOVUPD     (SI)(BX*1), Y4
	VMOVUPD     32(SI)(BX*1), Y5
	VMOVUPD     64(SI)(BX*1), Y6
	VMOVUPD     96(SI)(BX*1), Y7
	VFMADD231PD (DI)(BX*1), Y4, Y0
	VFMADD231PD 32(DI)(BX*1), Y5, Y1
	VFMADD231PD 64(DI)(BX*1), Y6, Y2
	VFMADD231PD 96(DI)(BX*1), Y7, Y3
	ADDQ        $128, BX
	SUBQ        $16, CX
	CMPQ        CX, $16
	JAE         dot16

dot4s:
	CMPQ CX, $4
	JB   dottail
	VMOVUPD     (SI)(BX*1), Y4
	VFMADD231PD (DI)(BX*1), Y4, Y0
	ADDQ        $32, BX
	SUBQ        $4, CX
	JMP         dot4s

dottail:
	TESTQ CX, CX
	JZ    dotsum
	SHLQ  $5, CX
	LEAQ  ·laneMask(SB), AX
	VMOVUPD     (AX)(CX*1), Y15
	VMASKMOVPD  (SI)(BX*1), Y15, Y4
	VMASKMOVPD  (DI)(BX*1), Y15, Y5
	VFMADD231PD Y5, Y4, Y1

dotsum:
	VADDPD       Y1, Y0, Y0
	VADDPD       Y3, Y2, Y2
	VADDPD       Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPD       X1, X0, X0
	VPERMILPD    $1, X0, X1
	VADDSD       X1, X0, X0
	VMOVSD       X0, ret+48(FP)
	VZEROUPPER
	RET

// func axpy4Asm(a0, a1, a2, a3 float64, x, y []float64)
// y[p] += (a0·x[p] + a1·x[n+p]) + (a2·x[2n+p] + a3·x[3n+p]), n = len(y).
TEXT ·axpy4Asm(SB), NOSPLIT, $0-80
	VBROADCASTSD a0+0(FP), Y0
	VBROADCASTSD a1+8(FP), Y1
	VBROADCASTSD a2+16(FP), Y2
	VBROADCASTSD a3+24(FP), Y3
	MOVQ x_base+32(FP), SI
	MOVQ y_base+56(FP), DI
	MOVQ y_len+64(FP), CX
	MOVQ CX, R8
	SHLQ $3, R8
	LEAQ (SI)(R8*1), R9
	LEAQ (R9)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	XORQ BX, BX
	CMPQ CX, $4
	JB   ax4tail

ax4loop:
	VMULPD      (SI)(BX*1), Y0, Y4
	VFMADD231PD (R9)(BX*1), Y1, Y4
	VMULPD      (R10)(BX*1), Y2, Y5
	VFMADD231PD (R11)(BX*1), Y3, Y5
	VADDPD      Y5, Y4, Y4
	VADDPD      (DI)(BX*1), Y4, Y4
	VMOVUPD     Y4, (DI)(BX*1)
	ADDQ        $32, BX
	SUBQ        $4, CX
	CMPQ        CX, $4
	JAE         ax4loop

ax4tail:
	TESTQ CX, CX
	JZ    ax4done
	SHLQ  $5, CX
	LEAQ  ·laneMask(SB), AX
	VMOVUPD     (AX)(CX*1), Y15
	VMASKMOVPD  (SI)(BX*1), Y15, Y6
	VMASKMOVPD  (R9)(BX*1), Y15, Y7
	VMASKMOVPD  (R10)(BX*1), Y15, Y8
	VMASKMOVPD  (R11)(BX*1), Y15, Y9
	VMASKMOVPD  (DI)(BX*1), Y15, Y10
	VMULPD      Y6, Y0, Y4
	VFMADD231PD Y7, Y1, Y4
	VMULPD      Y8, Y2, Y5
	VFMADD231PD Y9, Y3, Y5
	VADDPD      Y5, Y4, Y4
	VADDPD      Y10, Y4, Y4
	VMASKMOVPD  Y4, Y15, (DI)(BX*1)

ax4done:
	VZEROUPPER
	RET

// func axpy2Asm(a0, a1 float64, x, y []float64)
// y[p] += a0·x[p] + a1·x[n+p], n = len(y).
TEXT ·axpy2Asm(SB), NOSPLIT, $0-64
	VBROADCASTSD a0+0(FP), Y0
	VBROADCASTSD a1+8(FP), Y1
	MOVQ x_base+16(FP), SI
	MOVQ y_base+40(FP), DI
	MOVQ y_len+48(FP), CX
	MOVQ CX, R8
	SHLQ $3, R8
	LEAQ (SI)(R8*1), R9
	XORQ BX, BX
	CMPQ CX, $4
	JB   ax2tail

ax2loop:
	VMULPD      (SI)(BX*1), Y0, Y4
	VFMADD231PD (R9)(BX*1), Y1, Y4
	VADDPD      (DI)(BX*1), Y4, Y4
	VMOVUPD     Y4, (DI)(BX*1)
	ADDQ        $32, BX
	SUBQ        $4, CX
	CMPQ        CX, $4
	JAE         ax2loop

ax2tail:
	TESTQ CX, CX
	JZ    ax2done
	SHLQ  $5, CX
	LEAQ  ·laneMask(SB), AX
	VMOVUPD     (AX)(CX*1), Y15
	VMASKMOVPD  (SI)(BX*1), Y15, Y6
	VMASKMOVPD  (R9)(BX*1), Y15, Y7
	VMASKMOVPD  (DI)(BX*1), Y15, Y10
	VMULPD      Y6, Y0, Y4
	VFMADD231PD Y7, Y1, Y4
	VADDPD      Y10, Y4, Y4
	VMASKMOVPD  Y4, Y15, (DI)(BX*1)

ax2done:
	VZEROUPPER
	RET

// func scatterAxpyDotAsm(a float64, g, dst []float64, s int, q []float64) float64
// dst[p·s] += a·g[p] (the product rounded, then the sum: as the Go loop) and returns
// Σ q[p]·g[p]; four elements of g per step: one vector product a·g, its lanes added into
// dst one by one (scalar VEX loads and stores), one fused multiply-add into the dot.
TEXT ·scatterAxpyDotAsm(SB), NOSPLIT, $0-96
	VBROADCASTSD a+0(FP), Y0
	MOVQ   g_base+8(FP), SI
	MOVQ   g_len+16(FP), CX
	MOVQ   dst_base+32(FP), DI
	MOVQ   s+56(FP), R8
	SHLQ   $3, R8
	MOVQ   q_base+64(FP), DX
	XORQ   BX, BX
	VXORPD Y2, Y2, Y2
	VXORPD X7, X7, X7
	CMPQ   CX, $4
	JB     sadtail

sadloop:
	VMOVUPD      (SI)(BX*1), Y1
	VFMADD231PD  (DX)(BX*1), Y1, Y2
	VMULPD       Y0, Y1, Y1
	VADDSD       (DI), X1, X3
	VMOVSD       X3, (DI)
	ADDQ         R8, DI
	VPERMILPD    $1, X1, X4
	VADDSD       (DI), X4, X4
	VMOVSD       X4, (DI)
	ADDQ         R8, DI
	VEXTRACTF128 $1, Y1, X5
	VADDSD       (DI), X5, X6
	VMOVSD       X6, (DI)
	ADDQ         R8, DI
	VPERMILPD    $1, X5, X5
	VADDSD       (DI), X5, X5
	VMOVSD       X5, (DI)
	ADDQ         R8, DI
	ADDQ         $32, BX
	SUBQ         $4, CX
	CMPQ         CX, $4
	JAE          sadloop

sadtail:
	TESTQ CX, CX
	JZ    sadsum

sadscalar:
	VMOVSD      (SI)(BX*1), X1
	VFMADD231SD (DX)(BX*1), X1, X7
	VMULSD      X0, X1, X1
	VADDSD      (DI), X1, X1
	VMOVSD      X1, (DI)
	ADDQ        R8, DI
	ADDQ        $8, BX
	DECQ        CX
	JNZ         sadscalar

sadsum:
	VEXTRACTF128 $1, Y2, X3
	VADDPD       X3, X2, X2
	VPERMILPD    $1, X2, X3
	VADDSD       X3, X2, X2
	VADDSD       X7, X2, X2
	VMOVSD       X2, ret+88(FP)
	VZEROUPPER
	RET

// func scatterAxpyDot4Asm(a float64, g, dst []float64, s int, q []float64, o0, o1, o2, o3 int) float64
// Four runs g_i = g[i·n:(i+1)·n], n = len(g)/4: dst[p·s + i] += a·g_i[p] (the product
// rounded, then the sum, as the Go loop) and returns Σ_i Σ_p q[o_i + p]·g_i[p]. Four
// elements of each run per step: the 4 × 4 block of products is transposed in registers
// (VUNPCKLPD/VUNPCKHPD, VPERM2F128), so that each dst[p·s : p·s+4] takes one vector
// read-modify-write; the remaining n mod 4 elements one by one.
TEXT ·scatterAxpyDot4Asm(SB), NOSPLIT, $0-128
	VBROADCASTSD a+0(FP), Y0
	MOVQ   g_base+8(FP), SI
	MOVQ   g_len+16(FP), CX
	SHRQ   $2, CX
	MOVQ   CX, R11
	SHLQ   $3, R11
	LEAQ   (SI)(R11*1), R9
	LEAQ   (R9)(R11*1), R10
	ADDQ   R10, R11
	MOVQ   dst_base+32(FP), DI
	MOVQ   s+56(FP), R8
	SHLQ   $3, R8
	MOVQ   q_base+64(FP), DX
	MOVQ   o0+88(FP), R12
	LEAQ   (DX)(R12*8), R12
	MOVQ   o1+96(FP), R13
	LEAQ   (DX)(R13*8), R13
	MOVQ   o2+104(FP), AX
	LEAQ   (DX)(AX*8), AX
	MOVQ   o3+112(FP), BX
	LEAQ   (DX)(BX*8), DX
	XORQ   BX, BX
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD X11, X11, X11
	CMPQ   CX, $4
	JB     sd4tail

sd4loop:
	VMOVUPD     (SI)(BX*1), Y1
	VMOVUPD     (R9)(BX*1), Y2
	VMOVUPD     (R10)(BX*1), Y3
	VMOVUPD     (R11)(BX*1), Y4
	VFMADD231PD (R12)(BX*1), Y1, Y5
	VFMADD231PD (R13)(BX*1), Y2, Y6
	VFMADD231PD (AX)(BX*1), Y3, Y5
	VFMADD231PD (DX)(BX*1), Y4, Y6
	VMULPD      Y0, Y1, Y1
	VMULPD      Y0, Y2, Y2
	VMULPD      Y0, Y3, Y3
	VMULPD      Y0, Y4, Y4
	VUNPCKLPD   Y2, Y1, Y7
	VUNPCKHPD   Y2, Y1, Y8
	VUNPCKLPD   Y4, Y3, Y9
	VUNPCKHPD   Y4, Y3, Y10
	VPERM2F128  $0x20, Y9, Y7, Y1
	VPERM2F128  $0x20, Y10, Y8, Y2
	VPERM2F128  $0x31, Y9, Y7, Y3
	VPERM2F128  $0x31, Y10, Y8, Y4
	VADDPD      (DI), Y1, Y1
	VMOVUPD     Y1, (DI)
	VADDPD      (DI)(R8*1), Y2, Y2
	VMOVUPD     Y2, (DI)(R8*1)
	LEAQ        (DI)(R8*2), DI
	VADDPD      (DI), Y3, Y3
	VMOVUPD     Y3, (DI)
	VADDPD      (DI)(R8*1), Y4, Y4
	VMOVUPD     Y4, (DI)(R8*1)
	LEAQ        (DI)(R8*2), DI
	ADDQ        $32, BX
	SUBQ        $4, CX
	CMPQ        CX, $4
	JAE         sd4loop

sd4tail:
	TESTQ CX, CX
	JZ    sd4sum

sd4scalar:
	VMOVSD      (SI)(BX*1), X1
	VFMADD231SD (R12)(BX*1), X1, X11
	VMULSD      X0, X1, X1
	VADDSD      (DI), X1, X1
	VMOVSD      X1, (DI)
	VMOVSD      (R9)(BX*1), X2
	VFMADD231SD (R13)(BX*1), X2, X11
	VMULSD      X0, X2, X2
	VADDSD      8(DI), X2, X2
	VMOVSD      X2, 8(DI)
	VMOVSD      (R10)(BX*1), X3
	VFMADD231SD (AX)(BX*1), X3, X11
	VMULSD      X0, X3, X3
	VADDSD      16(DI), X3, X3
	VMOVSD      X3, 16(DI)
	VMOVSD      (R11)(BX*1), X4
	VFMADD231SD (DX)(BX*1), X4, X11
	VMULSD      X0, X4, X4
	VADDSD      24(DI), X4, X4
	VMOVSD      X4, 24(DI)
	ADDQ        R8, DI
	ADDQ        $8, BX
	DECQ        CX
	JNZ         sd4scalar

sd4sum:
	VADDPD       Y6, Y5, Y5
	VEXTRACTF128 $1, Y5, X3
	VADDPD       X3, X5, X5
	VPERMILPD    $1, X5, X3
	VADDSD       X3, X5, X5
	VADDSD       X11, X5, X5
	VMOVSD       X5, ret+120(FP)
	VZEROUPPER
	RET

// func bernElev4Asm(m int, fm, fmm float64, xy, b2, tds, b1, dzdl, res []float64)
// BernsteinElev4 with the four lanes in one vector (fm = m, fmm = m(m−1)). Pass 1 runs up
// the m−1 entries of b2, two per step into two pairs of accumulators (h′, h″); pass 2 runs
// down k = m..1, two per step into two accumulators of z (z += δ_k·T_k after the tail sum
// T_k += b_{k,m}).
TEXT ·bernElev4Asm(SB), NOSPLIT, $0-168
	MOVQ m+0(FP), DX
	MOVQ xy_base+24(FP), AX
	VMOVUPD 0(AX), Y0          // x
	VMOVUPD 32(AX), Y1         // y
	MOVQ b2_base+48(FP), SI
	MOVQ tds_base+72(FP), DI   // δ (entry 0: ϑ_0)
	MOVQ DX, CX
	INCQ CX
	SHLQ $5, CX                // bytes per block of 4(m+1)
	LEAQ (DI)(CX*1), R9        // s
	MOVQ b1_base+96(FP), BX
	MOVQ dzdl_base+120(FP), R10 // dz
	LEAQ (R10)(CX*1), R11       // dl
	VXORPD Y2, Y2, Y2          // h′ (even entries)
	VXORPD Y3, Y3, Y3          // h″ (even)
	VXORPD Y4, Y4, Y4          // h′ (odd)
	VXORPD Y5, Y5, Y5          // h″ (odd)
	VXORPD Y6, Y6, Y6          // b2[i−1]
	LEAQ 32(DI), R12           // &δ[i+1]
	MOVQ BX, R13               // &b1[i]
	MOVQ DX, AX
	DECQ AX                    // entries of b2 left
p1two:
	CMPQ AX, $2
	JLT p1one
	VMOVUPD 0(SI), Y7          // c0 = b2[i]
	VMOVUPD 32(SI), Y8         // c1 = b2[i+1]
	VMOVUPD 0(R12), Y9         // δ[i+1]
	VMOVUPD 32(R12), Y10       // δ[i+2]
	VMOVUPD 64(R12), Y11       // δ[i+3]
	VSUBPD Y9, Y10, Y12
	VFMADD231PD Y12, Y7, Y3
	VSUBPD Y10, Y11, Y13
	VFMADD231PD Y13, Y8, Y5
	VMULPD Y7, Y1, Y12         // e0 = y·c0 + x·b2[i−1]
	VFMADD231PD Y6, Y0, Y12
	VMOVUPD Y12, 0(R13)
	VFMADD231PD Y12, Y9, Y2
	VMULPD Y8, Y1, Y13         // e1 = y·c1 + x·c0
	VFMADD231PD Y7, Y0, Y13
	VMOVUPD Y13, 32(R13)
	VFMADD231PD Y13, Y10, Y4
	VMOVAPD Y8, Y6
	ADDQ $64, SI
	ADDQ $64, R12
	ADDQ $64, R13
	SUBQ $2, AX
	JMP p1two

p1one:
	TESTQ AX, AX
	JZ p1end
	VMOVUPD 0(SI), Y7
	VMOVUPD 0(R12), Y9
	VMOVUPD 32(R12), Y10
	VSUBPD Y9, Y10, Y12
	VFMADD231PD Y12, Y7, Y3
	VMULPD Y7, Y1, Y12
	VFMADD231PD Y6, Y0, Y12
	VMOVUPD Y12, 0(R13)
	VFMADD231PD Y12, Y9, Y2
	VMOVAPD Y7, Y6
	ADDQ $32, R12
	ADDQ $32, R13

p1end:
	VMULPD Y6, Y0, Y12         // b1[m−1] = x·b2[m−2]; R12 = &δ[m]
	VMOVUPD Y12, 0(R13)
	VFMADD231PD 0(R12), Y12, Y2
	VADDPD Y4, Y2, Y2
	VADDPD Y5, Y3, Y3
	VBROADCASTSD fm+8(FP), Y14
	VBROADCASTSD fmm+16(FP), Y15
	VMULPD Y14, Y2, Y2         // h′
	VMULPD Y15, Y3, Y3         // h″
	MOVQ res_base+144(FP), AX
	VMOVUPD Y2, 32(AX)
	VMOVUPD Y3, 64(AX)
	VDIVPD Y2, Y14, Y15        // m/h′

	VXORPD Y6, Y6, Y6          // b1[k] (b1[m] = 0)
	VXORPD Y9, Y9, Y9          // z (k even from the top)
	VXORPD Y13, Y13, Y13       // z (odd)
	VXORPD Y10, Y10, Y10       // Σ_{i≥k} b_{i,m}
	MOVQ DX, R12
	SHLQ $5, R12               // 32k
p2two:
	CMPQ R12, $64
	JLT p2one
	VMOVUPD -32(BX)(R12*1), Y7 // b1[k−1]
	VMULPD Y6, Y1, Y8          // b_{k,m} = y·b1[k] + x·b1[k−1]
	VFMADD231PD Y7, Y0, Y8
	VADDPD Y8, Y10, Y10
	VFMADD231PD (DI)(R12*1), Y10, Y9
	VMOVUPD (R9)(R12*1), Y11
	VMULPD Y11, Y10, Y4
	VMOVUPD Y4, (R10)(R12*1)
	VMULPD Y7, Y15, Y4
	VMULPD Y11, Y4, Y4
	VMOVUPD Y4, (R11)(R12*1)
	VMOVUPD -64(BX)(R12*1), Y6 // b1[k−2]
	VMULPD Y7, Y1, Y8          // b_{k−1,m}
	VFMADD231PD Y6, Y0, Y8
	VADDPD Y8, Y10, Y10
	VFMADD231PD -32(DI)(R12*1), Y10, Y13
	VMOVUPD -32(R9)(R12*1), Y11
	VMULPD Y11, Y10, Y4
	VMOVUPD Y4, -32(R10)(R12*1)
	VMULPD Y6, Y15, Y4
	VMULPD Y11, Y4, Y4
	VMOVUPD Y4, -32(R11)(R12*1)
	SUBQ $64, R12
	JMP p2two

p2one:
	CMPQ R12, $32
	JLT p2end
	VMOVUPD -32(BX)(R12*1), Y7
	VMULPD Y6, Y1, Y8
	VFMADD231PD Y7, Y0, Y8
	VADDPD Y8, Y10, Y10
	VFMADD231PD (DI)(R12*1), Y10, Y9
	VMOVUPD (R9)(R12*1), Y11
	VMULPD Y11, Y10, Y4
	VMOVUPD Y4, (R10)(R12*1)
	VMULPD Y7, Y15, Y4
	VMULPD Y11, Y4, Y4
	VMOVUPD Y4, (R11)(R12*1)
	VMOVAPD Y7, Y6

p2end:
	VMULPD Y6, Y1, Y8          // z += ϑ_0·Σ_{i≥0} b_{i,m}, b_{0,m} = y·b1[0]
	VADDPD Y8, Y10, Y10
	VFMADD231PD 0(DI), Y10, Y9
	VADDPD Y13, Y9, Y9
	VMOVUPD Y9, 0(AX)
	VMOVUPD ONE, Y4            // dz_0 = 1, dl_0 = 0
	VMOVUPD Y4, 0(R10)
	VXORPD Y4, Y4, Y4
	VMOVUPD Y4, 0(R11)
	VZEROUPPER
	RET

// TRANS4 transposes the 4 × 4 block in Y0–Y3 (rows) into Y0–Y3 (columns), using Y4–Y7.
#define TRANS4 \
	VUNPCKLPD Y1, Y0, Y4; \
	VUNPCKHPD Y1, Y0, Y5; \
	VUNPCKLPD Y3, Y2, Y6; \
	VUNPCKHPD Y3, Y2, Y7; \
	VPERM2F128 $0x20, Y6, Y4, Y0; \
	VPERM2F128 $0x20, Y7, Y5, Y1; \
	VPERM2F128 $0x31, Y6, Y4, Y2; \
	VPERM2F128 $0x31, Y7, Y5, Y3

// func interleave4Asm(dst, src []float64, s, n int) int
// Interleave4 for the first n &^ 3 entries of each row (returned), one 4 × 4 transpose in
// registers per four entries.
TEXT ·interleave4Asm(SB), NOSPLIT, $0-72
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ s+48(FP), R8
	SHLQ $3, R8
	LEAQ (SI)(R8*1), R9
	LEAQ (R9)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	MOVQ n+56(FP), CX
	ANDQ $-4, CX
	MOVQ CX, ret+64(FP)
	XORQ BX, BX                // byte offset in the rows
	SHLQ $3, CX
il4loop:
	CMPQ BX, CX
	JGE il4end
	VMOVUPD (SI)(BX*1), Y0
	VMOVUPD (R9)(BX*1), Y1
	VMOVUPD (R10)(BX*1), Y2
	VMOVUPD (R11)(BX*1), Y3
	TRANS4
	VMOVUPD Y0, 0(DI)
	VMOVUPD Y1, 32(DI)
	VMOVUPD Y2, 64(DI)
	VMOVUPD Y3, 96(DI)
	ADDQ $32, BX
	ADDQ $128, DI
	JMP il4loop

il4end:
	VZEROUPPER
	RET

// func deinterleave4Asm(dst []float64, s int, a []float64, b float64, x, y []float64, n int) int
// Deinterleave4 for the first n &^ 3 entries of each row (returned): per four entries, four
// vectors a·x + b·y (one product and one fused multiply-add each), transposed in registers,
// one store into each row.
TEXT ·deinterleave4Asm(SB), NOSPLIT, $0-128
	MOVQ dst_base+0(FP), DI
	MOVQ s+24(FP), R8
	SHLQ $3, R8
	LEAQ (DI)(R8*1), R9
	LEAQ (R9)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	MOVQ a_base+32(FP), AX
	VMOVUPD 0(AX), Y8          // a
	VBROADCASTSD b+56(FP), Y9  // b
	MOVQ x_base+64(FP), SI
	MOVQ y_base+88(FP), DX
	MOVQ n+112(FP), CX
	ANDQ $-4, CX
	MOVQ CX, ret+120(FP)
	XORQ BX, BX                // byte offset in the rows
	SHLQ $3, CX
dl4loop:
	CMPQ BX, CX
	JGE dl4end
	VMULPD 0(SI), Y8, Y0
	VFMADD231PD 0(DX), Y9, Y0
	VMULPD 32(SI), Y8, Y1
	VFMADD231PD 32(DX), Y9, Y1
	VMULPD 64(SI), Y8, Y2
	VFMADD231PD 64(DX), Y9, Y2
	VMULPD 96(SI), Y8, Y3
	VFMADD231PD 96(DX), Y9, Y3
	TRANS4
	VMOVUPD Y0, (DI)(BX*1)
	VMOVUPD Y1, (R9)(BX*1)
	VMOVUPD Y2, (R10)(BX*1)
	VMOVUPD Y3, (R11)(BX*1)
	ADDQ $32, BX
	ADDQ $128, SI
	ADDQ $128, DX
	JMP dl4loop

dl4end:
	VZEROUPPER
	RET

// EXPBODY512 and LOGBODY512 are EXPBODY and LOGBODY on eight lanes (AVX-512F/DQ), the same
// instructions with the constants broadcast from the first lane of ·spConst's entries and
// the sign and NaN selections through mask registers (K1, K2).
#define EXPBODY512 \
	VPORQ.BCST SIGN, Z0, Z1; \
	VMAXPD.BCST EXPLO, Z1, Z1; \
	VBROADCASTSD LOG2E, Z2; \
	VFMADD213PD.BCST MAGIC, Z1, Z2; \
	VSUBPD.BCST MAGIC, Z2, Z2; \
	VFMADD231PD.BCST NLN2HI, Z2, Z1; \
	VMULPD.BCST NLN2LO, Z2, Z3; \
	VADDPD Z3, Z1, Z4; \
	VMULPD Z4, Z4, Z5; \
	VMULPD Z5, Z5, Z6; \
	VMULPD Z6, Z6, Z7; \
	VBROADCASTSD E3, Z8; \
	VFMADD213PD.BCST E2, Z4, Z8; \
	VBROADCASTSD E5, Z9; \
	VFMADD213PD.BCST E4, Z4, Z9; \
	VBROADCASTSD E7, Z10; \
	VFMADD213PD.BCST E6, Z4, Z10; \
	VBROADCASTSD E9, Z11; \
	VFMADD213PD.BCST E8, Z4, Z11; \
	VBROADCASTSD E11, Z12; \
	VFMADD213PD.BCST E10, Z4, Z12; \
	VBROADCASTSD E13, Z13; \
	VFMADD213PD.BCST E12, Z4, Z13; \
	VFMADD231PD Z9, Z5, Z8; \
	VFMADD231PD Z11, Z5, Z10; \
	VFMADD231PD Z13, Z5, Z12; \
	VFMADD231PD Z10, Z6, Z8; \
	VFMADD231PD Z12, Z7, Z8; \
	VFMADD231PD Z8, Z5, Z3; \
	VADDPD Z3, Z1, Z3; \
	VADDPD.BCST ONE, Z3, Z3; \
	VADDPD.BCST T52P1077, Z2, Z2; \
	VPSLLQ $52, Z2, Z2; \
	VMULPD Z2, Z3, Z3; \
	VMULPD.BCST TWOM54, Z3, Z3

#define LOGBODY512 \
	VADDPD.BCST ONE, Z3, Z4; \
	VBROADCASTSD ONE, Z5; \
	VDIVPD Z4, Z5, Z5; \
	VBROADCASTSD ONE, Z6; \
	VSUBPD Z4, Z6, Z6; \
	VADDPD Z3, Z6, Z6; \
	VMULPD Z5, Z6, Z6; \
	VPADDQ.BCST LOGOFF, Z4, Z7; \
	VPSRLQ $52, Z7, Z8; \
	VPORQ.BCST T52BITS, Z8, Z8; \
	VSUBPD.BCST T52P1023, Z8, Z8; \
	VPANDQ.BCST MANT, Z7, Z7; \
	VPADDQ.BCST SQRTHALF, Z7, Z7; \
	VSUBPD.BCST ONE, Z7, Z7; \
	VADDPD.BCST TWO, Z7, Z9; \
	VDIVPD Z9, Z7, Z9; \
	VMULPD Z9, Z9, Z10; \
	VMULPD Z10, Z10, Z11; \
	VMULPD Z11, Z11, Z12; \
	VMULPD Z12, Z12, Z13; \
	VBROADCASTSD L2, Z14; \
	VFMADD213PD.BCST L1, Z10, Z14; \
	VBROADCASTSD L4, Z15; \
	VFMADD213PD.BCST L3, Z10, Z15; \
	VFMADD231PD Z15, Z11, Z14; \
	VBROADCASTSD L6, Z15; \
	VFMADD213PD.BCST L5, Z10, Z15; \
	VBROADCASTSD L8, Z1; \
	VFMADD213PD.BCST L7, Z10, Z1; \
	VFMADD231PD Z1, Z11, Z15; \
	VBROADCASTSD L10, Z1; \
	VFMADD213PD.BCST L9, Z10, Z1; \
	VFMADD231PD Z15, Z12, Z14; \
	VFMADD231PD Z1, Z13, Z14; \
	VMULPD Z10, Z14, Z14; \
	VMULPD Z7, Z7, Z1; \
	VMULPD.BCST HALF, Z1, Z1; \
	VFMADD231PD.BCST LN2LO, Z8, Z6; \
	VADDPD Z14, Z1, Z2; \
	VFMADD231PD Z2, Z9, Z6; \
	VSUBPD Z6, Z1, Z1; \
	VSUBPD Z1, Z7, Z7; \
	VFMADD231PD.BCST LN2HI, Z8, Z7; \
	VBROADCASTSD ONE, Z2; \
	VPMOVQ2M Z0, K1; \
	VMOVAPD Z3, K1, Z2; \
	VMULPD Z5, Z2, Z2; \
	VPXORQ Z1, Z1, Z1; \
	VMAXPD Z1, Z0, Z4; \
	VADDPD Z7, Z4, Z4; \
	VCMPPD $3, Z0, Z0, K2; \
	VMOVAPD Z0, K2, Z4; \
	VMOVAPD Z0, K2, Z2

// func softplusAsm512(sp, sg, r []float64)
// softplusAsm on eight lanes per vector (AVX-512F/DQ), in the same two passes per block of
// 64 elements; the last 1–7 elements through mask registers (loads zero the masked-out
// lanes and never touch their memory; stores leave it alone).
TEXT ·softplusAsm512(SB), 0, $512-72
	MOVQ sp_base+0(FP), DI
	MOVQ sg_base+24(FP), DX
	MOVQ r_base+48(FP), SI
	MOVQ r_len+56(FP), CX
	LEAQ buf-512(SP), R12

sqblock:
	TESTQ CX, CX
	JZ    sqdone
	MOVQ  $64, R9
	CMPQ  CX, R9
	CMOVQLT CX, R9
	XORQ  BX, BX
	MOVQ  R9, R10

sqpassa:
	CMPQ R10, $8
	JB   sqtaila
	VMOVUPD (SI)(BX*1), Z0
	EXPBODY512
	VMOVUPD Z3, (R12)(BX*1)
	ADDQ    $64, BX
	SUBQ    $8, R10
	JMP     sqpassa

sqtaila:
	TESTQ R10, R10
	JZ    sqpassb0
	MOVQ  $1, AX
	SHLXQ R10, AX, AX
	DECQ  AX
	KMOVB AX, K3
	VMOVUPD.Z (SI)(BX*1), K3, Z0
	EXPBODY512
	VMOVUPD Z3, (R12)(BX*1)

sqpassb0:
	XORQ BX, BX
	MOVQ R9, R10

sqpassb:
	CMPQ R10, $8
	JB   sqtailb
	VMOVUPD (SI)(BX*1), Z0
	VMOVUPD (R12)(BX*1), Z3
	LOGBODY512
	VMOVUPD Z4, (DI)(BX*1)
	VMOVUPD Z2, (DX)(BX*1)
	ADDQ    $64, BX
	SUBQ    $8, R10
	JMP     sqpassb

sqtailb:
	TESTQ R10, R10
	JZ    sqnext
	MOVQ  $1, AX
	SHLXQ R10, AX, AX
	DECQ  AX
	KMOVB AX, K3
	VMOVUPD.Z (SI)(BX*1), K3, Z0
	VMOVUPD (R12)(BX*1), Z3
	LOGBODY512
	VMOVUPD Z4, K3, (DI)(BX*1)
	VMOVUPD Z2, K3, (DX)(BX*1)

sqnext:
	SUBQ R9, CX
	SHLQ $3, R9
	ADDQ R9, SI
	ADDQ R9, DI
	ADDQ R9, DX
	JMP  sqblock

sqdone:
	VZEROUPPER
	RET
