// Package kernel holds the dense numeric inner loops behind vigo's hot paths: vector Axpy and
// Dot, matrix–vector products, the small-inner-dimension matrix product of a neural-network
// layer with its bias and ReLU fused, vectorised Exp and Log1p, and the fused per-observation
// pass of the Bernoulli-logit GLM.
//
// Every kernel has a pure-Go implementation. The default amd64 build also carries AVX2+FMA
// versions of Softplus, Axpy, Dot and the strided and multi-run kernels of a MADE output
// layer (Axpy4, Axpy2, ScatterAxpyDot, ScatterAxpyDot4) in Go assembly (asm_amd64.s, no
// cgo), used when CPUID reports AVX2 and FMA and the operating system saves the YMM
// registers (checked once at start-up); -tags purego builds pure Go only. Built with
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
