package diag

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/dsp/fourier"
	"gonum.org/v1/gonum/mathext"
)

// The functions below follow R's posterior package (version 1.4.0), which implements
// Vehtari, Gelman, Simpson, Carpenter & Bürkner (2021). chains[c] holds the draws of one
// scalar from chain c; all chains must have the same length (they panic otherwise). Results
// R returns as NA (non-finite or constant draws, fewer than 3 draws per split chain) are NaN.

// Rhat returns the rank-normalised split-R̂: the larger of the split-R̂ of the rank-normalised
// draws (bulk) and of the rank-normalised folded draws |θ − median θ| (tail).
// Cost O(N log N) in the total number of draws N.
func Rhat(chains [][]float64) float64 {
	checkChains("Rhat", chains)
	bulk := rhatCore(zScale(splitChains(chains)))
	tail := rhatCore(zScale(splitChains(fold(chains))))
	if math.IsNaN(bulk) || math.IsNaN(tail) {
		return math.NaN()
	}
	return math.Max(bulk, tail)
}

// RhatBasic returns the classic split-R̂ (Gelman et al., BDA3 §11.4) of the draws themselves:
// √((B/W + n − 1)/n) over the 2·len(chains) half chains of length n, B = n·var(half-chain
// means), W = mean(half-chain variances).
func RhatBasic(chains [][]float64) float64 {
	checkChains("RhatBasic", chains)
	return rhatCore(splitChains(chains))
}

// ESSBulk returns the bulk effective sample size: ESSBasic of the rank-normalised draws.
func ESSBulk(chains [][]float64) float64 {
	checkChains("ESSBulk", chains)
	return essCore(zScale(splitChains(chains)))
}

// ESSTail returns the tail effective sample size, min(ESSQuantile at 0.05, at 0.95).
func ESSTail(chains [][]float64) float64 {
	checkChains("ESSTail", chains)
	a, b := essQuantile(chains, 0.05), essQuantile(chains, 0.95)
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Min(a, b)
}

// ESSQuantile returns the effective sample size of the indicator 1{θ ≤ q̂_p}, q̂_p the type-7
// sample quantile of all draws (p = 1 is replaced by (N − ½)/N).
func ESSQuantile(chains [][]float64, p float64) float64 {
	checkChains("ESSQuantile", chains)
	return essQuantile(chains, p)
}

// ESSBasic returns the split-chain effective sample size of the draws themselves (posterior's
// ess_basic and ess_mean): N/τ̂ with τ̂ = −1 + 2Σρ̂ₜ summed by Geyer's initial positive and
// monotone sequences over the multi-chain autocorrelations ρ̂ₜ = 1 − (W − mean acovₜ)/var⁺,
// and τ̂ ≥ 1/log₁₀ N.
func ESSBasic(chains [][]float64) float64 {
	checkChains("ESSBasic", chains)
	return essCore(splitChains(chains))
}

// MCSEMean returns the Monte Carlo standard error of the mean, sd/√ESSBasic.
func MCSEMean(chains [][]float64) float64 {
	checkChains("MCSEMean", chains)
	return sd(concat(chains)) / math.Sqrt(essCore(splitChains(chains)))
}

// MCSESD returns the Monte Carlo standard error of the sd as posterior 1.4.0 computes it:
// with c = θ − mean θ, √(var̂(c²)/(ESSBasic(c²)·4·mean c²)), var̂(c²) = mean c⁴ − (mean c²)².
func MCSESD(chains [][]float64) float64 {
	checkChains("MCSESD", chains)
	m := mean(concat(chains))
	c2 := make([][]float64, len(chains))
	for i, ch := range chains {
		c2[i] = make([]float64, len(ch))
		for j, v := range ch {
			c2[i][j] = (v - m) * (v - m)
		}
	}
	flat := concat(c2)
	ev := mean(flat)
	for i, v := range flat {
		flat[i] = v * v
	}
	varvar := (mean(flat) - ev*ev) / essCore(splitChains(c2))
	return math.Sqrt(varvar / ev / 4)
}

