package diag

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestVerdict(t *testing.T) {
	cases := []struct {
		k    float64
		s    int
		rel  Reliability
		want string
	}{
		{0.42, 1000, Good, "k̂ = 0.42: reliable"},
		{0.6, 1000, Usable, "k̂ = 0.6: usable — the approximation is rough; PSIS-weighted estimates are reliable"},
		// Threshold at S = 1000 is 1 − 1/3 = 0.667; S ≥ 10^(1/0.32) = 1333.5 makes 0.68 usable.
		{0.68, 1000, TooFewDraws, "k̂ = 0.68: unreliable with 1000 draws — PSIS needs at least 1334 draws at this k̂"},
		{0.68, 10000, Usable, ""},
		{0.85, 1000, Poor, "k̂ = 0.85: unreliable — the approximation misses the posterior's tails and PSIS estimates are biased; try a richer family"},
		{1.3, 1000, Failed, "k̂ = 1.3: do not trust this approximation — try a richer family"},
		{math.Inf(1), 1000, Failed, "k̂ = Inf: do not trust this approximation — try a richer family"},
		{math.NaN(), 1000, Failed, ""},
		{-0.2, 1000, Good, "k̂ = -0.2: reliable"},
	}
	for _, c := range cases {
		if got := Classify(c.k, c.s); got != c.rel {
			t.Errorf("Classify(%v, %d) = %v, want %v", c.k, c.s, got, c.rel)
		}
		if c.want != "" {
			if got := Verdict(c.k, c.s, ""); got != c.want {
				t.Errorf("Verdict(%v, %d):\n got %q\nwant %q", c.k, c.s, got, c.want)
			}
		}
	}
	if got := Verdict(2, 1000, "try a full-rank Gaussian or a flow family"); got != "k̂ = 2: do not trust this approximation — try a full-rank Gaussian or a flow family" {
		t.Errorf("Verdict with advice: %q", got)
	}
	for k, want := range map[float64]string{0.704: "0.7", 0.425: "0.43", -0.001: "0", 1.296: "1.3", 12.345: "12.35"} {
		if got := FormatKhat(k); got != want {
			t.Errorf("FormatKhat(%v) = %q, want %q", k, got, want)
		}
	}
	if KhatThreshold(100) != 0.5 || KhatThreshold(1e6) != 0.7 {
		t.Errorf("KhatThreshold(100) = %v (want 0.5), (1e6) = %v (want 0.7)", KhatThreshold(100), KhatThreshold(1e6))
	}
	if TailLength(1000) != 95 || TailLength(4000) != 190 || TailLength(20) != 4 {
		t.Errorf("TailLength: %d %d %d, want 95 190 4", TailLength(1000), TailLength(4000), TailLength(20))
	}
}

func TestPSISErrors(t *testing.T) {
	for _, lr := range [][]float64{{1}, {0, math.NaN(), 1}, {0, math.Inf(1)}, {math.Inf(-1), math.Inf(-1)}} {
		if _, err := PSIS(lr); err == nil {
			t.Errorf("PSIS(%v): no error", lr)
		}
	}
	// −Inf ratios are zero weights and stay −Inf.
	lr := make([]float64, 100)
	for i := range lr {
		lr[i] = float64(i%17) / 10
	}
	lr[3] = math.Inf(-1)
	r, err := PSIS(lr)
	if err != nil || !math.IsInf(r.LogWeights[3], -1) {
		t.Errorf("PSIS with a -Inf ratio: err %v, log weight %v", err, r.LogWeights[3])
	}
}

