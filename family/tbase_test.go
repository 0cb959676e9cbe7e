package family

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vigo-bayes/vigo/flow"
	"github.com/vigo-bayes/vigo/nn"
)

// tQuantileRefs are G(a) = F_ν⁻¹(Φ(a)) for {ν, a, G}, computed with mpmath at 40 digits
// (scipy's stdtrit is off by up to 2e-9 relative here and clips at 1e100):
//
//	/usr/bin/python3 -c '
//	from mpmath import mp, mpf, betainc, erfc, log, exp, findroot, sqrt, nstr
//	mp.dps = 40
//	def G(nu, a):
//	    nu, a = mpf(nu), mpf(a)
//	    tgt = log(erfc(a/sqrt(2)))
//	    f = lambda s: log(betainc(nu/2, mpf(1)/2, 0, nu/(nu+exp(2*s)), regularized=True)) - tgt
//	    return exp(findroot(f, log(a)+mpf(0.1)))
//	for nu in [1, 3, 5, 10, 30, 1000]:
//	    for a in ["1e-6", "5e-5", "2e-4", "0.3", "0.674", "0.7", "1.5", "3", "6", "8", "12", "30"]:
//	        print("{%s, %s, %s}," % (nu, a, nstr(G(nu, mpf(a)), 17)))'
var tQuantileRefs = [][3]float64{
	{1, 1e-6, 1.2533141373159476e-6},
	{1, 5e-5, 6.266570692169352e-5},
	{1, 2e-4, 0.00025066283104188455},
	{1, 0.3, 0.38835753857297635},
	{1, 0.674, 0.99902245717859525},
	{1, 0.7, 1.0518129904075024},
	{1, 1.5, 4.6944377622895908},
	{1, 3, 235.80149796046805},
	{1, 6, 322637210.98152192},
	{1, 8, 511673209279342.73},
	{1, 12, 1.791798994314175e+32},
	{1, 30, 6.4872313917187012e+196},
	{3, 1e-6, 1.0854018818375047e-6},
	{3, 5e-5, 5.4270094104777229e-5},
	{3, 2e-4, 0.00021708037719353818},
	{3, 0.3, 0.3284275609724134},
	{3, 0.674, 0.76428770201891606},
	{3, 0.7, 0.79654391968128628},
	{3, 1.5, 2.0433574253136934},
	{3, 3, 9.2189404587002563},
	{3, 6, 1037.7702313076621},
	{3, 8, 121021.10121376942},
	{3, 12, 85302148628.324416},
	{3, 30, 6.0797166251296465e+65},
	{5, 1e-6, 1.0509358530746686e-6},
	{5, 5e-5, 5.2546792660854162e-5},
	{5, 2e-4, 0.00021018717107083147},
	{5, 0.3, 0.31682554986595562},
	{5, 0.674, 0.72613279125626441},
	{5, 0.7, 0.75562937276832475},
	{5, 1.5, 1.7891311974058972},
	{5, 3, 5.5070797124692919},
	{5, 6, 99.204894849025136},
	{5, 8, 1724.5785118577528},
	{5, 12, 5565992.3545944732},
	{5, 30, 4.5425176720644658e+39},
	{10, 1e-6, 1.0252728978367902e-6},
	{10, 5e-5, 5.1263644895176781e-5},
	{10, 2e-4, 0.00020505457978102362},
	{10, 0.3, 0.30830440028944693},
	{10, 0.674, 0.69929180182052249},
	{10, 0.7, 0.72694900334813639},
	{10, 1.5, 1.6325464811623946},
	{10, 3, 3.9569366600027505},
	{10, 6, 20.172531116356496},
	{10, 8, 84.985709731471398},
	{10, 12, 4831.1540913701015},
	{10, 30, 1.3801553873864136e+20},
	{30, 1e-6, 1.0083665981528382e-6},
	{30, 5e-5, 5.0418329908706499e-5},
	{30, 2e-4, 0.00020167331969872699},
	{30, 0.3, 0.3027401682127208},
	{30, 0.674, 0.68225612440586753},
	{30, 0.7, 0.70878908644162492},
	{30, 1.5, 1.5417640282248019},
	{30, 3, 3.2703338824733161},
	{30, 6, 8.4511953402657849},
	{30, 8, 15.194553083066096},
	{30, 12, 61.73769114455677},
	{30, 30, 18944884.809710346},
	{1000, 1e-6, 1.0002500312109275e-6},
	{1000, 5e-5, 5.0012501560577636e-5},
	{1000, 2e-4, 0.00020005000624418679},
	{1000, 0.3, 0.30008176399115742},
	{1000, 0.674, 0.67424512483775991},
	{1000, 0.7, 0.70026083779210214},
	{1000, 1.5, 1.5012197554830625},
	{1000, 3, 3.0075172802261371},
	{1000, 6, 6.0559437797309731},
	{1000, 8, 8.1318104116757097},
	{1000, 12, 12.448545487632342},
	{1000, 30, 38.218161276546687},
}

