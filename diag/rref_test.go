package diag

import (
	"bufio"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Reference values from R (loo 2.5.1, posterior 1.4.0), produced by testdata/gen.R.

func parseFloat(t *testing.T, s string) float64 {
	t.Helper()
	switch s {
	case "NA":
		return math.NaN()
	case "Inf":
		return math.Inf(1)
	case "-Inf":
		return math.Inf(-1)
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return v
}

type psisCase struct {
	k, ess  float64
	tailLen int
	lr, lw  []float64
}

func readPSIS(t *testing.T, name string) psisCase {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "psis_"+name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var c psisCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		switch fs[0] {
		case "k":
			c.k = parseFloat(t, fs[1])
		case "ess":
			c.ess = parseFloat(t, fs[1])
		case "tail_len":
			c.tailLen, _ = strconv.Atoi(fs[1])
		case "S", "lr":
		default:
			c.lr = append(c.lr, parseFloat(t, fs[0]))
			c.lw = append(c.lw, parseFloat(t, fs[1]))
		}
	}
	return c
}

// relClose reports |a−b| ≤ tol·max(1, |b|), treating equal infinities and two NaNs as equal.
func relClose(a, b, tol float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	if math.IsInf(a, 0) || math.IsInf(b, 0) {
		return a == b
	}
	return math.Abs(a-b) <= tol*math.Max(1, math.Abs(b))
}

// PSIS agrees with loo::psis. Tolerance 1e-12 relative: the algorithms are the same
// operation for operation, so only summation order and R's long-double sums differ
// (observed differences ≤ 1.1e-14).
func TestPSISMatchesLoo(t *testing.T) {
	for _, name := range []string{"normal1000", "normal4000", "t1000", "t4000", "wide1000",
		"lognormal4000", "small25", "small20", "flattail100"} {
		c := readPSIS(t, name)
		r, err := PSIS(c.lr)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r.TailLen != c.tailLen {
			t.Errorf("%s: tail length %d, loo %d", name, r.TailLen, c.tailLen)
		}
		if !relClose(r.K, c.k, 1e-12) {
			t.Errorf("%s: k̂ = %.17g, loo %.17g", name, r.K, c.k)
		}
		if !relClose(r.ESS, c.ess, 1e-12) {
			t.Errorf("%s: ESS = %.17g, loo %.17g", name, r.ESS, c.ess)
		}
		worst := 0.0
		for i := range c.lw {
			worst = math.Max(worst, math.Abs(r.LogWeights[i]-c.lw[i])/math.Max(1, math.Abs(c.lw[i])))
		}
		if worst > 1e-12 {
			t.Errorf("%s: smoothed log weights differ from loo by up to %.3g (relative)", name, worst)
		}
	}
}

type drawsCase struct {
	chains [][]float64
	want   map[string]float64
}

func readDraws(t *testing.T, name string) drawsCase {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "draws_"+name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	var c drawsCase
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var ch []float64
		for _, f := range strings.Fields(line) {
			ch = append(ch, parseFloat(t, f))
		}
		c.chains = append(c.chains, ch)
	}
	b, err = os.ReadFile(filepath.Join("testdata", "draws_"+name+"_expect.txt"))
	if err != nil {
		t.Fatal(err)
	}
	c.want = map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		fs := strings.Fields(line)
		key, _, _ := strings.Cut(fs[0], ".") // "ess_q05.ess_q5" → "ess_q05"
		c.want[key] = parseFloat(t, fs[1])
	}
	return c
}

var drawsCases = []string{"ar1", "ar1odd", "stuck", "antithetic", "heavy", "ties", "iid1", "short"}

// ESS, R̂ and MCSE agree with R's posterior. Tolerance 1e-12 relative: same algorithm; the
// FFT library and R's long-double sums differ in rounding only (observed ≲ 1e-14).
func TestConvergenceMatchesPosterior(t *testing.T) {
	for _, name := range drawsCases {
		c := readDraws(t, name)
		got := map[string]float64{
			"rhat":       Rhat(c.chains),
			"rhat_basic": RhatBasic(c.chains),
			"ess_bulk":   ESSBulk(c.chains),
			"ess_tail":   ESSTail(c.chains),
			"ess_basic":  ESSBasic(c.chains),
			"ess_q05":    ESSQuantile(c.chains, 0.05),
			"ess_q50":    ESSQuantile(c.chains, 0.5),
			"ess_q95":    ESSQuantile(c.chains, 0.95),
			"mcse_mean":  MCSEMean(c.chains),
			"mcse_sd":    MCSESD(c.chains),
			"mcse_q05":   MCSEQuantile(c.chains, 0.05),
			"mcse_q50":   MCSEQuantile(c.chains, 0.5),
			"mcse_q95":   MCSEQuantile(c.chains, 0.95),
		}
		for k, v := range got {
			if w, ok := c.want[k]; !ok {
				t.Fatalf("%s: no reference for %s", name, k)
			} else if !relClose(v, w, 1e-12) {
				t.Errorf("%s %s = %.17g, posterior %.17g", name, k, v, w)
			}
		}
	}
}

// Summarize's columns agree with posterior::summarise_draws (same tolerance and reason).
func TestSummaryMatchesPosterior(t *testing.T) {
	for _, name := range drawsCases {
		c := readDraws(t, name)
		d := &Draws{Names: []string{"x"}, Chains: c.chains} // D = 1: rows are the draws
		s, err := Summarize(d, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := s.Rows[0]
		for k, v := range map[string]float64{"mean": r.Mean, "median": r.Median, "sd": r.SD,
			"mad": r.MAD, "q5": r.Q5, "q95": r.Q95, "s_rhat": r.Rhat, "s_ess_bulk": r.ESSBulk,
			"s_ess_tail": r.ESSTail} {
			if w := c.want[k]; !relClose(v, w, 1e-12) {
				t.Errorf("%s %s = %.17g, summarise_draws %.17g", name, k, v, w)
			}
		}
	}
}

// W1/sd, sd ratio and |Δmean|/sd agree with the R one-liners in gen.R (tolerance 1e-12: the
// same type-7 quantiles and sums, in a different order).
func TestDistanceMatchesR(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "dist_xy.txt")) // method draws, reference draws
	if err != nil {
		t.Fatal(err)
	}
	var xy [][]float64
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var v []float64
		for _, f := range strings.Fields(line) {
			v = append(v, parseFloat(t, f))
		}
		xy = append(xy, v)
	}
	b, err = os.ReadFile(filepath.Join("testdata", "dist_expect.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		fs := strings.Fields(line)
		want[fs[0]] = parseFloat(t, fs[1])
	}
	x, ref := xy[0], xy[1]
	v := CompareVar("x", x, ref)
	for k, got := range map[string]float64{"w1sd": v.W1SD, "sdratio": v.SDRatio, "meandiffsd": v.MeanDiffSD, "w1_q10": W1(x, ref, 10)} {
		if !relClose(got, want[k], 1e-12) {
			t.Errorf("%s = %.17g, R %.17g", k, got, want[k])
		}
	}
}
