package density

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/dist"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// broadcastLen returns the common length N of vs (each of length 1 or N) and panics naming
// the first argument that fits neither. names are the argument names in order.
func broadcastLen(t *ad.Tape, fn string, names []string, vs []ad.Var) int {
	n := -1
	for _, v := range vs {
		if s := t.Size(v); s != 1 {
			n = s
			break
		}
	}
	if n < 0 {
		return 1
	}
	for i, v := range vs {
		if s := t.Size(v); s != 1 && s != n {
			panic(fmt.Sprintf("density: %s: len(%s)=%d, want 1 or %d", fn, names[i], s, n))
		}
	}
	return n
}

// stride is 1 for a full-length argument and 0 for a broadcast one, so v[i*stride] reads
// element i or the scalar.
func stride(v []float64, n int) int {
	if len(v) == n {
		return 1
	}
	return 0
}

// Family is a univariate continuous family of package dist, as used by Truncated.
type Family uint8

// The families. Parameters are passed in the order of the dist struct's fields.
const (
	NormalFamily       Family = iota + 1 // (mu, sigma)
	StudentTFamily                       // (nu, mu, sigma)
	CauchyFamily                         // (mu, sigma)
	LaplaceFamily                        // (mu, sigma)
	LogisticFamily                       // (mu, sigma)
	LogNormalFamily                      // (mu, sigma)
	ExponentialFamily                    // (rate)
	GammaFamily                          // (shape, rate)
	InverseGammaFamily                   // (shape, scale)
	BetaFamily                           // (alpha, beta)
	UniformFamily                        // (min, max)
	HalfNormalFamily                     // (sigma)
	HalfCauchyFamily                     // (sigma)
	HalfStudentTFamily                   // (nu, sigma)
)

// kernel returns log p(x | p) with its partials in x and the parameters.
type kernel func(x float64, p [3]float64) (float64, float64, dist.Partials)

// zkernel returns log(F(hi) − F(lo)) with its parameter partials.
type zkernel func(p [3]float64, lo, hi float64) (float64, dist.Partials)

// famInfo describes a family: function name, parameter names and the two kernels.
type famInfo struct {
	name  string
	np    int       // number of parameters
	names [4]string // "y" then the parameters
	lp    kernel
	z     zkernel
}

func trunc[D dist.Continuous](d D, lo, hi float64) (float64, dist.Partials) {
	lz, dp, _, _ := dist.Truncated[D]{Dist: d, Lower: lo, Upper: hi}.LogNormalizerPartials()
	return lz, dp
}

