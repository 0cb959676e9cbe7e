package apovi

import (
	"math"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/rng"
)

// TestGPDatasetsCovariance checks the generator's second moments against the SE kernel plus
// noise. Per dataset, given its inputs, t = y₀y₁ − c₀₁ (c = k + σ²δ) has mean 0 and, the
// outputs being jointly Gaussian, variance c₀₀c₁₁ + c₀₁² (Isserlis); the datasets are
// independent, so z = Σt / √Σ(c₀₀c₁₁ + c₀₁²) is N(0, 1) up to the central limit theorem's
// error over 4,000 datasets. Likewise for t = y₀² − c₀₀ with variance 2c₀₀². |z| < 4.4 fails
// falsely with probability 1.1e-5 per statistic (2.2e-5 for the pair). The same statistic
// computed under the wrong lengthscale (2 ln 2) or variance (2 ln 2) must be far from 0, so
// the test can fail.
func TestGPDatasetsCovariance(t *testing.T) {
	const n = 4000
	ds, err := GPDatasets(GPConfig{}, n, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != n {
		t.Fatalf("got %d datasets, want %d", len(ds), n)
	}
	zstats := func(ell, v float64) (zPair, zDiag float64) {
		const noise2 = 0.05 * 0.05
		var sp, vp, sd, vd float64
		for _, d := range ds {
			x, y := d.X, d.Y
			c00 := SEKernel(x[0], x[0], ell, v) + noise2
			c11 := SEKernel(x[1], x[1], ell, v) + noise2
			c01 := SEKernel(x[0], x[1], ell, v)
			sp += y[0]*y[1] - c01
			vp += c00*c11 + c01*c01
			sd += y[0]*y[0] - c00
			vd += 2 * c00 * c00
		}
		return sp / math.Sqrt(vp), sd / math.Sqrt(vd)
	}
	zp, zd := zstats(math.Ln2, math.Ln2)
	if math.Abs(zp) > 4.4 || math.Abs(zd) > 4.4 {
		t.Errorf("moments off the SE kernel: z(pair) = %.2f, z(diag) = %.2f, want |z| < 4.4", zp, zd)
	}
	if zw, _ := zstats(2*math.Ln2, math.Ln2); math.Abs(zw) < 6 {
		t.Errorf("the pair statistic does not see a doubled lengthscale: z = %.2f", zw)
	}
	if _, zw := zstats(math.Ln2, 2*math.Ln2); math.Abs(zw) < 6 {
		t.Errorf("the diagonal statistic does not see a doubled variance: z = %.2f", zw)
	}
}

// TestGPDatasetsRanges checks N ∈ {10, …, 49} (each end reached over 4,000 datasets: a given
// N is missed with probability (39/40)^4000 ≈ 1e-44), x ∈ (−2, 2], one column each, the seed's
// reproducibility and the 1-D experiment's MaxN.
func TestGPDatasetsRanges(t *testing.T) {
	ds, err := GPDatasets(GPConfig{}, 4000, 3)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi := 1000, 0
	for i, d := range ds {
		if d.DX != 1 || d.DY != 1 || len(d.X) != len(d.Y) {
			t.Fatalf("dataset %d: DX=%d DY=%d len X=%d len Y=%d", i, d.DX, d.DY, len(d.X), len(d.Y))
		}
		lo, hi = min(lo, len(d.X)), max(hi, len(d.X))
		for _, x := range d.X {
			if !(x > -2 && x <= 2) {
				t.Fatalf("dataset %d: x = %v outside (−2, 2]", i, x)
			}
		}
	}
	if lo != 10 || hi != 49 {
		t.Errorf("N ranges over [%d, %d], want [10, 49]", lo, hi)
	}
	again, _ := GPDatasets(GPConfig{}, 3, 3)
	for i := range again {
		if again[i].Y[0] != ds[i].Y[0] || len(again[i].Y) != len(ds[i].Y) {
			t.Fatalf("dataset %d differs between two runs with seed 3", i)
		}
	}
	other, _ := GPDatasets(GPConfig{}, 1, 4)
	if other[0].Y[0] == ds[0].Y[0] {
		t.Error("seeds 3 and 4 give the same first output")
	}
	small, _ := GPDatasets(GPConfig{MinN: 10, MaxN: 20}, 500, 1)
	for _, d := range small {
		if n := len(d.X); n < 10 || n > 19 {
			t.Fatalf("MaxN 20: N = %d", n)
		}
	}
}

func TestGPDatasetsBadConfig(t *testing.T) {
	cases := []struct {
		cfg   GPConfig
		n     int
		field string
	}{
		{GPConfig{Lengthscale: -1}, 1, "Lengthscale"},
		{GPConfig{Variance: math.NaN()}, 1, "Variance"},
		{GPConfig{Noise: -0.1}, 1, "Noise"},
		{GPConfig{XMin: 2, XMax: 1}, 1, "XMin"},
		{GPConfig{MinN: 5, MaxN: 5}, 1, "MaxN"},
		{GPConfig{MinN: -1, MaxN: 5}, 1, "MinN"},
		{GPConfig{}, -1, "n=-1"},
	}
	for _, c := range cases {
		_, err := GPDatasets(c.cfg, c.n, 1)
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%+v, n=%d: error %v, want one naming %s", c.cfg, c.n, err, c.field)
		}
	}
	if ds, err := GPDatasets(GPConfig{}, 0, 1); err != nil || len(ds) != 0 {
		t.Errorf("n = 0: %d datasets, err %v", len(ds), err)
	}
}