// MCSEQuantile returns the Monte Carlo standard error of the p-quantile: half the distance
// between the order statistics at the 15.9% and 84.1% quantiles of Beta(E·p + 1, E·(1−p) + 1),
// E = ESSQuantile(p) (Vehtari et al. 2021, §4.3).
func MCSEQuantile(chains [][]float64, p float64) float64 {
	checkChains("MCSEQuantile", chains)
	e := essQuantile(chains, p)
	if math.IsNaN(e) {
		return math.NaN()
	}
	a1 := mathext.InvRegIncBeta(e*p+1, e*(1-p)+1, 0.1586553)
	a2 := mathext.InvRegIncBeta(e*p+1, e*(1-p)+1, 0.8413447)
	s := concat(chains)
	slices.Sort(s)
	n := len(s)
	i1 := max(int(math.Floor(a1*float64(n))), 1)
	i2 := min(int(math.Ceil(a2*float64(n))), n)
	return (s[i2-1] - s[i1-1]) / 2
}

func checkChains(fn string, chains [][]float64) {
	if len(chains) == 0 {
		panic(fmt.Sprintf("diag: %s: no chains", fn))
	}
	for i, c := range chains {
		if len(c) != len(chains[0]) {
			panic(fmt.Sprintf("diag: %s: chains of unequal length (chain 0 has %d, chain %d has %d)", fn, len(chains[0]), i, len(c)))
		}
	}
}

func concat(chains [][]float64) []float64 {
	n := 0
	for _, c := range chains {
		n += len(c)
	}
	out := make([]float64, 0, n)
	for _, c := range chains {
		out = append(out, c...)
	}
	return out
}

// returnNaN is posterior's should_return_NA: any non-finite value, or max − min < ε.
func returnNaN(cols [][]float64) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range cols {
		for _, v := range c {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return true
			}
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	return math.Abs(hi-lo) < 2.220446049250313e-16
}

// splitChains halves every chain (dropping the middle draw of odd-length chains); the halves
// are views, not copies. Chains of length 1 are left whole.
func splitChains(chains [][]float64) [][]float64 {
	n := len(chains[0])
	if n == 1 {
		return chains
	}
	h := n / 2
	out := make([][]float64, 0, 2*len(chains))
	for _, c := range chains {
		out = append(out, c[:h])
	}
	for _, c := range chains {
		out = append(out, c[n-h:])
	}
	return out
}

// fold returns |θ − median θ| over all draws.
func fold(chains [][]float64) [][]float64 {
	s := concat(chains)
	slices.Sort(s)
	med := quantileSorted(s, 0.5)
	out := make([][]float64, len(chains))
	for i, c := range chains {
		out[i] = make([]float64, len(c))
		for j, v := range c {
			out[i][j] = math.Abs(v - med)
		}
	}
	return out
}

