package zoo

// Plain-float64 reference implementations of the 12 posteriordb log densities, written
// directly from MODELS.md (one loop per formula, no tape, no fused kernels, no shared code
// with the models). They take the reported constrained draw values (the names of the
// reference draws, including transformed parameters such as eight_schools' theta) and
// return ℓ, the unnormalised log posterior in the parametrisation MODELS.md states, and
// log J, the log-Jacobian of MODELS.md's unconstraining transforms. All constants are kept.

import (
	"fmt"
	"math"
	"testing"

	"github.com/vigo-bayes/vigo/internal/mathx"
	"github.com/vigo-bayes/vigo/model"
)

// refLogDensity returns (ℓ, log J) at a draw given by name.
type refLogDensity func(draw func(name string) float64) (ell, logJ float64)

// refNormal is log N(x | m, s) with s the standard deviation.
func refNormal(x, m, s float64) float64 {
	z := (x - m) / s
	return -0.5*math.Log(2*math.Pi) - math.Log(s) - 0.5*z*z
}

// refCauchy is log Cauchy(x | m, s).
func refCauchy(x, m, s float64) float64 {
	z := (x - m) / s
	return -math.Log(math.Pi) - math.Log(s) - math.Log(1+z*z)
}

// refStudentT is log t_ν(x | m, s).
func refStudentT(x, nu, m, s float64) float64 {
	z := (x - m) / s
	return mathx.Lgamma((nu+1)/2) - mathx.Lgamma(nu/2) - 0.5*math.Log(nu*math.Pi) - math.Log(s) -
		(nu+1)/2*math.Log(1+z*z/nu)
}

// refGamma is log Gamma(x | shape a, rate b).
func refGamma(x, a, b float64) float64 {
	return a*math.Log(b) - mathx.Lgamma(a) + (a-1)*math.Log(x) - b*x
}

// refBeta is log Beta(x | a, b).
func refBeta(x, a, b float64) float64 {
	return mathx.Lgamma(a+b) - mathx.Lgamma(a) - mathx.Lgamma(b) + (a-1)*math.Log(x) + (b-1)*math.Log(1-x)
}

// vec reads draw values name[1..n].
func vecOf(draw func(string) float64, name string, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = draw(fmt.Sprintf("%s[%d]", name, i+1))
	}
	return v
}

