package apovi

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/internal/mathx"
	"github.com/vigo-bayes/vigo/rng"
)

// GPConfig describes the thesis's meta-datasets of Gaussian-process prior draws (Rochussen
// 2023, §4.1 of ../shared/docs/apovi.md): for each dataset, N ~ U{MinN, …, MaxN−1} (exclusive
// upper bound, as torch.randint), inputs x_n = XMax − (XMax − XMin)·u with u ~ U[0, 1) (so x is
// uniform on (XMin, XMax], unsorted), a zero-mean GP draw f at the inputs with the squared
// exponential kernel
//
//	k(x, x') = Variance · exp(−(x − x')² / (2·Lengthscale²)),
//
// and y = f + Noise·ε, ε ~ N(0, 1). A zero field takes the thesis's value: Lengthscale and
// Variance softplus(0) = ln 2 (gpytorch's untrained ScaleKernel(RBFKernel())), Noise 0.05,
// (XMin, XMax) = (−2, 2], N ∈ {10, …, 49} (the ELBO experiment; the 1-D experiment uses MaxN 20).
//
// Cost per dataset: one N×N Cholesky factorisation, N³/3 multiply-adds.
type GPConfig struct {
	Lengthscale float64
	Variance    float64
	Noise       float64
	XMin, XMax  float64
	MinN, MaxN  int
}

// withDefaults fills the zero fields with the thesis's values.
func (c GPConfig) withDefaults() GPConfig {
	if c.Lengthscale == 0 {
		c.Lengthscale = math.Ln2
	}
	if c.Variance == 0 {
		c.Variance = math.Ln2
	}
	if c.Noise == 0 {
		c.Noise = 0.05
	}
	if c.XMin == 0 && c.XMax == 0 {
		c.XMin, c.XMax = -2, 2
	}
	if c.MinN == 0 && c.MaxN == 0 {
		c.MinN, c.MaxN = 10, 50
	}
	return c
}

// validate reports the first bad field of a config with defaults filled.
func (c GPConfig) validate() error {
	switch {
	case !(c.Lengthscale > 0) || math.IsInf(c.Lengthscale, 0):
		return fmt.Errorf("apovi: GPConfig: Lengthscale must be finite and > 0 (Lengthscale=%v)", c.Lengthscale)
	case !(c.Variance > 0) || math.IsInf(c.Variance, 0):
		return fmt.Errorf("apovi: GPConfig: Variance must be finite and > 0 (Variance=%v)", c.Variance)
	case !(c.Noise > 0) || math.IsInf(c.Noise, 0):
		return fmt.Errorf("apovi: GPConfig: Noise must be finite and > 0 (Noise=%v)", c.Noise)
	case !(c.XMax > c.XMin) || math.IsInf(c.XMin, 0) || math.IsInf(c.XMax, 0):
		return fmt.Errorf("apovi: GPConfig: need finite XMin < XMax (XMin=%v, XMax=%v)", c.XMin, c.XMax)
	case c.MinN < 1:
		return fmt.Errorf("apovi: GPConfig: MinN must be ≥ 1 (MinN=%d)", c.MinN)
	case c.MaxN <= c.MinN:
		return fmt.Errorf("apovi: GPConfig: MaxN (exclusive) must exceed MinN (MinN=%d, MaxN=%d)", c.MinN, c.MaxN)
	}
	return nil
}

// SEKernel is the squared-exponential covariance σ_f²·exp(−(a − b)²/(2ℓ²)).
func SEKernel(a, b, lengthscale, variance float64) float64 {
	d := (a - b) / lengthscale
	return variance * math.Exp(-0.5*d*d)
}