// info returns the family's description; the kernels are static functions (no allocation).
func (f Family) info() famInfo {
	switch f {
	case NormalFamily:
		return famInfo{"Normal", 2, [4]string{"y", "mu", "sigma"},
			func(x float64, p [3]float64) (float64, float64, dist.Partials) {
				return dist.Normal{Mu: p[0], Sigma: p[1]}.LogProbPartials(x)
			},
			func(p [3]float64, lo, hi float64) (float64, dist.Partials) {
				return trunc(dist.Normal{Mu: p[0], Sigma: p[1]}, lo, hi)
			}}
	case StudentTFamily:
		return famInfo{"StudentT", 3, [4]string{"y", "nu", "mu", "sigma"},
			func(x float64, p [3]float64) (float64, float64, dist.Partials) {
				return dist.StudentT{Nu: p[0], Mu: p[1], Sigma: p[2]}.LogProbPartials(x)
			},
			func(p [3]float64, lo, hi float64) (float64, dist.Partials) {
				return trunc(dist.StudentT{Nu: p[0], Mu: p[1], Sigma: p[2]}, lo, hi)
			}}
	case CauchyFamily:
		return famInfo{"Cauchy", 2, [4]string{"y", "mu", "sigma"},
			func(x float64, p [3]float64) (float64, float64, dist.Partials) {
				return dist.Cauchy{Mu: p[0], Sigma: p[1]}.LogProbPartials(x)
			},
			func(p [3]float64, lo, hi float64) (float64, dist.Partials) {
				return trunc(dist.Cauchy{Mu: p[0], Sigma: p[1]}, lo, hi)
			}}
	case LaplaceFamily:
		return famInfo{"Laplace", 2, [4]string{"y", "mu", "sigma"},
			func(x float64, p [3]float64) (float64, float64, dist.Partials) {
				return dist.Laplace{Mu: p[0], Sigma: p[1]}.LogProbPartials(x)
			},
			func(p [3]float64, lo, hi float64) (float64, dist.Partials) {
				return trunc(dist.Laplace{Mu: p[0], Sigma: p[1]}, lo, hi)
			}}
	case LogisticFamily:
		return famInfo{"Logistic", 2, [4]string{"y", "mu", "sigma"},
			func(x float64, p [3]float64) (float64, float64, dist.Partials) {
				return dist.Logistic{Mu: p[0], Sigma: p[1]}.LogProbPartials(x)
			},
			func(p [3]float64, lo, hi float64) (float64, dist.Partials) {
				return trunc(dist.Logistic{Mu: p[0], Sigma: p[1]}, lo, hi)
			}}
	case LogNormalFamily:
		return famInfo{"LogNormal", 2, [4]string{"y", "mu", "sigma"},
			func(x float64, p [3]float64) (float64, float64, dist.Partials) {
				return dist.LogNormal{Mu: p[0], Sigma: p[1]}.LogProbPartials(x)
			},
			func(p [3]float64, lo, hi float64) (float64, dist.Partials) {
				return trunc(dist.LogNormal{Mu: p[0], Sigma: p[1]}, lo, hi)
			}}
	case ExponentialFamily:
		return famInfo{"Exponential", 1, [4]string{"y", "rate"},
			func(x float64, p [3]float64) (float64, float64, dist.Partials) {
				return dist.Exponential{Rate: p[0]}.LogProbPartials(x)
			},
			func(p [3]float64, lo, hi float64) (float64, dist.Partials) {
				return trunc(dist.Exponential{Rate: p[0]}, lo, hi)
			}}
	case GammaFamily:
		return famInfo{"Gamma", 2, [4]string{"y", "shape", "rate"},
			func(x float64, p [3]float64) (float64, float64, dist.Partials) {
				return dist.Gamma{Shape: p[0], Rate: p[1]}.LogProbPartials(x)
			},
			func(p [3]float64, lo, hi float64) (float64, dist.Partials) {
				return trunc(dist.Gamma{Shape: p[0], Rate: p[1]}, lo, hi)
			}}
	case InverseGammaFamily:
		return famInfo{"InverseGamma", 2, [4]string{"y", "shape", "scale"},
			func(x float64, p [3]float64) (float64, float64, dist.Partials) {
				return dist.InverseGamma{Shape: p[0], Scale: p[1]}.LogProbPartials(x)
			},
			func(p [3]float64, lo, hi float64) (float64, dist.Partials) {
				return trunc(dist.InverseGamma{Shape: p[0], Scale: p[1]}, lo, hi)
			}}
	case BetaFamily:
		return famInfo{"Beta", 2, [4]string{"y", "alpha", "beta"},
			func(x float64, p [3]float64) (float64, float64, dist.Partials) {
				return dist.Beta{Alpha: p[0], Beta: p[1]}.LogProbPartials(x)
			},
			func(p [3]float64, lo, hi float64) (float64, dist.Partials) {
				return trunc(dist.Beta{Alpha: p[0], Beta: p[1]}, lo, hi)
			}}
	case UniformFamily:
		return famInfo{"Uniform", 2, [4]string{"y", "min", "max"},
			func(x float64, p [3]float64) (float64, float64, dist.Partials) {
				return dist.Uniform{Min: p[0], Max: p[1]}.LogProbPartials(x)
			},
			func(p [3]float64, lo, hi float64) (float64, dist.Partials) {
				return trunc(dist.Uniform{Min: p[0], Max: p[1]}, lo, hi)
			}}
	case HalfNormalFamily:
		return famInfo{"HalfNormal", 1, [4]string{"y", "sigma"},
			func(x float64, p [3]float64) (float64, float64, dist.Partials) {
				return dist.HalfNormal{Sigma: p[0]}.LogProbPartials(x)
			},
			func(p [3]float64, lo, hi float64) (float64, dist.Partials) {
				return trunc(dist.HalfNormal{Sigma: p[0]}, lo, hi)
			}}
	case HalfCauchyFamily:
		return famInfo{"HalfCauchy", 1, [4]string{"y", "sigma"},
			func(x float64, p [3]float64) (float64, float64, dist.Partials) {
				return dist.HalfCauchy{Sigma: p[0]}.LogProbPartials(x)
			},
			func(p [3]float64, lo, hi float64) (float64, dist.Partials) {
				return trunc(dist.HalfCauchy{Sigma: p[0]}, lo, hi)
			}}
	case HalfStudentTFamily:
		return famInfo{"HalfStudentT", 2, [4]string{"y", "nu", "sigma"},
			func(x float64, p [3]float64) (float64, float64, dist.Partials) {
				return dist.HalfStudentT{Nu: p[0], Sigma: p[1]}.LogProbPartials(x)
			},
			func(p [3]float64, lo, hi float64) (float64, dist.Partials) {
				return trunc(dist.HalfStudentT{Nu: p[0], Sigma: p[1]}, lo, hi)
			}}
	}
	panic(fmt.Sprintf("density: unknown Family %d", f))
}

