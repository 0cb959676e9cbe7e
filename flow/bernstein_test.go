package flow

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"syscall"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/mathx"
	"github.com/vigo-bayes/vigo/nn"
)

// TestBernsteinBasis compares the basis with 17-digit values of C(n,i) xⁱ (1−x)ⁿ⁻ⁱ at the
// exact double x, from
//
//	/usr/bin/python3 -c "import mpmath as mp; mp.mp.dps=50; x=mp.mpf(X); \
//	    print(mp.nstr(mp.binomial(n,i)*x**i*(1-x)**(n-i),17))"
//
// including degree 98 (that of M = 100), x near 0 and 1, and terms near underflow.
func TestBernsteinBasis(t *testing.T) {
	for _, c := range []struct {
		n    int
		x    float64
		i    int
		want float64
	}{
		{98, 0.5, 0, 3.1554436208840472e-30},
		{98, 0.5, 1, 3.0923347484663663e-28},
		{98, 0.5, 49, 0.080393169077958345},
		{98, 0.5, 97, 3.0923347484663663e-28},
		{98, 0.5, 98, 3.1554436208840472e-30},
		{98, 0.001, 0, 0.90660444940807578},
		{98, 0.001, 1, 0.088936172214205634},
		{98, 0.001, 5, 6.1877058606454191e-8},
		{98, 0.001, 40, 4.6382069434536445e-93},
		{98, 0.001, 98, 1.000000000000002e-294},
		{98, 0.999999, 0, 1.0000000028180551e-588},
		{98, 0.999999, 50, 2.4966811675846886e-260},
		{98, 0.999999, 97, 9.799049445909106e-5},
		{98, 0.999999, 98, 0.99990200475284509},
		{48, 0.3, 0, 3.6703368217294153e-8},
		{48, 0.3, 14, 0.12484373656673618},
		{48, 0.3, 48, 7.9766443076872368e-26},
		{5, 0.9, 0, 9.9999999999999889e-6},
		{5, 0.9, 3, 0.072899999999999973},
		{5, 0.9, 5, 0.59049000000000007},
	} {
		p := newBernPoly(c.n+2, LinearTails)
		b := make([]float64, c.n+1)
		y := 1 - c.x // exact for x ≥ 1/2, and the reference uses the same y
		p.basis(b, 1, c.n, c.x, y, math.Log(c.x), math.Log1p(-c.x))
		got := b[c.i]
		if c.want < 1e-300 { // underflows by design
			if got > 1e-300 {
				t.Errorf("n=%d x=%g i=%d: %g, want below 1e-300", c.n, c.x, c.i, got)
			}
			continue
		}
		// The recurrence multiplies up to n = 98 factors, each rounded: ≤ 2n ulps ≈ 4e-14,
		// plus log C and the exponential at the mode.
		if math.Abs(got-c.want) > 1e-13*c.want {
			t.Errorf("n=%d x=%g i=%d: %.17g, want %.17g", c.n, c.x, c.i, got, c.want)
		}
		sum := 0.0
		for _, v := range b {
			sum += v
		}
		if math.Abs(sum-1) > 1e-13 { // partition of unity, same rounding budget
			t.Errorf("n=%d x=%g: Σ b_i = %.17g", c.n, c.x, sum)
		}
	}
}

// quadraticRow returns raw coefficients with ϑ_i = (i/M)², whose Bernstein polynomial is known
// in closed form: h(x) = x² + x(1−x)/M (Lorentz 1953, "Bernstein polynomials", §1.1).
func quadraticRow(M int) []float64 {
	r := make([]float64, M+1)
	for k := 1; k <= M; k++ {
		r[k] = softplusInv(float64(2*k-1) / float64(M*M))
	}
	return r
}