// zScale rank-normalises: Φ⁻¹((rᵢ − 3/8)/(N + 1/4)) with rᵢ the average-ties rank of the draw
// among all N (Blom 1958). Non-finite input gives NaN output.
func zScale(cols [][]float64) [][]float64 {
	type ref struct{ c, i int }
	var all []ref
	for c, col := range cols {
		for i := range col {
			all = append(all, ref{c, i})
		}
	}
	val := func(r ref) float64 { return cols[r.c][r.i] }
	slices.SortStableFunc(all, func(a, b ref) int {
		x, y := val(a), val(b)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	out := make([][]float64, len(cols))
	for c, col := range cols {
		out[c] = make([]float64, len(col))
	}
	n := float64(len(all))
	for i := 0; i < len(all); {
		j := i + 1
		for j < len(all) && val(all[j]) == val(all[i]) {
			j++
		}
		r := float64(i+1+j) / 2 // average of ranks i+1 … j
		z := mathext.NormalQuantile((r - 0.375) / (n - 0.75 + 1))
		for _, a := range all[i:j] {
			if v := val(a); math.IsNaN(v) || math.IsInf(v, 0) {
				out[a.c][a.i] = math.NaN()
			} else {
				out[a.c][a.i] = z
			}
		}
		i = j
	}
	return out
}

// rhatCore is posterior's .rhat on the given columns.
func rhatCore(cols [][]float64) float64 {
	if returnNaN(cols) {
		return math.NaN()
	}
	n := float64(len(cols[0]))
	means := make([]float64, len(cols))
	var w float64
	for c, col := range cols {
		means[c] = mean(col)
		w += variance(col)
	}
	w /= float64(len(cols))
	b := n * variance(means)
	return math.Sqrt((b/w + n - 1) / n)
}

// essCore is posterior's .ess on the given columns.
func essCore(cols [][]float64) float64 {
	m := len(cols)
	n := len(cols[0])
	if n < 3 || returnNaN(cols) {
		return math.NaN()
	}
	acov := make([]float64, n) // mean over chains of the autocovariances
	ac := newAutocov(n)
	means := make([]float64, m)
	for c, col := range cols {
		means[c] = mean(col)
		for t, v := range ac.of(col) {
			acov[t] += v
		}
	}
	for t := range acov {
		acov[t] /= float64(m)
	}
	fn := float64(n)
	meanVar := acov[0] * fn / (fn - 1)
	varPlus := meanVar * (fn - 1) / fn
	if m > 1 {
		varPlus += variance(means)
	}
	rho := make([]float64, n+1)
	rhoAt := func(t int) float64 { return 1 - (meanVar-acov[t])/varPlus }
	// Geyer's initial positive sequence over pairs (even, odd lags).
	t := 0
	even, odd := 1.0, rhoAt(1)
	rho[0], rho[1] = even, odd
	for t < n-5 && !math.IsNaN(even+odd) && even+odd > 0 {
		t += 2
		even, odd = rhoAt(t), rhoAt(t+1)
		if even+odd >= 0 {
			rho[t], rho[t+1] = even, odd
		}
	}
	maxT := t
	if even > 0 {
		rho[maxT] = even
	}
	// Geyer's initial monotone sequence.
	for t = 0; t <= maxT-4; {
		t += 2
		if rho[t]+rho[t+1] > rho[t-2]+rho[t-1] {
			rho[t] = (rho[t-2] + rho[t-1]) / 2
			rho[t+1] = rho[t]
		}
	}
	total := float64(m * n)
	var sum float64
	for _, r := range rho[:maxT] {
		sum += r
	}
	if maxT == 0 {
		sum = rho[0] // R's rho_hat_t[1:0] is rho_hat_t[1]: τ̂ = 2 when no lag pair was accepted
	}
	tau := -1 + 2*sum + rho[maxT]
	tau = math.Max(tau, 1/math.Log10(total))
	return total / tau
}

// autocov computes biased autocovariances (1/n)Σᵢ (xᵢ − x̄)(xᵢ₊ₜ − x̄), t = 0…n−1, by FFT of
// the centred series zero-padded to 2·nextn(n), rescaled so that lag 0 equals var·(n−1)/n
// exactly, as posterior's autocovariance.
type autocov struct {
	n    int
	fft  *fourier.FFT
	buf  []float64
	coef []complex128
	out  []float64
}

func newAutocov(n int) *autocov {
	l := 2 * nextn(n)
	return &autocov{n: n, fft: fourier.NewFFT(l), buf: make([]float64, l), coef: make([]complex128, l/2+1), out: make([]float64, n)}
}

func (a *autocov) of(x []float64) []float64 {
	v := variance(x)
	if v == 0 {
		clear(a.out)
		return a.out
	}
	m := mean(x)
	clear(a.buf)
	for i, xi := range x {
		a.buf[i] = xi - m
	}
	a.fft.Coefficients(a.coef, a.buf)
	for i, c := range a.coef {
		a.coef[i] = complex(real(c)*real(c)+imag(c)*imag(c), 0)
	}
	a.fft.Sequence(a.buf, a.coef)
	s := v * float64(a.n-1) / float64(a.n) / a.buf[0]
	for t := range a.out {
		a.out[t] = a.buf[t] * s
	}
	return a.out
}

// nextn returns the smallest integer ≥ n whose only prime factors are 2, 3 and 5 (R's nextn).
func nextn(n int) int {
	for m := max(n, 1); ; m++ {
		k := m
		for _, p := range []int{2, 3, 5} {
			for k%p == 0 {
				k /= p
			}
		}
		if k == 1 {
			return m
		}
	}
}

// essQuantile is posterior's .ess_quantile.
func essQuantile(chains [][]float64, p float64) float64 {
	if returnNaN(chains) {
		return math.NaN()
	}
	s := concat(chains)
	if p == 1 {
		p = (float64(len(s)) - 0.5) / float64(len(s))
	}
	slices.Sort(s)
	q := quantileSorted(s, p)
	ind := make([][]float64, len(chains))
	for i, c := range chains {
		ind[i] = make([]float64, len(c))
		for j, v := range c {
			if v <= q {
				ind[i][j] = 1
			}
		}
	}
	return essCore(splitChains(ind))
}