// univariate records Σᵢ log p(yᵢ | θᵢ) for family f, minus the truncation normaliser
// log(F(hi) − F(lo)) per observation when truncate is set. The normaliser is computed once
// when every parameter is a broadcast scalar.
func univariate(t *ad.Tape, f Family, truncate bool, lo, hi float64, y ad.Var, ps ...ad.Var) ad.Var {
	fi := f.info()
	fn := fi.name
	if truncate {
		fn = "Truncated"
	}
	np := fi.np
	if len(ps) != np {
		panic(fmt.Sprintf("density: %s: %d parameters for %s, want %d", fn, len(ps), fi.name, np))
	}
	var vars [4]ad.Var
	vars[0] = y
	copy(vars[1:], ps)
	n := broadcastLen(t, fn, fi.names[:], vars[:np+1])
	var vals, parts [4][]float64
	var st [4]int
	fb := t.Fused()
	for j := 0; j <= np; j++ {
		vals[j] = t.Value(vars[j])
		st[j] = stride(vals[j], n)
		parts[j] = fb.Partial(vars[j])
	}
	lp := 0.0
	var p [3]float64
	scalarParams := true
	for j := 1; j <= np; j++ {
		scalarParams = scalarParams && st[j] == 0
	}
	for i := range n {
		for j := range np {
			p[j] = vals[j+1][i*st[j+1]]
		}
		x := vals[0][i*st[0]]
		if truncate && (x < lo || x > hi) {
			lp = math.Inf(-1)
			continue
		}
		l, dx, dp := fi.lp(x, p)
		if truncate && !scalarParams {
			lz, dz := fi.z(p, lo, hi)
			l -= lz
			for j := range np {
				dp[j] -= dz[j]
			}
		}
		lp += l
		if d := parts[0]; d != nil {
			d[i*st[0]] += dx
		}
		for j := range np {
			if d := parts[j+1]; d != nil {
				d[i*st[j+1]] += dp[j]
			}
		}
	}
	if truncate && scalarParams {
		for j := range np {
			p[j] = vals[j+1][0]
		}
		lz, dz := fi.z(p, lo, hi)
		fn := float64(n)
		lp -= fn * lz
		for j := range np {
			if d := parts[j+1]; d != nil {
				d[0] -= fn * dz[j]
			}
		}
	}
	return fb.Done(lp)
}

