package kernel

import (
	"bufio"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// softplusRef is the definition with math.Exp, math.Log1p and one division.
func softplusRef(r float64) (sp, sg float64) {
	e := math.Exp(-math.Abs(r))
	sp, sg = max(r, 0)+math.Log1p(e), 1/(1+e)
	if r < 0 {
		sg = e / (1 + e)
	}
	return sp, sg
}

// Against math.Exp/math.Log1p on a dense grid: the reference itself has up to ≈ 2 ulp of
// error (math.Exp and math.Log1p each below 1 ulp, then a rounded division or sum), so 3 ulp
// here means agreement within the references' own error; the exact comparison is
// TestSoftplusReference.
func TestSoftplusVsMath(t *testing.T) {
	var grid []float64
	for r := -746.5; r <= 746.5; r += 1e-3 {
		grid = append(grid, r)
	}
	for e := -320.0; e <= 2; e += 0.01 { // every scale near 0, both signs
		grid = append(grid, math.Pow(10, e), -math.Pow(10, e))
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 200000 {
		grid = append(grid, rng.NormFloat64(), 40*(2*rng.Float64()-1), 800*(2*rng.Float64()-1))
	}
	grid = append(grid, 5e-324, -5e-324, math.SmallestNonzeroFloat64*1e3, 0, math.Copysign(0, -1),
		math.MaxFloat64, -math.MaxFloat64, 708.3964185322641, -708.3964185322641)
	for _, im := range softplusImpls() {
		sp := make([]float64, len(grid))
		sg := make([]float64, len(grid))
		for i := 0; i < len(grid); i += 997 {
			j := min(i+997, len(grid))
			im.f(sp[i:j], sg[i:j], grid[i:j])
		}
		var wsp, wsg, asp, asg float64
		for i, r := range grid {
			rsp, rsg := softplusRef(r)
			if d := ulpDiff(sp[i], rsp); d > wsp {
				wsp, asp = d, r
			}
			if d := ulpDiff(sg[i], rsg); d > wsg {
				wsg, asg = d, r
			}
		}
		t.Logf("%s: softplus max %g ulp (at r=%v), σ max %g ulp (at r=%v) vs math over %d points", im.name, wsp, asp, wsg, asg, len(grid))
		if wsp > 3 || wsg > 3 {
			t.Errorf("%s: softplus %g ulp at r=%v, σ %g ulp at r=%v", im.name, wsp, asp, wsg, asg)
		}
	}
}

// softplusImpls are the exported Softplus (whichever implementation the build selected) and
// the pure-Go one.
func softplusImpls() []struct {
	name string
	f    func(sp, sg, r []float64)
} {
	return []struct {
		name string
		f    func(sp, sg, r []float64)
	}{{"Softplus", Softplus}, {"softplusGo", softplusGo}}
}

// Against exact values (testdata/gen_softplus.py, mpmath at 240 bits): the bounds stated on
// Softplus, 1.5 ulp for softplus (log1p(e) adds its rounding to e's) and 2 ulp for σ (e, the
// division and, for r < 0, the product round: 0.6 + 0.5 + 0.5 and the error of 1 + e).
func TestSoftplusReference(t *testing.T) {
	f, err := os.Open("testdata/softplus_ref.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r, sp, spd, sg, sgd []float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		var v [5]float64
		for i := range v {
			if v[i], err = strconv.ParseFloat(fs[i], 64); err != nil {
				t.Fatal(err)
			}
		}
		r, sp, spd, sg, sgd = append(r, v[0]), append(sp, v[1]), append(spd, v[2]), append(sg, v[3]), append(sgd, v[4])
	}
	for _, im := range softplusImpls() {
		gsp := make([]float64, len(r))
		gsg := make([]float64, len(r))
		im.f(gsp, gsg, r)
		var wsp, wsg float64
		for i := range r {
			if sp[i] == 0 || sg[i] == 0 { // exact value below the smallest subnormal: want 0
				if (sp[i] == 0 && gsp[i] != 0) || (sg[i] == 0 && gsg[i] != 0) {
					t.Errorf("%s: r=%v: got (%v, %v), want (%v, %v)", im.name, r[i], gsp[i], gsg[i], sp[i], sg[i])
				}
			}
			if sp[i] != 0 {
				wsp = max(wsp, math.Abs((gsp[i]-sp[i])/ulpOf(sp[i])-spd[i]))
			}
			if sg[i] != 0 {
				wsg = max(wsg, math.Abs((gsg[i]-sg[i])/ulpOf(sg[i])-sgd[i]))
			}
		}
		t.Logf("%s: max error vs exact over %d points: softplus %.3f ulp, σ %.3f ulp", im.name, len(r), wsp, wsg)
		if wsp > 1.5 || wsg > 2 {
			t.Errorf("%s: error softplus %.3f ulp, σ %.3f ulp, want ≤ 1.5 and 2", im.name, wsp, wsg)
		}
	}
}

func TestSoftplusSpecial(t *testing.T) {
	negZero := math.Copysign(0, -1)
	cases := []struct{ r, sp, sg float64 }{
		{math.NaN(), math.NaN(), math.NaN()},
		{math.Inf(1), math.Inf(1), 1},
		{math.Inf(-1), 0, 0},
		{0, math.Ln2, 0.5},
		{negZero, math.Ln2, 0.5},
		{1e300, 1e300, 1},
		{-1e300, 0, 0},
		{-745.2, 0, 0},                 // e^r rounds to 0
		{-745, math.Exp(-745), 5e-324}, // smallest subnormals
		{800, 800, 1},
		{37, 37 + math.Exp(-37), 1 / (1 + math.Exp(-37))},
	}
	for _, im := range softplusImpls() {
		for _, c := range cases {
			for _, n := range []int{1, 3, 4, 7} { // scalar tail and vector lanes
				r := make([]float64, n)
				for i := range r {
					r[i] = c.r
				}
				sp, sg := make([]float64, n), make([]float64, n)
				im.f(sp, sg, r)
				for i := range n {
					if ulpDiff(sp[i], c.sp) > 1 || ulpDiff(sg[i], c.sg) > 1 {
						t.Errorf("%s(%v) = (%v, %v), want (%v, %v)", im.name, c.r, sp[i], sg[i], c.sp, c.sg)
					}
				}
			}
		}
	}
	// Aliasing: outputs may overwrite the input.
	r := []float64{-3, 0.5, 2, -1, 4}
	sp := append([]float64(nil), r...)
	sg := make([]float64, len(r))
	Softplus(sp, sg, sp)
	for i, v := range r {
		wsp, wsg := softplusRef(v)
		if ulpDiff(sp[i], wsp) > 2 || ulpDiff(sg[i], wsg) > 2 {
			t.Errorf("aliased Softplus(%v) = (%v, %v), want (%v, %v)", v, sp[i], sg[i], wsp, wsg)
		}
	}
}

func BenchmarkSoftplus(b *testing.B) {
	x, sp := benchArgs(-5, 5)
	sg := make([]float64, len(x))
	benchCPU(b, func() { Softplus(sp, sg, x) })
}

// BenchmarkSoftplusExpLog1p is the same result from the separate Exp and Log1p passes and a
// division, as the Bernstein flows computed it before Softplus.
func BenchmarkSoftplusExpLog1p(b *testing.B) {
	x, sp := benchArgs(-5, 5)
	sg := make([]float64, len(x))
	e := make([]float64, len(x))
	benchCPU(b, func() {
		for i, v := range x {
			e[i] = -math.Abs(v)
		}
		Exp(e, e)
		Log1p(sp, e)
		for i, v := range x {
			num := 1.0
			if v < 0 {
				num = e[i]
			}
			sg[i] = num / (1 + e[i])
			sp[i] += 0.5 * (v + math.Abs(v))
		}
	})
}

// BenchmarkSoftplus50 is one call on 50 elements, a Bernstein flow's increments of one
// coordinate at M = 50.
func BenchmarkSoftplus50(b *testing.B) {
	x, sp := benchArgs(-5, 5)
	sg := make([]float64, len(x))
	benchCPU(b, func() { Softplus(sp[:50], sg[:50], x[:50]) })
}
