// Package kernel holds the dense numeric inner loops behind vigo's hot paths: vector Axpy and
// Dot, matrix–vector products, the small-inner-dimension matrix product of a neural-network
// layer with its bias and ReLU fused, vectorised Exp and Log1p, and the fused per-observation
// pass of the Bernoulli-logit GLM.
//
// Every kernel has a pure-Go implementation, used by the default (cgo-free) build. Built with
// GOEXPERIMENT=simd on amd64, the package also compiles AVX2+FMA versions written with Go's
// experimental simd/archsimd package and uses them when the CPU has AVX2 and FMA (checked
// once at start-up); Impl reports which one runs. The two agree to rounding: elementwise
// results to the accuracy stated on each function, reductions up to the order of summation.
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