// TestTBaseQuantile checks G = F_ν⁻¹∘Φ against mpmath in the centre, both branch sides
// (P(|Z| > a) = ½ at a ≈ 0.6745), the Taylor branch and far in the tails, and that G is odd.
func TestTBaseQuantile(t *testing.T) {
	for _, c := range tQuantileRefs {
		b := newTBase(c[0])
		got := b.fromNormal(c[1])
		// The logs of the two probabilities are accurate to a few ulps (LogNormCDF, Erf,
		// LogRegIncBeta), and their slope in log t is between ≈0.7 and 2ν, so log t is
		// accurate to ≈1e-15 at ν = 1000 as well; 1e-12 relative leaves room for the
		// incomplete beta's continued fraction at ν = 1000.
		if math.Abs(got-c[2]) > 1e-12*c[2] {
			t.Errorf("ν=%g: G(%g) = %.17g, mpmath %.17g (rel err %.2g)", c[0], c[1], got, c[2], math.Abs(got/c[2]-1))
		}
		if neg := b.fromNormal(-c[1]); neg != -got {
			t.Errorf("ν=%g: G(−%g) = %g, want −G(%g) = %g", c[0], c[1], neg, c[1], -got)
		}
	}
	b := newTBase(5)
	if g := b.fromNormal(0); g != 0 {
		t.Errorf("G(0) = %g", g)
	}
	prev := math.Inf(-1)
	for z := -9.0; z <= 9; z += 0.01 {
		g := b.fromNormal(z)
		if !(g > prev) {
			t.Fatalf("G not increasing at z=%g: %g after %g", z, g, prev)
		}
		prev = g
	}
}

// TestTBaseNormalised integrates exp(LogProb) of flows with a t base on ℝ (1-D) with the
// substitution z = sinh(w): the mass is 1 only if the base density, its constant and the
// inverse path all agree.
func TestTBaseNormalised(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for _, q := range []*Flow{
		NewFlow(flow.NewMAF(nn.NewMADE(1, []int{4}, 2)), FlowBaseDF(3)),
		NewFlow(flow.NewBernstein(1, 8, flow.BernsteinTails(flow.LinearTails)), FlowBaseDF(5)),
		NewFlow(flow.NewBernstein(1, 8, flow.BernsteinTails(flow.LinearTails)), FlowBaseDF(1)),
	} {
		p := make([]float64, q.NumParams())
		q.Init(p, []float64{0.3}, 1.3)
		for i := range p {
			p[i] += 0.2 * r.NormFloat64()
		}
		// Midpoint rule in w on [−W, W] with z = sinh(w), dz = cosh(w)dw. The mass beyond
		// |z| = sinh(30) ≈ 5e12 is ≲ 1e-12 even for ν = 1 (a Cauchy tail: 2/(π·5e12));
		// h = 0.002 on a smooth integrand in w gives errors far below 1e-8 (checked: h = 0.001
		// changes the mass by < 1e-10).
		const W, h = 30.0, 0.002
		mass := 0.0
		z := make([]float64, 1)
		for i := range int(2 * W / h) {
			w := -W + (float64(i)+0.5)*h
			z[0] = math.Sinh(w)
			mass += math.Exp(q.LogProb(p, z)) * math.Cosh(w) * h
		}
		if math.Abs(mass-1) > 1e-8 {
			t.Errorf("ν=%g: ∫q = %.10f, want 1", q.BaseDF(), mass)
		}
	}
}

