package kernel

import (
	"fmt"
	"math"
)

// Log sets dst[i] = log x for x = x[i]. dst must not overlap x. Algorithm: that of Log1p's
// last step (logCore): x = 2ᵏ·m with m ∈ [√½, √2), f = m − 1, s = f/(2+f),
// log x = k·log 2 + f − f²/2 + s·(f²/2 + R(s²)) with R the degree-10 atanh series in Estrin's
// form, k·log 2 split in two parts. Accuracy: within 1 ulp of the exact value for positive x
// (TestLog: against math.Log on grids and random points, subnormal x included); −Inf at ±0,
// NaN below 0 and for NaN, +Inf at +Inf. The assembly of the default amd64 build runs four
// lanes per vector; subnormal and special inputs are found by one comparison per element and
// recomputed by the scalar code. Cost ≈ 30 flops and one division per element.
func Log(dst, x []float64) {
	if len(dst) != len(x) {
		panic(fmt.Sprintf("kernel: Log: len(dst)=%d, len(x)=%d", len(dst), len(x)))
	}
	if len(x) == 0 {
		return
	}
	logv(dst, x)
	clearUpper()
	for i, v := range x {
		if !(v >= 0x1p-1022 && v <= math.MaxFloat64) {
			dst[i] = log1(v)
		}
	}
}

// log1 returns log x (the algorithm of Log, scalar).
func log1(x float64) float64 {
	switch {
	case x != x || x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	case math.IsInf(x, 1):
		return x
	case x < 0x1p-1022: // subnormal: log(x·2⁵⁴) − 54·log 2
		return logCore(x*0x1p54, -54*ln2Lo) - 54*ln2Hi
	}
	return logCore(x, 0)
}

// logGo is Log's loop in pure Go.
func logGo(dst, x []float64) {
	x = x[:len(dst)]
	for i, v := range x {
		dst[i] = log1(v)
	}
}

// Tanh sets dst[i] = tanh x for x = x[i]; dst may alias x. The assembly of the default amd64
// build computes E = e^(−2|x|) − 1 as Exp does (Cody–Waite reduction, the degree-13
// polynomial for eʳ − 1, then 2ⁿ·(eʳ − 1) + (2ⁿ − 1) in one fused multiply-add, accurate near
// 0 where 1 − e^(−2|x|) would cancel), then tanh|x| = −E/(2 + E) and the sign of x; −2|x| is
// clamped at −40 (tanh 20 rounds to 1). Accuracy: within 4 ulp of the exact value (TestTanh:
// against math.Tanh, itself within 1 ulp, on dense grids, near 0 and subnormal x); ±1 at ±Inf,
// ±0 at ±0, NaN for NaN. The pure-Go build uses math.Tanh. Cost ≈ 35 flops and one division
// per element.
func Tanh(dst, x []float64) {
	if len(dst) != len(x) {
		panic(fmt.Sprintf("kernel: Tanh: len(dst)=%d, len(x)=%d", len(dst), len(x)))
	}
	if len(x) == 0 {
		return
	}
	tanhv(dst, x)
	clearUpper()
}

// tanhGo is Tanh in pure Go.
func tanhGo(dst, x []float64) {
	x = x[:len(dst)]
	for i, v := range x {
		dst[i] = math.Tanh(v)
	}
}
