// Package kernel holds the dense numeric inner loops behind vigo's hot paths: vector Axpy and
// Dot, matrix–vector products, the small-inner-dimension matrix product of a neural-network
// layer with its bias and ReLU fused, small matrix products over a batch, vectorised Exp, Log
// and Log1p, the Bernstein-polynomial kernels of flow's Bernstein flows, and the fused
// per-observation pass of the Bernoulli-logit GLM.
//
// Every kernel has a pure-Go implementation. The default amd64 build also carries AVX2+FMA
// versions of Softplus, Exp (for x ≤ 0), Log, Axpy, Dot, the strided and multi-run kernels of
// a MADE output layer (Axpy4, Axpy2, ScatterAxpyDot, ScatterAxpyDot4), the small
// register-blocked matrix products of a network over a batch of draws (GemmNN, GemmNT) and
// the Bernstein kernels (BernsteinElev4, BernsteinBasis4, Interleave4, Deinterleave4, Comb4,
// Gather4, Scatter4Add) in Go assembly (asm_amd64.s, batch_amd64.s, no cgo), used when
// CPUID reports AVX2 and FMA and the operating system saves the YMM registers (checked once
// at start-up); -tags purego builds pure Go only. Built with
// GOEXPERIMENT=simd on amd64, the package instead compiles AVX2+FMA versions of most
// kernels written with Go's experimental simd/archsimd package, used under the same CPU
// check. Impl reports which one runs. All agree to rounding: elementwise results to the
// accuracy stated on each function, reductions up to the order of summation.
//
// Exp and Log1p are computed the same way in both implementations (Cody–Waite reduction and
// a degree-13 Taylor polynomial for exp; exponent split and the atanh series for log1p, with
// the rounding error of 1+x carried as a correction), so a result never depends on math.Exp
// or math.Log1p. Tests check them against math.Exp and math.Log1p on dense grids and random
// points and at the special values.
//
// Slices passed in must have the lengths stated on each function; a wrong length is a
// programmer error and panics. Nothing allocates.
package kernel