// TestBernsteinQuadratic checks value, derivative and second derivative against the closed
// form h = x² + x(1−x)/M, h′ = 2x + (1−2x)/M, h″ = 2 − 2/M for both tails and degrees up to
// 100, at x in [0, 1] including the end points.
func TestBernsteinQuadratic(t *testing.T) {
	for _, M := range []int{1, 2, 3, 10, 50, 100} {
		for _, tails := range []Tails{LinearTails, BoundedTails} {
			p := newBernPoly(M, tails)
			ws := make([]float64, p.work())
			p.prep(ws, quadraticRow(M))
			fm := float64(M)
			for _, x := range []float64{0, 1e-9, 0.01, 0.25, 0.5, 0.77, 0.999, 1} {
				h := x*x + x*(1-x)/fm
				hp := 2*x + (1-2*x)/fm
				hpp := 2 - 2/fm
				v := x
				dxdv := 1.0
				wantLD, wantDLDV := math.Log(hp), hpp/hp
				if tails == BoundedTails {
					if x == 0 || x == 1 {
						continue // v = ∓∞
					}
					v = math.Log(x / (1 - x))
					dxdv = x * (1 - x)
					wantLD += math.Log(dxdv)
					wantDLDV = hpp/hp*dxdv + 1 - 2*x
				}
				z, ld, dzdv, dldv := p.at(ws, v, nil, nil)
				// Softplus inverse/forward round trips of the increments and the sums over
				// M+1 terms: ~1e-15 relative each; logit(x) and σ(v) add a few ulps.
				const tol = 1e-12
				for _, c := range []struct {
					name      string
					got, want float64
				}{{"z", z, h}, {"∂z/∂v", dzdv, hp * dxdv}, {"log ∂z/∂v", ld, wantLD}, {"∂log/∂v", dldv, wantDLDV}} {
					if math.Abs(c.got-c.want) > tol*(1+math.Abs(c.want)) {
						t.Errorf("M=%d %v x=%g: %s = %.15g, want %.15g", M, tails, x, c.name, c.got, c.want)
					}
				}
			}
		}
	}
}

// TestBernsteinTailsLinear: beyond [0, 1] the LinearTails map is the tangent line at the end
// point, and it is C¹ there.
func TestBernsteinTailsLinear(t *testing.T) {
	M := 7
	p := newBernPoly(M, LinearTails)
	ws := make([]float64, p.work())
	r := newRand(7)
	p.prep(ws, randVec(r, M+1, 1))
	for _, end := range []float64{0, 1} {
		z0, _, s0, _ := p.at(ws, end, nil, nil)
		for _, dv := range []float64{1e-9, 0.3, 40} {
			v := end + dv
			if end == 0 {
				v = -dv
			}
			z, ld, s, dldv := p.at(ws, v, nil, nil)
			// Exact arithmetic up to the rounding of M·δ and of one product.
			if want := z0 + s0*(v-end); math.Abs(z-want) > 1e-12*(1+math.Abs(want)) {
				t.Errorf("end %g, v=%g: z=%.15g, tangent %.15g", end, v, z, want)
			}
			if math.Abs(s-s0) > 1e-12*s0 || math.Abs(ld-math.Log(s0)) > 1e-12 || dldv != 0 {
				t.Errorf("end %g, v=%g: slope %.15g (end %.15g), log %g, dlog %g", end, v, s, s0, ld, dldv)
			}
		}
	}
}