// Importance-weighted summaries recover a known target. q = N(0, 1), p = N(0.5, 1.2²),
// S = 4000 draws from q (seed fixed); k̂ for this pair is about 0.3. Tolerance 5·MCSE with
// the PSIS effective sample size E: MCSE(mean) = σ/√E, MCSE(sd) = σ/√(2E) (normal kurtosis),
// MCSE(q95) = √(0.95·0.05)/(f(q95)·√E) with f the target density.
func TestPSISWeightedSummary(t *testing.T) {
	const S, mu, sigma = 4000, 0.5, 1.2
	rng := rand.New(rand.NewPCG(11, 12))
	x := make([]float64, S)
	lr := make([]float64, S)
	for i := range x {
		x[i] = rng.NormFloat64()
		z := (x[i] - mu) / sigma
		lr[i] = -0.5*z*z - math.Log(sigma) + 0.5*x[i]*x[i]
	}
	r, err := PSIS(lr)
	if err != nil {
		t.Fatal(err)
	}
	if r.K > 0.5 {
		t.Fatalf("k̂ = %v, expected a good fit (< 0.5)", r.K)
	}
	s, err := Summarize(&Draws{Names: []string{"x"}, Chains: [][]float64{x}}, r.LogWeights)
	if err != nil {
		t.Fatal(err)
	}
	row := s.Rows[0]
	e := r.ESS
	q95 := mu + sigma*1.6448536269514722
	f95 := math.Exp(-0.5*1.6448536269514722*1.6448536269514722) / (sigma * math.Sqrt(2*math.Pi))
	checks := []struct {
		name            string
		got, want, mcse float64
	}{
		{"mean", row.Mean, mu, sigma / math.Sqrt(e)},
		{"sd", row.SD, sigma, sigma / math.Sqrt(2*e)},
		{"median", row.Median, mu, math.Sqrt(0.25) / (1 / (sigma * math.Sqrt(2*math.Pi)) * math.Sqrt(e))},
		{"q95", row.Q95, q95, math.Sqrt(0.95*0.05) / (f95 * math.Sqrt(e))},
		{"mad", row.MAD, sigma, 1.65 * sigma / math.Sqrt(e)}, // asymptotic sd of MAD/σ ≈ 1.65/√n
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 5*c.mcse {
			t.Errorf("weighted %s = %.4f, want %.4f ± 5·%.4f", c.name, c.got, c.want, c.mcse)
		}
	}
	if !s.Weighted || !math.IsNaN(row.ESSBulk) || !math.IsNaN(row.Rhat) {
		t.Errorf("weighted summary: Weighted=%v ess_bulk=%v rhat=%v, want true NaN NaN", s.Weighted, row.ESSBulk, row.Rhat)
	}
}

// Equal weights reproduce the unweighted summary (identity; 1e-12 for summation order).
func TestEqualWeightsAreUnweighted(t *testing.T) {
	c := readDraws(t, "heavy")
	d := &Draws{Names: []string{"x"}, Chains: c.chains}
	a, _ := Summarize(d, nil)
	b, err := Summarize(d, make([]float64, d.Len()))
	if err != nil {
		t.Fatal(err)
	}
	ra, rb := a.Rows[0], b.Rows[0]
	for i, v := range ra.values()[:6] {
		if w := rb.values()[i]; !relClose(w, v, 1e-12) {
			t.Errorf("column %s: weighted %.17g, unweighted %.17g", Columns[i+1], w, v)
		}
	}
	x := []float64{3, 1, 2, 5}
	if got := WeightedQuantile(x, []float64{0.25, 0.25, 0.25, 0.25}, 0.3); !relClose(got, Quantile(x, 0.3), 1e-15) {
		t.Errorf("WeightedQuantile = %v, type-7 %v", got, Quantile(x, 0.3))
	}
	// A zero weight removes a value: quantiles of {1, 2, 5} with 3 ignored.
	if got := WeightedQuantile(x, []float64{0, 1.0 / 3, 1.0 / 3, 1.0 / 3}, 0.75); !relClose(got, Quantile([]float64{1, 2, 5}, 0.75), 1e-15) {
		t.Errorf("WeightedQuantile with a zero weight = %v, want %v", got, Quantile([]float64{1, 2, 5}, 0.75))
	}
}

func ar1Chains(rng *rand.Rand, chains, n int, phi, shift float64) [][]float64 {
	out := make([][]float64, chains)
	for c := range out {
		out[c] = make([]float64, n)
		x := rng.NormFloat64() / math.Sqrt(1-phi*phi)
		for i := range n {
			out[c][i] = x
			x = phi*x + rng.NormFloat64()
		}
	}
	for i := range out[0] {
		out[0][i] += shift
	}
	return out
}

