//go:build amd64 && !goexperiment.simd && !purego

package kernel

import "math"

// The default amd64 build carries AVX2+FMA kernels in Go assembly (asm_amd64.s) for Softplus,
// Exp (x ≤ 0), Axpy, Dot, the MADE output-layer kernels (Axpy4, Axpy2, ScatterAxpyDot,
// ScatterAxpyDot4) and the Bernstein kernels (BernsteinElev4, Interleave4, Deinterleave4),
// and in batch_amd64.s (dispatch in batch_amd64.go) for GemmNN, GemmNT, Log, BernsteinBasis4,
// Comb4, Gather4 and Scatter4Add,
// used when the CPU and the operating system support AVX2 and FMA (useAsm, fixed at
// start-up); Softplus runs an AVX-512 version where that is usable too (useAsm512). Every
// other kernel, and every kernel on other CPUs, runs the pure-Go code. Build with -tags
// purego for pure Go throughout. Each assembly kernel ends with VZEROUPPER (which also
// clears the upper halves of Z0–Z15; Z16–Z31 are not used), so clearUpper has nothing left
// to do.

// cpuid executes CPUID with EAX = leaf, ECX = sub (cpu_amd64.s).
func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// xgetbv0 returns the low word of XCR0 (XGETBV with ECX = 0); call only if OSXSAVE is set.
func xgetbv0() (eax uint32)