// TestBernsteinDerivativePositive: ∂z/∂u > 0 and finite on a grid of u through the polynomial
// region and far into the tails, for degrees up to 100 and coefficients whose increments span
// twelve orders of magnitude.
func TestBernsteinDerivativePositive(t *testing.T) {
	r := newRand(8)
	for _, M := range []int{1, 2, 5, 20, 50, 100} {
		for _, tails := range []Tails{BoundedTails, LinearTails} {
			p := newBernPoly(M, tails)
			ws := make([]float64, p.work())
			for trial := range 5 {
				row := make([]float64, M+1)
				row[0] = 10 * r.NormFloat64()
				for k := 1; k <= M; k++ {
					row[k] = softplusInv(math.Pow(10, -6+12*r.Float64()))
				}
				p.prep(ws, row)
				prev := math.Inf(-1)
				for i := 0; i <= 2000; i++ {
					v := -40 + 80*float64(i)/2000
					if tails == LinearTails {
						v = -1 + 3*float64(i)/2000
					}
					z, ld, dzdv, _ := p.at(ws, v, nil, nil)
					if !(dzdv > 0) || math.IsInf(dzdv, 0) || math.IsNaN(ld) || math.IsNaN(z) {
						t.Fatalf("M=%d %v trial %d v=%g: z=%g ∂z/∂v=%g log=%g", M, tails, trial, v, z, dzdv, ld)
					}
					// Monotone up to rounding: where the bounded map saturates, z is a sum of
					// M+1 rounded terms that may wobble by a few ulps.
					if z < prev-1e-14*(1+math.Abs(z)) {
						t.Fatalf("M=%d %v trial %d v=%g: z=%.17g below previous %.17g", M, tails, trial, v, z, prev)
					}
					prev = z
				}
			}
		}
	}
}

// TestBernsteinOutsideSupport: the bounded flow's inverse rejects points outside (ϑ_0, ϑ_M)
// with ErrOutsideSupport, and its tape inverse gives NaN there.
func TestBernsteinOutsideSupport(t *testing.T) {
	f := NewBernstein(2, 5)
	p := make([]float64, f.NumParams())
	f.Init(p, nil)
	theta := make([]float64, 6)
	f.Coefficients(p, 1, theta)
	for _, zz := range []float64{theta[0], theta[5], theta[5] + 1, math.Inf(1)} {
		u := make([]float64, 2)
		if _, err := f.Inverse(p, []float64{0, zz}, u); !errors.Is(err, ErrOutsideSupport) {
			t.Errorf("z=%g: err %v, want ErrOutsideSupport", zz, err)
		}
	}
	var tp ad.Tape
	_, ld := f.InverseTape(&tp, tp.Const(p...), tp.Const(0, theta[5]+1))
	if !math.IsNaN(tp.Float(ld)) {
		t.Errorf("InverseTape outside the support: log-det %g, want NaN", tp.Float(ld))
	}
}

// TestBernsteinCoefficients: Coefficients returns the softplus-cumsum of the raw block.
func TestBernsteinCoefficients(t *testing.T) {
	f := NewBernstein(2, 3)
	p := []float64{0, 0, 0, 0, 0, 0, 1, -1, 2, 3, 0.5, 7}
	theta := make([]float64, 4)
	a, b := f.Coefficients(p, 1, theta)
	sp := mathx.Log1pExp
	want := []float64{1, 1 + sp(-1), 1 + sp(-1) + sp(2), 1 + sp(-1) + sp(2) + sp(3)}
	for i := range want {
		if math.Abs(theta[i]-want[i]) > 1e-15*math.Abs(want[i]) {
			t.Errorf("ϑ_%d = %g, want %g", i, theta[i], want[i])
		}
	}
	if a != sp(0.5) || b != 7 {
		t.Errorf("α, β = %g, %g; want %g, 7", a, b, sp(0.5))
	}
}

// BenchmarkBernsteinSoftplus times the floor of the d·M softplus increments alone (one exp and
// one log1p each) at d = 10, M = 50; BenchmarkForwardBackward times whole draws.
func BenchmarkBernsteinSoftplus(b *testing.B) {
	b.Run("softplus_500", func(b *testing.B) {
		p := newBernPoly(50, BoundedTails)
		r := newRand(9)
		C := randVec(r, 10*51, 1)
		ws := make([]float64, p.wsLen(10))
		rec := make([]float64, p.recLen(10))
		out := make([]float64, 11)
		aff := make([]float64, 20)
		u := make([]float64, 10)
		L := bernRows{coef: C, coefStride: 51, aff: aff, affStride: 2}
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		t0, n := threadCPU(), 0
		for b.Loop() {
			p.forwardAll(ws, 10, L, u, out, rec)
			n++
		}
		b.ReportMetric(float64(threadCPU()-t0)/float64(n), "cpu-ns/op")
	})
}