// MCSEMean is calibrated: over 200 independent AR(1) runs (φ = 0.7, 4 chains × 500, true
// mean 0) z = mean/MCSE has E z² = 1; the mean of 200 z² has sd ≈ √(2/200) = 0.1, so the
// 5·MCSE band is [0.5, 1.5]. The average ESSBasic is compared with the true
// N(1−φ)/(1+φ) = 2000·0.3/1.7 = 352.9 to 10%: the estimator's own spread over 200 runs is
// ≈ 1–2%, and Geyer's truncation is biased by a few percent.
func TestMCSECalibration(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const reps = 200
	var z2, ess float64
	for range reps {
		ch := ar1Chains(rng, 4, 500, 0.7, 0)
		m := mean(concat(ch))
		se := MCSEMean(ch)
		z2 += (m / se) * (m / se)
		ess += ESSBasic(ch)
	}
	z2 /= reps
	ess /= reps
	if z2 < 0.5 || z2 > 1.5 {
		t.Errorf("mean z² = %.3f, want 1 ± 0.5", z2)
	}
	if want := 2000 * 0.3 / 1.7; math.Abs(ess/want-1) > 0.1 {
		t.Errorf("mean ESS = %.1f, true %.1f", ess, want)
	}
}

// R̂ flags a chain shifted by 1.5 marginal sds and passes mixed chains (fixed seed).
func TestRhatDetectsStuckChain(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	if r := Rhat(ar1Chains(rng, 4, 1000, 0.3, 0)); r > 1.01 {
		t.Errorf("mixed chains: R̂ = %.4f, want ≤ 1.01", r)
	}
	if r := Rhat(ar1Chains(rng, 4, 1000, 0.3, 1.5)); r < 1.05 {
		t.Errorf("stuck chain: R̂ = %.4f, want ≥ 1.05", r)
	}
	if r := Rhat([][]float64{{1, 1, 1, 1}, {1, 1, 1, 1}}); !math.IsNaN(r) {
		t.Errorf("constant draws: R̂ = %v, want NaN", r)
	}
}

// W1 between N(0, 1) and N(0.5, 1) samples of 20 000 is 0.5; the estimator's sd is about
// √(2/n)·σ ≈ 0.01, so 5·MCSE = 0.05. sd ratio 2 and the mean shift are checked the same way.
func TestCompareStatistical(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const n = 20000
	x, ref := make([]float64, 2*n), make([]float64, 2*n)
	for i := range n { // two variables, row-major: a shifted, b scaled
		x[2*i], x[2*i+1] = rng.NormFloat64()+0.5, 2*rng.NormFloat64()
		ref[2*i], ref[2*i+1] = rng.NormFloat64(), rng.NormFloat64()
	}
	d := &Draws{Names: []string{"a", "b"}, Chains: [][]float64{x}}
	// Reference with the variables in the other order, plus an extra one.
	r := make([]float64, 3*n)
	for i := range n {
		r[3*i], r[3*i+1], r[3*i+2] = 7, ref[2*i+1], ref[2*i]
	}
	dist, err := Compare(d, &Draws{Names: []string{"c", "b", "a"}, Chains: [][]float64{r}})
	if err != nil {
		t.Fatal(err)
	}
	a, b := dist.Vars[0], dist.Vars[1]
	// For b ~ N(0, 4) vs N(0, 1): W1 = E|Z|·(2 − 1) = √(2/π) ≈ 0.798.
	for _, c := range []struct {
		name           string
		got, want, tol float64
	}{
		{"a W1/sd", a.W1SD, 0.5, 0.05},
		{"a |Δmean|/sd", a.MeanDiffSD, 0.5, 0.05},
		{"a sd ratio", a.SDRatio, 1, 0.05},
		{"b W1/sd", b.W1SD, math.Sqrt(2 / math.Pi), 0.05},
		{"b sd ratio", b.SDRatio, 2, 0.1},
		{"mean W1/sd", dist.W1SD, (0.5 + math.Sqrt(2/math.Pi)) / 2, 0.05},
		{"max |Δmean|/sd", dist.MaxMeanDiffSD, 0.5, 0.05},
	} {
		if math.Abs(c.got-c.want) > c.tol {
			t.Errorf("%s = %.4f, want %.4f ± %.2f", c.name, c.got, c.want, c.tol)
		}
	}
	if _, err := Compare(d, &Draws{Names: []string{"a"}, Chains: [][]float64{ref[:n]}}); err == nil {
		t.Error("Compare with a missing reference variable: no error")
	}
	if w := W1([]float64{1, 2, 3}, []float64{1, 2, 3}, 0); w != 0 {
		t.Errorf("W1 of identical samples = %v", w)
	}
}