func mustVec(t testing.TB, d *model.Data, name string, n int) []float64 {
	t.Helper()
	v, err := d.Vector(name, n)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func mustInt(t testing.TB, d *model.Data, name string) int {
	t.Helper()
	v, err := d.Int(name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// refModels builds the reference densities from the raw data files, keyed by short name.
var refModels = map[string]func(t testing.TB, d *model.Data) refLogDensity{
	"eight_schools": func(t testing.TB, d *model.Data) refLogDensity {
		y, sigma := mustVec(t, d, "y", 8), mustVec(t, d, "sigma", 8)
		return func(draw func(string) float64) (float64, float64) {
			theta := vecOf(draw, "theta", 8)
			mu, tau := draw("mu"), draw("tau")
			l := refNormal(mu, 0, 5) + refCauchy(tau, 0, 5)
			for j := range 8 {
				tt := (theta[j] - mu) / tau
				l += refNormal(tt, 0, 1) + refNormal(y[j], theta[j], sigma[j])
			}
			return l, math.Log(tau)
		}
	},
	"diamonds": func(t testing.TB, d *model.Data) refLogDensity {
		n, k := mustInt(t, d, "N"), mustInt(t, d, "K")
		x, err := d.Matrix("X", n, k)
		if err != nil {
			t.Fatal(err)
		}
		y := mustVec(t, d, "Y", n)
		m := make([]float64, k-1)
		for i := range n {
			for j := 1; j < k; j++ {
				m[j-1] += x[i*k+j]
			}
		}
		for j := range m {
			m[j] /= float64(n)
		}
		return func(draw func(string) float64) (float64, float64) {
			b := vecOf(draw, "b", k-1)
			ic, sigma := draw("Intercept"), draw("sigma")
			l := refStudentT(ic, 3, 8, 10) + refStudentT(sigma, 3, 0, 10) + math.Ln2
			for _, bj := range b {
				l += refNormal(bj, 0, 1)
			}
			for i := range n {
				eta := ic
				for j := 1; j < k; j++ {
					eta += (x[i*k+j] - m[j-1]) * b[j-1]
				}
				l += refNormal(y[i], eta, sigma)
			}
			return l, math.Log(sigma)
		}
	},
	"arK": func(t testing.TB, d *model.Data) refLogDensity {
		k, tt := mustInt(t, d, "K"), mustInt(t, d, "T")
		y := mustVec(t, d, "y", tt)
		return func(draw func(string) float64) (float64, float64) {
			alpha, sigma := draw("alpha"), draw("sigma")
			beta := vecOf(draw, "beta", k)
			l := refNormal(alpha, 0, 10) + refCauchy(sigma, 0, 2.5)
			for _, b := range beta {
				l += refNormal(b, 0, 10)
			}
			for s := k; s < tt; s++ { // 0-based s = t−1 for t = K+1..T
				mu := alpha
				for j := range k {
					mu += beta[j] * y[s-j-1]
				}
				l += refNormal(y[s], mu, sigma)
			}
			return l, math.Log(sigma)
		}
	},
	"garch": func(t testing.TB, d *model.Data) refLogDensity {
		tt := mustInt(t, d, "T")
		y := mustVec(t, d, "y", tt)
		sigma1, err := d.Real("sigma1")
		if err != nil {
			t.Fatal(err)
		}
		return func(draw func(string) float64) (float64, float64) {
			mu, a0, a1, b1 := draw("mu"), draw("alpha0"), draw("alpha1"), draw("beta1")
			s := sigma1
			l := refNormal(y[0], mu, s)
			for i := 1; i < tt; i++ {
				e := y[i-1] - mu
				s = math.Sqrt(a0 + a1*e*e + b1*s*s)
				l += refNormal(y[i], mu, s)
			}
			// alpha0 = eᵘ; alpha1 = logistic(u); beta1 = (1−alpha1)·logistic(u).
			sb := b1 / (1 - a1)
			logJ := math.Log(a0) + math.Log(a1) + math.Log(1-a1) + math.Log(1-a1) + math.Log(sb) + math.Log(1-sb)
			return l, logJ
		}
	},
	"gp_pois_regr": func(t testing.TB, d *model.Data) refLogDensity {
		n := mustInt(t, d, "N")
		x := mustVec(t, d, "x", n)
		k, err := d.IntVector("k", n)
		if err != nil {
			t.Fatal(err)
		}
		return func(draw func(string) float64) (float64, float64) {
			rho, alpha := draw("rho"), draw("alpha")
			f := vecOf(draw, "f", n)
			// K, its Cholesky factor L, and f_tilde = L⁻¹ f by forward substitution.
			kk := make([]float64, n*n)
			for i := range n {
				for j := range n {
					dx := x[i] - x[j]
					kk[i*n+j] = alpha * alpha * math.Exp(-dx*dx/(2*rho*rho))
				}
				kk[i*n+i] += 1e-10
			}
			l := make([]float64, n*n)
			for j := range n {
				s := kk[j*n+j]
				for p := range j {
					s -= l[j*n+p] * l[j*n+p]
				}
				l[j*n+j] = math.Sqrt(s)
				for i := j + 1; i < n; i++ {
					s := kk[i*n+j]
					for p := range j {
						s -= l[i*n+p] * l[j*n+p]
					}
					l[i*n+j] = s / l[j*n+j]
				}
			}
			ft := make([]float64, n)
			for i := range n {
				s := f[i]
				for p := range i {
					s -= l[i*n+p] * ft[p]
				}
				ft[i] = s / l[i*n+i]
			}
			ell := refGamma(rho, 25, 4) + refNormal(alpha, 0, 2)
			for i := range n {
				ell += refNormal(ft[i], 0, 1) + float64(k[i])*f[i] - math.Exp(f[i]) - mathx.Lgamma(float64(k[i])+1)
			}
			return ell, math.Log(rho) + math.Log(alpha)
		}
	},
	"low_dim_gauss_mix": func(t testing.TB, d *model.Data) refLogDensity {
		n := mustInt(t, d, "N")
		y := mustVec(t, d, "y", n)
		return func(draw func(string) float64) (float64, float64) {
			mu, sigma := vecOf(draw, "mu", 2), vecOf(draw, "sigma", 2)
			theta := draw("theta")
			l := refBeta(theta, 5, 5)
			for k := range 2 {
				l += refNormal(sigma[k], 0, 2) + refNormal(mu[k], 0, 2)
			}
			for _, yn := range y {
				l += mathx.LogAddExp(math.Log(theta)+refNormal(yn, mu[0], sigma[0]),
					math.Log(1-theta)+refNormal(yn, mu[1], sigma[1]))
			}
			logJ := math.Log(mu[1]-mu[0]) + math.Log(sigma[0]) + math.Log(sigma[1]) + math.Log(theta) + math.Log(1-theta)
			return l, logJ
		}
	},
	"kidiq": func(t testing.TB, d *model.Data) refLogDensity {
		n := mustInt(t, d, "N")
		ks, hs, iq := mustVec(t, d, "kid_score", n), mustVec(t, d, "mom_hs", n), mustVec(t, d, "mom_iq", n)
		return func(draw func(string) float64) (float64, float64) {
			b := vecOf(draw, "beta", 3)
			sigma := draw("sigma")
			l := refCauchy(sigma, 0, 2.5)
			for i := range n {
				l += refNormal(ks[i], b[0]+b[1]*hs[i]+b[2]*iq[i], sigma)
			}
			return l, math.Log(sigma)
		}
	},
	"mesquite": func(t testing.TB, d *model.Data) refLogDensity {
		n := mustInt(t, d, "N")
		var cols [6][]float64
		for c, name := range []string{"weight", "diam1", "diam2", "canopy_height", "total_height", "density"} {
			cols[c] = mustVec(t, d, name, n)
		}
		group := mustVec(t, d, "group", n)
		return func(draw func(string) float64) (float64, float64) {
			b := vecOf(draw, "beta", 7)
			sigma := draw("sigma")
			l := 0.0
			for i := range n {
				mu := b[0] + b[6]*group[i]
				for c := 1; c < 6; c++ {
					mu += b[c] * math.Log(cols[c][i])
				}
				l += refNormal(math.Log(cols[0][i]), mu, sigma)
			}
			return l, math.Log(sigma)
		}
	},
	"nes": func(t testing.TB, d *model.Data) refLogDensity {
		n := mustInt(t, d, "N")
		party := mustVec(t, d, "partyid7", n)
		ideo, race := mustVec(t, d, "real_ideo", n), mustVec(t, d, "race_adj", n)
		educ, gender, income := mustVec(t, d, "educ1", n), mustVec(t, d, "gender", n), mustVec(t, d, "income", n)
		age, err := d.IntVector("age_discrete", n)
		if err != nil {
			t.Fatal(err)
		}
		ind := func(b bool) float64 {
			if b {
				return 1
			}
			return 0
		}
		return func(draw func(string) float64) (float64, float64) {
			b := vecOf(draw, "beta", 9)
			sigma := draw("sigma")
			l := 0.0
			for i := range n {
				mu := b[0] + b[1]*ideo[i] + b[2]*race[i] + b[3]*ind(age[i] == 2) + b[4]*ind(age[i] == 3) +
					b[5]*ind(age[i] == 4) + b[6]*educ[i] + b[7]*gender[i] + b[8]*income[i]
				l += refNormal(party[i], mu, sigma)
			}
			return l, math.Log(sigma)
		}
	},
	"sblrc": func(t testing.TB, d *model.Data) refLogDensity {
		n, dd := mustInt(t, d, "N"), mustInt(t, d, "D")
		x, err := d.Matrix("X", n, dd)
		if err != nil {
			t.Fatal(err)
		}
		y := mustVec(t, d, "y", n)
		return func(draw func(string) float64) (float64, float64) {
			b := vecOf(draw, "beta", dd)
			sigma := draw("sigma")
			l := refNormal(sigma, 0, 10)
			for _, bj := range b {
				l += refNormal(bj, 0, 10)
			}
			for i := range n {
				mu := 0.0
				for j := range dd {
					mu += x[i*dd+j] * b[j]
				}
				l += refNormal(y[i], mu, sigma)
			}
			return l, math.Log(sigma)
		}
	},
	"earnings": func(t testing.TB, d *model.Data) refLogDensity {
		n := mustInt(t, d, "N")
		earn, height, male := mustVec(t, d, "earn", n), mustVec(t, d, "height", n), mustVec(t, d, "male", n)
		return func(draw func(string) float64) (float64, float64) {
			b := vecOf(draw, "beta", 4)
			sigma := draw("sigma")
			l := 0.0
			for i := range n {
				l += refNormal(math.Log(earn[i]), b[0]+b[1]*height[i]+b[2]*male[i]+b[3]*height[i]*male[i], sigma)
			}
			return l, math.Log(sigma)
		}
	},
	"hmm_example": func(t testing.TB, d *model.Data) refLogDensity {
		n := mustInt(t, d, "N")
		y := mustVec(t, d, "y", n)
		return func(draw func(string) float64) (float64, float64) {
			th1, th2, mu := vecOf(draw, "theta1", 2), vecOf(draw, "theta2", 2), vecOf(draw, "mu", 2)
			a := [2][2]float64{{th1[0], th1[1]}, {th2[0], th2[1]}}
			l := refNormal(mu[0], 3, 1) + refNormal(mu[1], 10, 1)
			var g [2]float64
			for k := range 2 {
				g[k] = refNormal(y[0], mu[k], 1)
			}
			for i := 1; i < n; i++ {
				var next [2]float64
				for k := range 2 {
					next[k] = mathx.LogAddExp(g[0]+math.Log(a[0][k]), g[1]+math.Log(a[1][k])) + refNormal(y[i], mu[k], 1)
				}
				g = next
			}
			l += mathx.LogAddExp(g[0], g[1])
			logJ := math.Log(th1[0]) + math.Log(th1[1]) + math.Log(th2[0]) + math.Log(th2[1]) +
				math.Log(mu[0]) + math.Log(mu[1]-mu[0])
			return l, logJ
		}
	},
}