// threadCPU returns the CPU time the calling thread has used, in nanoseconds (Linux
// RUSAGE_THREAD; 0 elsewhere): steadier than wall time on a shared machine.
func threadCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

func BenchmarkBernsteinInverse(b *testing.B) {
	for _, M := range []int{10, 50, 100} {
		f := NewBernstein(10, M)
		b.Run(fmt.Sprintf("d10_M%d", M), func(b *testing.B) {
			r := newRand(9)
			p := randomParams(f, r, 0.3)
			z, _ := forward(f, p, randVec(r, 10, 1))
			u := make([]float64, 10)
			b.ReportAllocs()
			for b.Loop() {
				f.Inverse(p, z, u)
			}
		})
	}
}

// TestBernsteinInitMoments: at Init, z = T(u) with u ~ N(0, 1) has mean 0 and variance 1 for
// both tails (exactly the identity for LinearTails; w chosen for it for BoundedTails), so a
// Gaussian start set through an outer affine layer has the intended moments.
func TestBernsteinInitMoments(t *testing.T) {
	for _, M := range []int{1, 5, 50} {
		for _, tails := range []Tails{BoundedTails, LinearTails} {
			f := NewBernstein(1, M, BernsteinTails(tails))
			p := make([]float64, f.NumParams())
			f.Init(p, nil)
			var tp ad.Tape
			// Trapezoid over u ∈ [−12, 12] with 24000 intervals: smooth integrand, error
			// ≪ 1e-12; the N(0,1) mass outside is 1e-33.
			const n = 24000
			h := 24.0 / n
			var m1, m2 float64
			for i := 0; i <= n; i++ {
				u := -12 + h*float64(i)
				tp.Reset()
				z, _ := f.Forward(&tp, tp.Const(p...), tp.Const(u))
				zv := tp.Float(z)
				w := h * math.Exp(-0.5*u*u) / math.Sqrt(2*math.Pi)
				if i == 0 || i == n {
					w /= 2
				}
				m1 += w * zv
				m2 += w * zv * zv
			}
			// w is given to 17 digits and the softplus round trip of the increments costs a
			// few ulps: 1e-9 on the variance.
			if math.Abs(m1) > 1e-12 || math.Abs(m2-1) > 1e-9 {
				t.Errorf("M=%d %v: E z = %.3g, Var z = %.12g", M, tails, m1, m2)
			}
		}
	}
}

// TestSigmoidVar compares the quadrature with scipy:
//
//	/usr/bin/python3 -c "from scipy import integrate, stats; import numpy as np;
//	print(integrate.quad(lambda u: (1/(1+np.exp(-u/3))-0.5)**2*stats.norm.pdf(u),
//	-40, 40, epsabs=1e-14)[0])"   → 0.006586263063254326
func TestSigmoidVar(t *testing.T) {
	// quad's absolute error bound is 1e-14 on a value of 6.6e-3: 1e-12 relative.
	if got, want := sigmoidVar(1.0/3), 0.006586263063254326; math.Abs(got-want) > 1e-12*want {
		t.Errorf("sigmoidVar(1/3) = %.17g, want %.17g", got, want)
	}
}