func TestDrawsLayout(t *testing.T) {
	d := &Draws{Names: []string{"a", "b"}, Chains: [][]float64{{1, 10, 2, 20, 3, 30}, {4, 40, 5, 50, 6, 60}}}
	if err := d.Check(); err != nil {
		t.Fatal(err)
	}
	v := d.Var(1)
	if d.Len() != 6 || v[0][2] != 30 || v[1][0] != 40 {
		t.Errorf("Len %d, Var(1) = %v", d.Len(), v)
	}
	if d.ChainLen() != 3 || !slices.Equal(d.Row(1, 2), []float64{6, 60}) {
		t.Errorf("ChainLen %d, Row(1, 2) = %v; want 3, [6 60]", d.ChainLen(), d.Row(1, 2))
	}
	if (&Draws{}).ChainLen() != 0 {
		t.Error("zero Draws: ChainLen not 0")
	}
	s, err := d.Select("b", "a", "b")
	if err != nil || !slices.Equal(s.Names, []string{"b", "a", "b"}) || !slices.Equal(s.Chains[1], []float64{40, 4, 40, 50, 5, 50, 60, 6, 60}) {
		t.Errorf("Select(b, a, b) = %+v, %v", s, err)
	}
	if s.Chains[0][0] = -1; d.Chains[0][1] != 10 {
		t.Error("Select shares memory with d")
	}
	if _, err := d.Select("a", "zz"); err == nil || !strings.Contains(err.Error(), `"zz"`) {
		t.Errorf("Select(a, zz): %v, want an error naming zz", err)
	}
	bad := []*Draws{
		{Names: []string{"a", "b"}, Chains: [][]float64{{1, 2, 3}}},
		{Names: []string{"a"}, Chains: [][]float64{{1, 2}, {1}}},
		{Names: nil, Chains: [][]float64{{1}}},
		{Names: []string{"a"}},
	}
	for i, b := range bad {
		if _, err := Summarize(b, nil); err == nil {
			t.Errorf("bad draws %d: no error", i)
		}
	}
	if _, err := Summarize(d, []float64{0, 0}); err == nil {
		t.Error("wrong number of log weights: no error")
	}
}