// TestTBaseInit: with the identity flow after Init(loc, scale) q is the product of t_ν
// densities with location loc and standard deviation scale; SetMoments sets the variances,
// which Moments recovers.
func TestTBaseInit(t *testing.T) {
	const d = 2
	for _, nu := range []float64{1, 5, 10} {
		q := NewFlow(flow.NewBernsteinAR(nn.NewMADE(d, []int{4}, 5), flow.BernsteinTails(flow.LinearTails)), FlowBaseDF(nu))
		p := make([]float64, q.NumParams())
		loc := []float64{1, -2}
		const scale = 0.7
		q.Init(p, loc, scale)
		s := scale // the t's scale parameter: sd/√(ν/(ν−2)), or scale itself for ν ≤ 2
		if nu > 2 {
			s = scale * math.Sqrt((nu-2)/nu)
		}
		for _, z := range [][]float64{{0, 0}, {3, 1}, {-20, 40}} {
			want := 0.0
			for i := range d {
				u := (z[i] - loc[i]) / s
				lg1, _ := math.Lgamma((nu + 1) / 2)
				lg2, _ := math.Lgamma(nu / 2)
				want += lg1 - lg2 - 0.5*math.Log(nu*math.Pi) - math.Log(s) - (nu+1)/2*math.Log1p(u*u/nu)
			}
			// The identity Bernstein map is exact up to rounding of its coefficients.
			if got := q.LogProb(p, z); math.Abs(got-want) > 1e-10*(1+math.Abs(want)) {
				t.Errorf("ν=%g: Init log q(%v) = %.15g, want %.15g", nu, z, got, want)
			}
		}
		if nu <= 4 {
			continue // the sample variance of a t with ν ≤ 4 has no finite variance
		}
		cov := []float64{0.5, 0.1, 0.1, 2}
		if err := q.SetMoments(p, loc, cov); err != nil {
			t.Fatal(err)
		}
		m, C := make([]float64, d), make([]float64, d*d)
		q.Moments(p, m, C)
		for i := range d {
			if math.Abs(m[i]-loc[i]) > 1e-10*(1+math.Abs(loc[i])) { // antithetic draws, odd map
				t.Errorf("ν=%g: mean[%d] %g, want %g", nu, i, m[i], loc[i])
			}
			// Sample variance of 2¹³ t_ν draws: sd = var·√((2 + κ)/n) with excess kurtosis
			// κ = 6/(ν−4) (6 for ν = 5, 1 for ν = 10): ≤ 0.03·var; allow 5 sd.
			v := cov[i*d+i]
			if sd := v * math.Sqrt((2+6/(nu-4))/MomentDraws); math.Abs(C[i*d+i]-v) > 5*sd {
				t.Errorf("ν=%g: var[%d] %g, want %g ± %g", nu, i, C[i*d+i], v, 5*sd)
			}
		}
	}
}

// TestTBaseLimits: ν outside [MinBaseDF, MaxBaseDF] panics; +Inf is the Gaussian.
func TestTBaseLimits(t *testing.T) {
	if q := NewFlow(flow.NewAffine(1), FlowBaseDF(math.Inf(1))); !math.IsInf(q.BaseDF(), 1) || !q.base.gaussian() {
		t.Error("FlowBaseDF(+Inf) is not the Gaussian base")
	}
	for _, nu := range []float64{0, 0.5, 2000, math.NaN(), -3} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("FlowBaseDF(%g) did not panic", nu)
				}
			}()
			FlowBaseDF(nu)
		}()
	}
}

// BenchmarkTBaseQuantile times G on standard-normal input (ν = 5).
func BenchmarkTBaseQuantile(b *testing.B) {
	tb := newTBase(5)
	r := rand.New(rand.NewPCG(1, 1))
	z := make([]float64, 1024)
	for i := range z {
		z[i] = r.NormFloat64()
	}
	s := 0.0
	for i := 0; b.Loop(); i++ {
		s += tb.fromNormal(z[i%len(z)])
	}
	_ = s
}