// Truncated records Σᵢ [log p(yᵢ | θᵢ) − log(F(upper | θᵢ) − F(lower | θᵢ))] for family f with
// parameters ps in the family's order, Stan's `y ~ f(θ) T[lower, upper]`; use ±Inf for a
// missing bound. yᵢ outside [lower, upper] gives −Inf. The bounds are data. The normaliser
// and its parameter partials come from dist.Truncated (log CDFs with shape derivatives);
// it is computed once when all parameters are scalars, else once per observation.
func Truncated(t *ad.Tape, f Family, y ad.Var, lower, upper float64, ps ...ad.Var) ad.Var {
	return univariate(t, f, true, lower, upper, y, ps...)
}

// Normal records Σᵢ log N(yᵢ | μᵢ, σᵢ) (dist.Normal). This is the hot path of most models and
// has its own loop: with a scalar σ, log σ and 1/σ are computed once and the loop is a few
// flops per observation. Cost: N multiply-adds plus, for vector σ, N logs.
func Normal(t *ad.Tape, y, mu, sigma ad.Var) ad.Var {
	var vs = [3]ad.Var{y, mu, sigma}
	n := broadcastLen(t, "Normal", []string{"y", "mu", "sigma"}, vs[:])
	yv, mv, sv := t.Value(y), t.Value(mu), t.Value(sigma)
	sy, sm := stride(yv, n), stride(mv, n)
	fb := t.Fused()
	dy, dm, ds := fb.Partial(y), fb.Partial(mu), fb.Partial(sigma)
	if len(sv) == 1 {
		sig := sv[0]
		s := 1 / sig
		ssq := 0.0
		switch {
		case sy == 1 && sm == 0 && dy == nil:
			// Data y around a scalar location: Σz² and Σz (∂/∂μ = Σz/σ) in registers.
			m := mv[0]
			sz := 0.0
			for _, v := range yv[:n] {
				z := (v - m) * s
				ssq += z * z
				sz += z
			}
			if dm != nil {
				dm[0] = sz * s
			}
		case sy == 1 && sm == 0:
			// Vector parameter y (e.g. random effects) around a scalar location.
			m := mv[0]
			sz := 0.0
			yv, dy := yv[:n], dy[:n]
			for i, v := range yv {
				z := (v - m) * s
				ssq += z * z
				sz += z
				dy[i] = -z * s
			}
			if dm != nil {
				dm[0] = sz * s
			}
		case sy == 1 && sm == 1 && dy != nil && dm != nil:
			yv, mv, dy, dm := yv[:n], mv[:n], dy[:n], dm[:n]
			for i, v := range yv {
				z := (v - mv[i]) * s
				ssq += z * z
				g := z * s
				dy[i] = -g
				dm[i] = g
			}
		default:
			for i := range n {
				z := (yv[i*sy] - mv[i*sm]) * s
				ssq += z * z
				g := z * s
				if dy != nil {
					dy[i*sy] -= g
				}
				if dm != nil {
					dm[i*sm] += g
				}
			}
		}
		nf := float64(n)
		if ds != nil {
			ds[0] = (ssq - nf) * s
		}
		return fb.Done(-0.5*ssq - nf*(math.Log(sig)+mathx.LogSqrt2Pi))
	}
	lp := 0.0
	for i := range n {
		sig := sv[i]
		s := 1 / sig
		z := (yv[i*sy] - mv[i*sm]) * s
		lp += -0.5*z*z - math.Log(sig)
		g := z * s
		if dy != nil {
			dy[i*sy] -= g
		}
		if dm != nil {
			dm[i*sm] += g
		}
		if ds != nil {
			ds[i] = (z*z - 1) * s
		}
	}
	return fb.Done(lp - float64(n)*mathx.LogSqrt2Pi)
}

// StudentT records Σᵢ log StudentT(yᵢ | νᵢ, μᵢ, σᵢ) (dist.StudentT).
func StudentT(t *ad.Tape, y, nu, mu, sigma ad.Var) ad.Var {
	return univariate(t, StudentTFamily, false, 0, 0, y, nu, mu, sigma)
}

