package bfvi

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/diag"
)

// z95 is the 0.95 quantile of N(0, 1): the BF-VI paper's intervals are k̄ ± z₀.₉₅·√var (90%).
const z95 = 1.6448536269514722

// BootstrapKHat returns the PSIS k̂ of logRatios and the variance of k̂ over b bootstrap
// resamples (draws with replacement, seeded by seed), as the BF-VI paper's evaluation script
// does per run (loo::psis, 1,000 resamples). Cost O(b·S log S).
func BootstrapKHat(logRatios []float64, b int, seed uint64) (k, variance float64, err error) {
	r, err := diag.PSIS(logRatios)
	if err != nil {
		return 0, 0, fmt.Errorf("bfvi: BootstrapKHat: %w", err)
	}
	if b < 2 {
		return r.K, 0, nil
	}
	return r.K, diag.KhatBootVar(logRatios, b, rand.New(rand.NewPCG(seed, 0x6266766921))), nil
}

// Rubin combines per-run estimates k_r with their within-run (bootstrap) variances v_r by
// Rubin's rule, as the BF-VI paper does over its 5 restarts:
//
//	k̄ = mean(k_r),  var = mean(v_r) + (1 + 1/m)·s²(k_r),  interval k̄ ± z₀.₉₅·√var,
//
// s² the sample variance (divisor m − 1). Panics when the slices differ in length or are empty.
func Rubin(k, v []float64) (mean, lo, hi float64) {
	if len(k) != len(v) || len(k) == 0 {
		panic("bfvi: Rubin: need equal, non-empty slices")
	}
	mean, between := meanVar(k)
	within, _ := meanVar(v)
	m := float64(len(k))
	half := z95 * math.Sqrt(within+(1+1/m)*between)
	return mean, mean - half, mean + half
}

// meanVar returns the mean and the sample variance (divisor n − 1; 0 when n < 2).
func meanVar(x []float64) (mean, variance float64) {
	if len(x) == 0 {
		return math.NaN(), 0
	}
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, 0
	}
	for _, v := range x {
		variance += (v - mean) * (v - mean)
	}
	return mean, variance / float64(len(x)-1)
}
