package diag

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// The bootstrap sd of k̂ tracks the real sampling sd of k̂: for log weights whose weights have
// a generalised Pareto tail of shape 0.6 (w = (U^{−ξ} − 1)/ξ, so k = ξ = 0.6), the sd of k̂ over
// 200 independent sets of 1,000 draws is compared with the bootstrap sd of single sets. The
// bootstrap sd of one set is itself noisy, so the check is on the median over 20 sets, within
// a factor 1.6 of the real sd (a bootstrap of a tail-index estimator is biased by tens of per
// cent, not by factors; seeds fixed).
func TestKhatBootVarTracksSamplingSD(t *testing.T) {
	const xi, n = 0.6, 1000
	rng := rand.New(rand.NewPCG(5, 6))
	draw := func() []float64 {
		lw := make([]float64, n)
		for i := range lw {
			u := rng.Float64()
			lw[i] = math.Log((math.Pow(u, -xi) - 1) / xi)
		}
		return lw
	}
	var ks []float64
	for range 200 {
		r, err := PSIS(draw())
		if err != nil {
			t.Fatal(err)
		}
		ks = append(ks, r.K)
	}
	mean, ss := 0.0, 0.0
	for _, k := range ks {
		mean += k
	}
	mean /= float64(len(ks))
	for _, k := range ks {
		ss += (k - mean) * (k - mean)
	}
	real := math.Sqrt(ss / float64(len(ks)-1))
	var boots []float64
	for s := range 20 {
		boots = append(boots, math.Sqrt(KhatBootVar(draw(), 100, rand.New(rand.NewPCG(uint64(s), 7)))))
	}
	med := median(boots)
	t.Logf("k̂ mean %.3f, sampling sd %.3f, median bootstrap sd %.3f", mean, real, med)
	if !(med > real/1.6 && med < real*1.6) {
		t.Errorf("median bootstrap sd %.3f, sampling sd %.3f: off by more than a factor 1.6", med, real)
	}
	if v := KhatBootVar([]float64{1, 2}, 1, rng); v != 0 {
		t.Errorf("one resample: variance %v, want 0", v)
	}
}

func median(x []float64) float64 {
	y := append([]float64(nil), x...)
	sort.Float64s(y)
	if len(y)%2 == 1 {
		return y[len(y)/2]
	}
	return (y[len(y)/2-1] + y[len(y)/2]) / 2
}

// BenchmarkKhatBootVar times the bootstrap behind fit.Result.KHatSD: 100 resamples of 1,000
// log weights.
func BenchmarkKhatBootVar(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	lw := make([]float64, 1000)
	for i := range lw {
		lw[i] = rng.NormFloat64()
	}
	for b.Loop() {
		KhatBootVar(lw, 100, rand.New(rand.NewPCG(3, 4)))
	}
}