// TestBernsteinPrep: the vectorised softplus and sigmoid of prep agree with mathx.Log1pExp
// and mathx.Logistic to a few ulps (kernel.Exp and kernel.Log1p are within 1 ulp; the sum
// max(r, 0) + log1p(·) and the division add one rounding each).
func TestBernsteinPrep(t *testing.T) {
	r := newRand(17)
	M := 300
	p := newBernPoly(M, BoundedTails)
	ws := make([]float64, p.work())
	row := randVec(r, M+1, 10)
	row[1], row[2], row[3] = -745, 40, 0
	p.prep(ws, row)
	P := M + 1
	theta, delta, sig := ws[:P], ws[P:2*P], ws[2*P:3*P]
	cum := row[0]
	for k := 1; k <= M; k++ {
		sp, sg := mathx.Log1pExp(row[k]), mathx.Logistic(row[k])
		cum += sp
		if math.Abs(delta[k]-sp) > 4e-16*sp || math.Abs(sig[k]-sg) > 4e-16*sg {
			t.Errorf("r=%g: softplus %.17g (want %.17g), σ %.17g (want %.17g)", row[k], delta[k], sp, sig[k], sg)
		}
		if math.Abs(theta[k]-cum) > 1e-14*(1+math.Abs(cum)) {
			t.Errorf("ϑ_%d = %.17g, want %.17g", k, theta[k], cum)
		}
	}
}

// BenchmarkBernsteinARParts times the parts of one draw of the multivariate Bernstein flow at
// d = 10, M = 50 (MADE 2 × 10, tanh) in plain float64, without the tape: the d·M softplus
// increments (one exp and one log1p each), the d polynomial evaluations with their partials,
// their pullback, and the MADE forward (hidden layers and the packed output layer) and
// backward. Their sum is the floor of one draw of BenchmarkELBOStep's bernstein_ar cases; see
// bench/results/bfvi_speed.md.
func BenchmarkBernsteinARParts(b *testing.B) {
	const d, M = 10, 50
	P := M + 1
	p := newBernPoly(M, BoundedTails)
	r := newRand(9)
	C := randVec(r, d*P, 1)
	pre := make([]float64, p.prepLen(d))
	aff := make([]float64, 2*d)
	u := randVec(r, d, 1)
	L := bernRows{coef: C, coefStride: P, aff: aff, affStride: 2}
	rec := make([]float64, p.recLen(d))
	out := make([]float64, d+1)
	bs := make([]float64, p.evalLen(d))
	made := nn.NewMADE(d, []int{10, 10}, P, nn.WithActivation(ad.Tanh))
	mp := make([]float64, made.NumParams())
	made.Init(mp, r)
	packed := make([]float64, made.PackedLen())
	made.PackOutput(mp, packed)
	hs := make([]float64, made.HiddenLen())
	G := randVec(r, d*P, 1)
	gm := make([]float64, len(mp))
	gh := make([]float64, 10)
	ws := make([]float64, made.HiddenLen())
	run := func(name string, f func()) {
		b.Run(name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			t0, n := threadCPU(), 0
			for b.Loop() {
				f()
				n++
			}
			b.ReportMetric(float64(threadCPU()-t0)/float64(n), "cpu-ns/op")
		})
	}
	p.prepAll(pre, d, L)
	run("softplus_prep", func() { p.prepAll(pre, d, L) })
	run("polynomials_eval", func() { p.evalAll(pre, bs, d, L, u, out, rec) })
	run("polynomials_back", func() { p.backwardAll(rec, d, u, 0.5, G, 0, P, true, aff, 0, 2, nil) })
	run("made_forward", func() {
		hl := made.HiddenForward(mp, u, hs)
		made.OutputsByDim(packed, hl, u, C)
	})
	run("made_backward", func() {
		made.OutputsByDimBack(packed, hs[10:], u, G, gm, gh, nil)
		made.HiddenBack(mp, u, hs, gh, gm, nil, ws)
	})
}