func TestSummaryFormats(t *testing.T) {
	s := &Summary{Rows: []Row{
		{"mu", 4.3712, 4.3, 3.31, 3.2, -1.2345, 9.87654, 1234.4, 987.6, 1.00312},
		{"tau[1]", 0.000123456, 1e-7, 2.5e6, 0, -0.5, 12345.6, math.NaN(), math.NaN(), math.NaN()},
	}, Notes: []string{"k̂ = 0.42: reliable"}}
	var b bytes.Buffer
	if err := s.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	want := `variable      mean    median        sd   mad      q5    q95  ess_bulk  ess_tail   rhat
mu            4.37      4.30      3.31  3.20   -1.23   9.88      1234       988  1.003
tau[1]    0.000123  1.00e-07  2.50e+06     0  -0.500  12346        NA        NA     NA

k̂ = 0.42: reliable
`
	if b.String() != want {
		t.Errorf("WriteText:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	if err := s.WriteCSV(&b); err != nil {
		t.Fatal(err)
	}
	wantCSV := "variable,mean,median,sd,mad,q5,q95,ess_bulk,ess_tail,rhat\n" +
		"mu,4.3712,4.3,3.31,3.2,-1.2345,9.87654,1234.4,987.6,1.00312\n" +
		"tau[1],0.000123456,1e-07,2.5e+06,0,-0.5,12345.6,NA,NA,NA\n"
	if b.String() != wantCSV {
		t.Errorf("WriteCSV:\n%s\nwant:\n%s", b.String(), wantCSV)
	}
	b.Reset()
	if err := s.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"rhat": null`) || !strings.Contains(b.String(), `"ess_bulk": 1234.4`) {
		t.Errorf("WriteJSON: %s", b.String())
	}
	var back Summary
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.Rows[0] != s.Rows[0] || !math.IsNaN(back.Rows[1].Rhat) || back.Rows[1].Q95 != 12345.6 || back.Notes[0] != s.Notes[0] {
		t.Errorf("JSON round trip: %+v", back)
	}
}

// Zero weights in a weighted summary act as removed draws (checks that the three weighted
// quantiles of one row do not disturb each other).
func TestZeroWeightsRemoveDraws(t *testing.T) {
	x := []float64{5, -1, 3, 100, 2, 8, -50, 4}
	lw := []float64{0, 0, 0, math.Inf(-1), 0, 0, math.Inf(-1), 0}
	kept := []float64{5, -1, 3, 2, 8, 4}
	a, err := Summarize(&Draws{Names: []string{"x"}, Chains: [][]float64{x}}, lw)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Summarize(&Draws{Names: []string{"x"}, Chains: [][]float64{kept}}, nil)
	for i, v := range b.Rows[0].values()[:6] {
		if w := a.Rows[0].values()[i]; !relClose(w, v, 1e-12) {
			t.Errorf("column %s: with zero weights %.17g, without the draws %.17g", Columns[i+1], w, v)
		}
	}
}

// TestPSISResample: resampling by the smoothed weights reproduces the self-normalised PSIS
// estimate. q = N(0, 1) proposals for p = N(0.5, 1.2²): k̂ is small, so the weights are
// nearly raw ratios; the mean of 20,000 resampled draws must equal Σ w̃ᵢ xᵢ within 5 Monte
// Carlo standard errors of the resampling step (sd of a weighted draw / √n), and a draw of
// weight zero is never picked.
func TestPSISResample(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const S, n = 4000, 20000
	x, lr := make([]float64, S), make([]float64, S)
	for i := range x {
		x[i] = r.NormFloat64()
		z := (x[i] - 0.5) / 1.2
		lr[i] = -0.5*z*z - math.Log(1.2) + 0.5*x[i]*x[i]
	}
	lr[7] = math.Inf(-1)
	ps, err := PSIS(lr)
	if err != nil {
		t.Fatal(err)
	}
	w := ps.Weights()
	want, m2 := 0.0, 0.0
	for i := range x {
		want += w[i] * x[i]
		m2 += w[i] * x[i] * x[i]
	}
	sd := math.Sqrt(m2 - want*want)
	idx, err := ps.Resample(n, r.Float64)
	if err != nil {
		t.Fatal(err)
	}
	got := 0.0
	for _, i := range idx {
		if i == 7 {
			t.Fatal("picked a zero-weight draw")
		}
		got += x[i]
	}
	got /= n
	if se := sd / math.Sqrt(n); math.Abs(got-want) > 5*se {
		t.Errorf("resampled mean %.4f, weighted mean %.4f (se %.4f)", got, want, se)
	}
	if math.Abs(want-0.5) > 0.1 { // the PSIS estimate itself: 0.5 within ≈ 4 of its own s.e.
		t.Errorf("weighted mean %.4f, want ≈ 0.5", want)
	}
	if _, err := ps.Resample(-1, r.Float64); err == nil {
		t.Error("n = -1: no error")
	}
}

// TestCompareRejectsDegenerateReference: a single-draw reference has no sd, so every distance
// was NaN and reported as a number; a constant or non-finite reference variable gave ±Inf or
// NaN the same way. Each is now an error naming the draw count or the variable.
func TestCompareRejectsDegenerateReference(t *testing.T) {
	d := &Draws{Names: []string{"a", "b"}, Chains: [][]float64{{0, 1, 1, 2, 2, 3}}}
	for _, c := range []struct {
		ref  *Draws
		want string
	}{
		{&Draws{Names: []string{"a", "b"}, Chains: [][]float64{{0.5, 1}}}, "the reference has 1 draw(s)"},
		{&Draws{Names: []string{"a", "b"}, Chains: [][]float64{{0.5}, {1}}}, "chain 0 has 1 values"},
		{&Draws{Names: []string{"b", "a"}, Chains: [][]float64{{1, 7, 2, 7, 3, 7}}}, "reference draws of a have sd 0"},
		{&Draws{Names: []string{"a", "b"}, Chains: [][]float64{{0, 7, 1, 7, 2, 7}}}, "(variable=b)"},
		{&Draws{Names: []string{"a", "b"}, Chains: [][]float64{{0, 1, math.Inf(1), 2, 2, 3}}}, "reference draws of a have sd"},
	} {
		dist, err := Compare(d, c.ref)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("reference %v: error %v (distance %+v), want one containing %q", c.ref.Chains, err, dist, c.want)
		}
	}
	// Two draws are the minimum, and give finite distances.
	dist, err := Compare(d, &Draws{Names: []string{"a", "b"}, Chains: [][]float64{{0, 1, 2, 3}}})
	if err != nil || math.IsNaN(dist.W1SD) || math.IsNaN(dist.SDRatio) || math.IsNaN(dist.MaxMeanDiffSD) {
		t.Errorf("two-draw reference: %+v, %v", dist, err)
	}
}