// TestGPDrawJitter: repeated inputs make K exactly singular; the jitter must rescue the
// factorisation, and the repeated inputs must get (nearly) the same value.
func TestGPDrawJitter(t *testing.T) {
	x := []float64{0.3, 0.3, 0.3, -1, 1.5, 1.5}
	f, err := gpDraw(x, math.Ln2, math.Ln2, rng.New(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range f {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			t.Fatalf("draw %v", f)
		}
	}
	// The jitter is at most 1e-4·σ_f², so duplicates differ by O(√jitter) ≤ 0.01·σ_f.
	if math.Abs(f[0]-f[1]) > 0.05 || math.Abs(f[4]-f[5]) > 0.05 {
		t.Errorf("duplicated inputs got different values: %v", f)
	}
}

func TestSEKernel(t *testing.T) {
	// σ_f² exp(−½) at a distance of one lengthscale.
	if got, want := SEKernel(0, math.Ln2, math.Ln2, math.Ln2), math.Ln2*math.Exp(-0.5); math.Abs(got-want) > 1e-15 {
		t.Errorf("k = %v, want %v", got, want)
	}
	if got := SEKernel(1, 1, 2, 3); got != 3 {
		t.Errorf("k(x, x) = %v, want the variance 3", got)
	}
}

// TestCubic: 100 points, x and y standardised (mean 0, unbiased sd 1 to rounding), the two
// input clusters on either side of 0, and y increasing with x (x³ dominates the noise: the raw
// signal sd is ≈ 30 against noise sd 3, so the correlation of y with x exceeds 0.9 for any seed).
func TestCubic(t *testing.T) {
	d := Cubic(1)
	if d.N != 100 {
		t.Fatalf("N = %d", d.N)
	}
	for _, v := range [][]float64{d.X, d.Y} {
		m, s := meanSD(v)
		if math.Abs(m) > 1e-12 || math.Abs(s-1) > 1e-12 {
			t.Errorf("mean %v sd %v, want 0 and 1", m, s)
		}
	}
	for i, x := range d.X {
		if (i < 50) != (x < 0) {
			t.Fatalf("x[%d] = %v on the wrong side", i, x)
		}
	}
	c := 0.0
	for i := range d.X {
		c += d.X[i] * d.Y[i]
	}
	if c /= 99; c < 0.9 {
		t.Errorf("corr(x, y) = %v, want > 0.9", c)
	}
	if Cubic(1).Y[5] != d.Y[5] || Cubic(2).Y[5] == d.Y[5] {
		t.Error("Cubic is not a function of its seed")
	}
}

func meanSD(v []float64) (float64, float64) {
	m := 0.0
	for _, a := range v {
		m += a
	}
	m /= float64(len(v))
	s := 0.0
	for _, a := range v {
		s += (a - m) * (a - m)
	}
	return m, math.Sqrt(s / float64(len(v)-1))
}