// hasAVX2FMA reports whether the CPU has AVX2 and FMA and the operating system saves the
// YMM registers on context switches (OSXSAVE set and XCR0 bits 1 and 2, SSE and AVX state).
func hasAVX2FMA() bool {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const fma, osxsave, avx = 1 << 12, 1 << 27, 1 << 28
	if ecx1&(fma|osxsave|avx) != fma|osxsave|avx {
		return false
	}
	if xgetbv0()&6 != 6 {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	return ebx7&(1<<5) != 0 // AVX2
}

// useAsm is fixed at start-up: whether the assembly kernels may run.
var useAsm = hasAVX2FMA()

// hasAVX512 reports whether, beyond hasAVX2FMA, the CPU has AVX-512F and AVX-512DQ and the
// operating system saves the opmask and ZMM registers (XCR0 bits 5–7).
func hasAVX512() bool {
	if !hasAVX2FMA() || xgetbv0()&0xe6 != 0xe6 {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	const f, dq, bmi2 = 1 << 16, 1 << 17, 1 << 8
	return ebx7&(f|dq|bmi2) == f|dq|bmi2
}

// useAsm512 is fixed at start-up: whether the AVX-512 version of Softplus may run.
var useAsm512 = hasAVX512()

func impl() string {
	if useAsm && useAsm512 {
		return "avx2+fma asm, avx-512 softplus"
	}
	if useAsm {
		return "avx2+fma asm"
	}
	return "go"
}

// clearUpper does nothing: the assembly kernels clear the upper halves of the vector
// registers themselves (VZEROUPPER) before they return.
func clearUpper() {}

func axpy(a float64, x, y []float64) {
	if useAsm {
		axpyAsm(a, x, y)
		return
	}
	axpyGo(a, x, y)
}

func dot(x, y []float64) float64 {
	if useAsm {
		return dotAsm(x, y)
	}
	return dotGo(x, y)
}

func axpy4(a0, a1, a2, a3 float64, x, y []float64) {
	if useAsm {
		axpy4Asm(a0, a1, a2, a3, x, y)
		return
	}
	axpy4Go(a0, a1, a2, a3, x, y)
}

func axpy2(a0, a1 float64, x, y []float64) {
	if useAsm {
		axpy2Asm(a0, a1, x, y)
		return
	}
	axpy2Go(a0, a1, x, y)
}

func scatterAxpyDot(a float64, g, dst []float64, s int, q []float64) float64 {
	if useAsm {
		return scatterAxpyDotAsm(a, g, dst, s, q)
	}
	return scatterAxpyDotGo(a, g, dst, s, q)
}

func scatterAxpyDot4(a float64, g, dst []float64, s int, q []float64, o [4]int) float64 {
	if useAsm {
		return scatterAxpyDot4Asm(a, g, dst, s, q, o[0], o[1], o[2], o[3])
	}
	return scatterAxpyDot4Go(a, g, dst, s, q, o)
}

func softplusv(sp, sg, r []float64) {
	if useAsm && useAsm512 {
		softplusAsm512(sp, sg, r)
		return
	}
	if useAsm {
		softplusAsm(sp, sg, r)
		return
	}
	softplusGo(sp, sg, r)
}

func bernElev4(m int, xy, b2, tds, b1, dzdl, res []float64) {
	if useAsm {
		bernElev4Asm(m, float64(m), float64(m*(m-1)), xy, b2, tds, b1, dzdl, res)
		return
	}
	bernElev4Go(m, xy, b2, tds, b1, dzdl, res)
}

func interleave4(dst, src []float64, s, n int) int {
	if useAsm {
		return interleave4Asm(dst, src, s, n)
	}
	return interleave4Go(dst, src, s, n)
}

func deinterleave4(dst []float64, s int, a []float64, b float64, x, y []float64, n int) int {
	if useAsm {
		return deinterleave4Asm(dst, s, a, b, x, y, n)
	}
	return deinterleave4Go(dst, s, a, b, x, y, n)
}

// Assembly kernels (asm_amd64.s). They need AVX2 and FMA (useAsm) and lengths the exported
// functions have checked: len(y) = len(x) for axpyAsm and dotAsm; len(x) = 4·len(y) for
// axpy4Asm and 2·len(y) for axpy2Asm; len(q) ≥ len(g) and len(dst) > (len(g)−1)·s for
// scatterAxpyDotAsm; len(g) = 4n, len(dst) > (n−1)·s + 3 and o_i + n ≤ len(q) for
// scatterAxpyDot4Asm; len(sp) = len(sg) = len(r) for softplusAsm; the lengths
// BernsteinElev4, Interleave4 and Deinterleave4 check for bernElev4Asm, interleave4Asm and
// deinterleave4Asm.

//go:noescape
func axpyAsm(a float64, x, y []float64)

//go:noescape
func dotAsm(x, y []float64) float64

//go:noescape
func axpy4Asm(a0, a1, a2, a3 float64, x, y []float64)

//go:noescape
func axpy2Asm(a0, a1 float64, x, y []float64)

//go:noescape
func scatterAxpyDotAsm(a float64, g, dst []float64, s int, q []float64) float64

//go:noescape
func scatterAxpyDot4Asm(a float64, g, dst []float64, s int, q []float64, o0, o1, o2, o3 int) float64

//go:noescape
func softplusAsm(sp, sg, r []float64)

//go:noescape
func softplusAsm512(sp, sg, r []float64)

//go:noescape
func bernElev4Asm(m int, fm, fmm float64, xy, b2, tds, b1, dzdl, res []float64)

//go:noescape
func interleave4Asm(dst, src []float64, s, n int) int

//go:noescape
func deinterleave4Asm(dst []float64, s int, a []float64, b float64, x, y []float64, n int) int

// q4 returns four lanes holding the bits of v; u4 four lanes holding b.
//
//lint:ignore U1000 used in spConst, read by asm_amd64.s only
func q4(v float64) [4]uint64 { b := math.Float64bits(v); return [4]uint64{b, b, b, b} }
func u4(b uint64) [4]uint64  { return [4]uint64{b, b, b, b} }

// spConst holds the vector constants of softplusAsm, four lanes each, at the offsets the
// assembly names (the #defines at the top of asm_amd64.s, 32 bytes apart;
// TestAsmConstLayout checks them).
//
//lint:ignore U1000 read by asm_amd64.s only
var spConst = [...][4]uint64{
	u4(1 << 63), // 0 sign bit
	q4(1),       // 1
	q4(expLo),   // 2
	q4(log2e),   // 3
	q4(roundMagic),
	q4(-ln2Hi), // 5
	q4(-ln2Lo),
	q4(e2), // 7
	q4(e3),
	q4(e4),
	q4(e5),
	q4(e6),
	q4(e7),
	q4(e8),
	q4(e9),
	q4(e10),
	q4(e11),
	q4(e12),
	q4(e13),                    // 18
	q4(0.5),                    // 19
	q4(1<<52 + 1023),           // 20
	u4(oneBits - sqrtHalfBits), // 21
	u4(twoTo52Bits),            // 22
	u4(mantMask),               // 23
	u4(sqrtHalfBits),           // 24
	q4(2),                      // 25
	q4(l1),                     // 26
	q4(l2),
	q4(l3),
	q4(l4),
	q4(l5),
	q4(l6),
	q4(l7),
	q4(l8),
	q4(l9),
	q4(l10),               // 35
	q4(ln2Lo),             // 36
	q4(ln2Hi),             // 37
	q4(1<<52 + 1023 + 54), // 38
	q4(0x1p-54),           // 39
}

// laneMask[w] selects the first w of four lanes (VMASKMOVPD), for the tails.
//
//lint:ignore U1000 read by asm_amd64.s only
var laneMask = [5][4]uint64{{}, {1<<64 - 1}, {1<<64 - 1, 1<<64 - 1}, {1<<64 - 1, 1<<64 - 1, 1<<64 - 1}, u4(1<<64 - 1)}