// TestBernsteinEvalAllMatchesOne: the grouped evaluation of d coordinates (evalAll and the
// batched node's evalAllBatch, four
// coordinates per kernel.BernsteinElev4 call, the special cases by the one-coordinate path)
// and its pullback (backwardAll) give what atSplit gives coordinate by coordinate, for
// degrees with and without the kernel (and beyond endMax, where the basis starts at the mode),
// group sizes 1–4 and padded, strided parameter rows,
// and points at NaN, in the linear tails, and where the sigmoid is exactly 0 or 1. The two
// differ in summation order and FMA rounding only (sums of ≤ 2M+2 products, and α by
// kernel.Softplus against math.Exp/Log1p, ≤ 2 ulp): 1e-12 relative to the scale of each
// value (plus 1e-12 absolute for values that cancel to near 0) is ample and still catches
// any wrong index or lane.
func TestBernsteinEvalAllMatchesOne(t *testing.T) {
	r := newRand(31)
	for _, tails := range []Tails{BoundedTails, LinearTails} {
		for _, M := range []int{1, 2, 3, 5, 50, 993} { // 993: base degree beyond endMax
			for _, d := range []int{1, 3, 4, 5, 10} {
				for _, ex := range []int{0, 2, 10, 12} { // coefStride = M+1 or M+3; evalAll, evalAllBatch
					extra, batch := ex%10, ex >= 10
					p := newBernPoly(M, tails)
					P := M + 1
					st := P + extra
					off := 3
					coef := randVec(r, off+d*st, 1.5)
					aff := randVec(r, 1+2*d, 1)
					u := randVec(r, d, 1.5)
					if d >= 5 {
						u[1] = math.NaN()
						u[3] = 2e3 // σ(v) = 1 exactly (bounded), the upper tail (linear)
						u[4] = -2e3
					}
					L := bernRows{coef: coef, coefOff: off, coefStride: st, aff: aff, affOff: 1, affStride: 2}
					ws := make([]float64, p.wsLen(d))
					for i := range ws {
						ws[i] = 7 // scratch need not be clean
					}
					rec := make([]float64, p.recLen(d))
					out := make([]float64, d+1)
					if batch {
						n := p.prepLen(d)
						p.prepAll(ws[:n], d, L)
						p.evalAllBatch(ws[:n], ws[n:n+p.evalLen(d)], d, L, u, out, rec)
					} else {
						p.forwardAll(ws, d, L, u, out, rec)
					}
					zbar := randVec(r, d, 1)
					lbar := 0.7
					gc := make([]float64, d*st)
					ga := make([]float64, 2*d)
					gu := make([]float64, d)
					p.backwardAll(rec, d, zbar, lbar, gc, 0, st, false, ga, 0, 2, gu)

					name := fmt.Sprintf("%v M=%d d=%d stride=%d batch=%v", tails, M, d, st, batch)
					near := func(what string, j int, got, want float64) {
						t.Helper()
						if math.IsNaN(want) {
							if !math.IsNaN(got) {
								t.Errorf("%s coordinate %d: %s = %v, want NaN", name, j, what, got)
							}
							return
						}
						if math.IsInf(want, 0) && got == want {
							return
						}
						if !(math.Abs(got-want) <= 1e-12*(1+math.Abs(want))) {
							t.Errorf("%s coordinate %d: %s = %.17g, want %.17g", name, j, what, got, want)
						}
					}
					one := make([]float64, p.work())
					dz, dl := make([]float64, P), make([]float64, P)
					ldSum := 0.0
					for j := range d {
						p.prep(one, coef[off+j*st:][:P])
						alpha, sa := softplusSig(aff[1+2*j])
						uj := u[j]
						z, ld, dzdv, dldv := p.at(one, alpha*uj+aff[2+2*j], dz, dl)
						ldSum += ld + math.Log(alpha)
						near("z", j, out[j], z)
						for k := range P {
							near(fmt.Sprintf("∂z/∂r_%d pullback", k), j, gc[j*st+k], zbar[j]*dz[k]+lbar*dl[k])
						}
						near("∂/∂a′", j, ga[2*j], zbar[j]*dzdv*uj*sa+lbar*(dldv*uj*sa+sa/alpha))
						near("∂/∂β", j, ga[2*j+1], zbar[j]*dzdv+lbar*dldv)
						near("∂/∂u", j, gu[j], zbar[j]*dzdv*alpha+lbar*dldv*alpha)
					}
					near("log-det", d, out[d], ldSum)
				}
			}
		}
	}
}