// GPDatasets draws n datasets of the meta-dataset described by cfg from the stream (seed, 0):
// the same seed gives the same datasets. Each dataset has one input and one output column.
// It fails on a bad config field or n < 0; n = 0 gives no datasets.
func GPDatasets(cfg GPConfig, n int, seed uint64) ([]Dataset, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if n < 0 {
		return nil, fmt.Errorf("apovi: GPDatasets: number of datasets must be ≥ 0 (n=%d)", n)
	}
	r := rng.New(seed, 0)
	out := make([]Dataset, n)
	for i := range out {
		m := cfg.MinN + r.IntN(cfg.MaxN-cfg.MinN)
		x := make([]float64, m)
		for j := range x {
			x[j] = cfg.XMax - (cfg.XMax-cfg.XMin)*r.Float64()
		}
		f, err := gpDraw(x, cfg.Lengthscale, cfg.Variance, r)
		if err != nil {
			return nil, fmt.Errorf("apovi: GPDatasets: dataset %d: %w", i, err)
		}
		y := make([]float64, m)
		for j := range y {
			y[j] = f[j] + cfg.Noise*r.NormFloat64()
		}
		out[i] = newDataset1D(x, y)
	}
	return out, nil
}

// gpDraw returns one draw of the zero-mean GP with the SE kernel at the inputs x: f = L·z with
// L·Lᵀ = K + jitter·I and z ~ N(0, I). The jitter starts at 0 and, as gpytorch's
// psd_safe_cholesky does for float64, grows 1e-8, 1e-7, … (up to 1e-4·Variance) until the
// factorisation succeeds; the inputs are continuous, but two inputs a few ulps apart make K
// singular to working precision.
func gpDraw(x []float64, ell, variance float64, r *rng.Stream) ([]float64, error) {
	n := len(x)
	k := make([]float64, n*n)
	for i := range n {
		for j := 0; j <= i; j++ {
			v := SEKernel(x[i], x[j], ell, variance)
			k[i*n+j], k[j*n+i] = v, v
		}
	}
	l := make([]float64, n*n)
	a := make([]float64, n*n)
	ok := false
	for jitter := 0.0; jitter <= 1e-4*variance; {
		copy(a, k)
		for i := range n {
			a[i*n+i] += jitter
		}
		if mathx.Cholesky(l, a, n) {
			ok = true
			break
		}
		if jitter == 0 {
			jitter = 1e-8
		} else {
			jitter *= 10
		}
	}
	if !ok {
		return nil, fmt.Errorf("SE kernel matrix not positive definite even with jitter 1e-4·Variance (n=%d)", n)
	}
	z := make([]float64, n)
	for i := range z {
		z[i] = r.NormFloat64()
	}
	f := make([]float64, n)
	for i := range n {
		s := 0.0
		for j := 0; j <= i; j++ {
			s += l[i*n+j] * z[j]
		}
		f[i] = s
	}
	return f, nil
}

// Cubic returns the thesis's out-of-distribution 1-D dataset (§4.2 of ../shared/docs/apovi.md,
// after Ober & Aitchison 2021): 50 inputs x ~ U(−4, −2) and 50 x ~ U(2, 4), y = x³ + 3ε with
// ε ~ N(0, 1), then x and y each standardised to mean 0 and unbiased standard deviation 1.
// Drawn from the stream (seed, 0).
func Cubic(seed uint64) Dataset {
	r := rng.New(seed, 0)
	const n = 100
	x := make([]float64, n)
	y := make([]float64, n)
	for i := range x {
		u := r.Float64()
		if i < n/2 {
			x[i] = -4 + 2*u
		} else {
			x[i] = 2 + 2*u
		}
		y[i] = x[i]*x[i]*x[i] + 3*r.NormFloat64()
	}
	standardise(x)
	standardise(y)
	return newDataset1D(x, y)
}

// standardise shifts and scales v in place to mean 0 and unbiased standard deviation 1.
func standardise(v []float64) {
	m := 0.0
	for _, a := range v {
		m += a
	}
	m /= float64(len(v))
	ss := 0.0
	for _, a := range v {
		ss += (a - m) * (a - m)
	}
	sd := math.Sqrt(ss / float64(len(v)-1))
	for i := range v {
		v[i] = (v[i] - m) / sd
	}
}

// newDataset1D wraps one input and one output column.
func newDataset1D(x, y []float64) Dataset {
	return Dataset{X: x, Y: y, N: len(x), DX: 1, DY: 1}
}