// Cauchy records Σᵢ log Cauchy(yᵢ | μᵢ, σᵢ) (dist.Cauchy).
func Cauchy(t *ad.Tape, y, mu, sigma ad.Var) ad.Var {
	return univariate(t, CauchyFamily, false, 0, 0, y, mu, sigma)
}

// Laplace records Σᵢ log Laplace(yᵢ | μᵢ, σᵢ), Stan's double_exponential (dist.Laplace).
func Laplace(t *ad.Tape, y, mu, sigma ad.Var) ad.Var {
	return univariate(t, LaplaceFamily, false, 0, 0, y, mu, sigma)
}

// Logistic records Σᵢ log Logistic(yᵢ | μᵢ, σᵢ) (dist.Logistic).
func Logistic(t *ad.Tape, y, mu, sigma ad.Var) ad.Var {
	return univariate(t, LogisticFamily, false, 0, 0, y, mu, sigma)
}

// LogNormal records Σᵢ log LogNormal(yᵢ | μᵢ, σᵢ) (dist.LogNormal).
func LogNormal(t *ad.Tape, y, mu, sigma ad.Var) ad.Var {
	return univariate(t, LogNormalFamily, false, 0, 0, y, mu, sigma)
}

// Exponential records Σᵢ log Exponential(yᵢ | λᵢ) (dist.Exponential).
func Exponential(t *ad.Tape, y, rate ad.Var) ad.Var {
	return univariate(t, ExponentialFamily, false, 0, 0, y, rate)
}

// Gamma records Σᵢ log Gamma(yᵢ | αᵢ, βᵢ) with shape α and rate β (dist.Gamma).
func Gamma(t *ad.Tape, y, shape, rate ad.Var) ad.Var {
	return univariate(t, GammaFamily, false, 0, 0, y, shape, rate)
}

// InverseGamma records Σᵢ log InvGamma(yᵢ | αᵢ, βᵢ) with shape α and scale β
// (dist.InverseGamma).
func InverseGamma(t *ad.Tape, y, shape, scale ad.Var) ad.Var {
	return univariate(t, InverseGammaFamily, false, 0, 0, y, shape, scale)
}

// Beta records Σᵢ log Beta(yᵢ | αᵢ, βᵢ) (dist.Beta).
func Beta(t *ad.Tape, y, alpha, beta ad.Var) ad.Var {
	return univariate(t, BetaFamily, false, 0, 0, y, alpha, beta)
}

// Uniform records Σᵢ log Uniform(yᵢ | minᵢ, maxᵢ) (dist.Uniform).
func Uniform(t *ad.Tape, y, lo, hi ad.Var) ad.Var {
	return univariate(t, UniformFamily, false, 0, 0, y, lo, hi)
}

// HalfNormal records Σᵢ log HalfNormal(yᵢ | σᵢ) = Σ [log 2 + log N(yᵢ | 0, σᵢ)] on yᵢ ≥ 0, the
// prior of a `<lower=0>` scale with its normaliser (dist.HalfNormal).
func HalfNormal(t *ad.Tape, y, sigma ad.Var) ad.Var {
	return univariate(t, HalfNormalFamily, false, 0, 0, y, sigma)
}

// HalfCauchy records Σᵢ log HalfCauchy(yᵢ | σᵢ) (dist.HalfCauchy).
func HalfCauchy(t *ad.Tape, y, sigma ad.Var) ad.Var {
	return univariate(t, HalfCauchyFamily, false, 0, 0, y, sigma)
}

// HalfStudentT records Σᵢ log HalfStudentT(yᵢ | νᵢ, σᵢ) (dist.HalfStudentT).
func HalfStudentT(t *ad.Tape, y, nu, sigma ad.Var) ad.Var {
	return univariate(t, HalfStudentTFamily, false, 0, 0, y, nu, sigma)
}
