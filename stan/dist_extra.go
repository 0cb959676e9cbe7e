package stan

import (
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/dist"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// extraDistSigs are distributions the posteriordb programs do not use but Stan users expect:
// ordered_logistic, multi_normal_prec, hypergeometric, wishart, inv_wishart.
func extraDistSigs() []Sig {
	var s []Sig
	both := func(name string, fn Impl, args ...Arg) {
		s = append(s, sig(name+"_lpmf", TReal, fn, args...), sig(name+"_lupmf", TReal, fn, args...))
	}
	both("ordered_logistic", orderedLogistic, aInt, aReal, aVector)
	both("ordered_logistic", orderedLogistic, ex(tArrInt), aVector, aVector)
	both("ordered_logistic", orderedLogistic, ex(tArrInt), aVector, ex(tArrVector))
	both("hypergeometric", hypergeometric, aInt, aInt, aInt, aInt)
	for _, y := range []Type{TVector, tArrVector} {
		for _, mu := range []Type{TVector, tArrVector} {
			s = append(s, sig("multi_normal_prec_lpdf", TReal, multiNormalPrec, ex(y), ex(mu), aMatrix),
				sig("multi_normal_prec_lupdf", TReal, multiNormalPrec, ex(y), ex(mu), aMatrix))
		}
	}
	return append(s, wishartSigs()...)
}

// orderedLogistic is Stan's ordered_logistic(k | η, c) with K = size(c) + 1 categories:
// log p = log(σ(η − c_{k−1}) − σ(η − c_k)) with c_0 = −∞ and c_K = +∞, as one fused node.
func orderedLogistic(c *Ctx, args []Value) (Value, error) {
	const name = "ordered_logistic_lpmf"
	ks := args[0].Ints
	eta, cut := realVar(c, args[1]), args[2]
	ev := c.T.Value(eta)
	n := len(ks)
	if isContainer(args[1]) && len(ev) != n {
		return Value{}, errf(name, "size of Integers (%d) and size of Linear predictor (%d) must match in size", n, len(ev))
	}
	k1 := cut.Dims[len(cut.Dims)-1] // K − 1
	ncut := 1
	if cut.Type.Array > 0 {
		ncut = cut.Dims[0]
		if ncut != n {
			return Value{}, errf(name, "size of Integers (%d) and size of Cut-points array (%d) must match in size", n, ncut)
		}
	}
	cv := c.T.Value(cut.Var)
	if err := checkInts(name, "Random variable", ks, 1, k1+1, isContainer(args[0])); err != nil {
		return Value{}, err
	}
	if err := checkVals(name, "Location parameter", chkFinite, ev, isContainer(args[1])); err != nil {
		return Value{}, err
	}
	for j := range ncut {
		cj := cv[j*k1 : (j+1)*k1]
		for i := 1; i < k1; i++ {
			if !(cj[i] > cj[i-1]) {
				return Value{}, errf(name, "Cut-points is not a valid ordered vector. The element at %d is %s, but should be greater than the previous element, %s", i+1, fmtReal(cj[i]), fmtReal(cj[i-1]))
			}
		}
		if err := checkVals(name, "Cut-points", chkFinite, cj, true); err != nil {
			return Value{}, err
		}
	}
	fb := c.T.Fused()
	de, dc := fb.Partial(eta), fb.Partial(cut.Var)
	lp := 0.0
	for i, k := range ks {
		e := bcast(ev, i)
		off := 0
		if ncut > 1 {
			off = i * k1
		}
		cj := cv[off : off+k1]
		switch {
		case k == 1:
			// log σ(c₁ − η); ∂/∂η = −σ(η − c₁), ∂/∂c₁ = σ(η − c₁).
			lp += mathx.LogLogistic(cj[0] - e)
			g := mathx.Logistic(e - cj[0])
			if de != nil {
				de[idx(de, i)] -= g
			}
			if dc != nil {
				dc[off] += g
			}
		case k == k1+1:
			// log σ(η − c_{K−1}); ∂/∂η = σ(c_{K−1} − η).
			lp += mathx.LogLogistic(e - cj[k1-1])
			g := mathx.Logistic(cj[k1-1] - e)
			if de != nil {
				de[idx(de, i)] += g
			}
			if dc != nil {
				dc[off+k1-1] -= g
			}
		default:
			a, b := e-cj[k-2], e-cj[k-1] // a > b
			la, lb := mathx.LogLogistic(a), mathx.LogLogistic(b)
			l := la + mathx.Log1mExp(lb-la)
			lp += l
			p := math.Exp(l)
			sa, sb := mathx.Logistic(a), mathx.Logistic(b)
			da, db := sa*(1-sa)/p, sb*(1-sb)/p // ∂l/∂a and −∂l/∂b
			if de != nil {
				de[idx(de, i)] += da - db
			}
			if dc != nil {
				dc[off+k-2] -= da
				dc[off+k-1] += db
			}
		}
	}
	return realV(fb.Done(lp)), nil
}

// hypergeometric is log C(a, n) + log C(b, N − n) − log C(a + b, N), a constant.
func hypergeometric(c *Ctx, args []Value) (Value, error) {
	const name = "hypergeometric_lpmf"
	n, nn, a, b := intOf(args[0]), intOf(args[1]), intOf(args[2]), intOf(args[3])
	if nn > a+b || n < max(0, nn-b) || n > min(a, nn) {
		return Value{}, errf(name, "Successes variable is %d, but must be in the interval [%d, %d]", n, max(0, nn-b), min(a, nn))
	}
	f := func(x int) float64 { return float64(x) }
	v := mathx.LogBinomial(f(a), f(n)) + mathx.LogBinomial(f(b), f(nn-n)) - mathx.LogBinomial(f(a+b), f(nn))
	return realV(c.T.Const(v)), nil
}

// multiNormalPrec is Σ_i [−K/2 log 2π + ½ log|Ω| − ½ (y_i − μ_i)ᵀ Ω (y_i − μ_i)].
func multiNormalPrec(c *Ctx, args []Value) (Value, error) {
	const name = "multi_normal_prec_lpdf"
	y, mu := args[0], args[1]
	om, r, k := matOf(c, args[2])
	if err := checkSymmetric(c, name, om, r, k); err != nil {
		return Value{}, err
	}
	ky, km := y.Dims[len(y.Dims)-1], mu.Dims[len(mu.Dims)-1]
	if ky != k || km != k {
		return Value{}, errf(name, "size of random variable (%d), size of location parameter (%d) and rows of precision parameter (%d) must match in size", ky, km, k)
	}
	ny, nm := y.Len()/k, mu.Len()/k
	if ny != nm && ny != 1 && nm != 1 {
		return Value{}, errf(name, "size of random variable (%d) and size of location parameter (%d) must match in size", ny, nm)
	}
	n := max(ny, nm)
	t := c.T
	var q ad.Var
	for i := range n {
		yi, mi := y.Var, mu.Var
		if ny > 1 {
			yi = t.Slice(y.Var, i*k, (i+1)*k)
		}
		if nm > 1 {
			mi = t.Slice(mu.Var, i*k, (i+1)*k)
		}
		d := t.Sub(yi, mi)
		qi := t.Dot(d, t.MatVec(om, d))
		if i == 0 {
			q = qi
		} else {
			q = t.Add(q, qi)
		}
	}
	ld := t.LogDet(om)
	fn := float64(n)
	lp := t.AddC(t.Sub(t.MulC(ld, 0.5*fn), t.MulC(q, 0.5)), -fn*float64(k)*mathx.LogSqrt2Pi)
	return realV(lp), nil
}

// wishartSigs are wishart and inv_wishart.
func wishartSigs() []Sig {
	var s []Sig
	for _, name := range []string{"wishart", "inv_wishart"} {
		fn := wishart(name == "inv_wishart")
		s = append(s, sig(name+"_lpdf", TReal, fn, aMatrix, aReal, aMatrix),
			sig(name+"_lupdf", TReal, fn, aMatrix, aReal, aMatrix))
	}
	return s
}

// lmgammaHalf is log Γ_K(ν/2) = K(K−1)/4 log π + Σ_{j=1}^{K} lnΓ(ν/2 + (1−j)/2), with
// ∂/∂ν = ½ Σ ψ(ν/2 + (1−j)/2).
func lmgammaHalf(t *ad.Tape, nu ad.Var, k int) ad.Var {
	a := t.Float(nu) / 2
	v := float64(k*(k-1)) / 4 * math.Log(math.Pi)
	d := 0.0
	for j := 1; j <= k; j++ {
		x := a + float64(1-j)/2
		v += mathx.Lgamma(x)
		d += mathx.Digamma(x) / 2
	}
	fb := t.Fused()
	if p := fb.Partial(nu); p != nil {
		p[0] = d
	}
	return fb.Done(v)
}

// wishart is Stan's wishart(W | ν, S):
//
//	log p = (ν−K−1)/2 log|W| − ½ tr(S⁻¹W) − νK/2 log 2 − ν/2 log|S| − log Γ_K(ν/2),
//
// or inv_wishart(W | ν, S):
//
//	log p = ν/2 log|S| − νK/2 log 2 − log Γ_K(ν/2) − (ν+K+1)/2 log|W| − ½ tr(S W⁻¹),
//
// on the tape from log-determinants, one inverse and a trace.
func wishart(inv bool) Impl {
	name := "wishart_lpdf"
	if inv {
		name = "inv_wishart_lpdf"
	}
	return func(c *Ctx, args []Value) (Value, error) {
		t := c.T
		w, r, k := matOf(c, args[0])
		sm, rs, ks := matOf(c, args[2])
		if r != k || rs != ks || r != rs {
			return Value{}, errf(name, "random variable (%d×%d) and scale matrix (%d×%d) must be square of the same size", r, k, rs, ks)
		}
		if err := checkSymmetric(c, name, w, r, k); err != nil {
			return Value{}, err
		}
		if err := checkSymmetric(c, name, sm, rs, ks); err != nil {
			return Value{}, err
		}
		nu := realVar(c, args[1])
		if v := t.Float(nu); !(v > float64(k-1)) {
			return Value{}, errf(name, "Degrees of freedom parameter is %s, but must be greater than %d", fmtReal(v), k-1)
		}
		for _, m := range []ad.Var{w, sm} {
			l := t.Cholesky(m)
			for _, x := range t.Value(l) {
				if math.IsNaN(x) {
					return Value{}, errf(name, "matrix is not positive definite")
				}
			}
		}
		fk := float64(k)
		ldW, ldS := t.LogDet(w), t.LogDet(sm)
		var tr, lp ad.Var
		if inv {
			wi, err := inverse(c, []Value{{Type: TMatrix, Dims: []int{k, k}, Var: w}})
			if err != nil {
				return Value{}, errf(name, "%v", err)
			}
			tr = t.Dot(sm, t.Transpose(wi.Var))
			// ν/2 (log|S| − K log 2) − (ν+K+1)/2 log|W|
			lp = t.Sub(t.Mul(t.MulC(nu, 0.5), t.AddC(ldS, -fk*math.Ln2)), t.Mul(t.MulC(t.AddC(nu, fk+1), 0.5), ldW))
		} else {
			si, err := inverse(c, []Value{{Type: TMatrix, Dims: []int{k, k}, Var: sm}})
			if err != nil {
				return Value{}, errf(name, "%v", err)
			}
			tr = t.Dot(si.Var, t.Transpose(w))
			// (ν−K−1)/2 log|W| − ν/2 (log|S| + K log 2)
			lp = t.Sub(t.Mul(t.MulC(t.AddC(nu, -fk-1), 0.5), ldW), t.Mul(t.MulC(nu, 0.5), t.AddC(ldS, fk*math.Ln2)))
		}
		lp = t.Sub(t.Sub(lp, t.MulC(tr, 0.5)), lmgammaHalf(t, nu, k))
		return realV(lp), nil
	}
}

// logBesselI0 returns log I₀(x) and I₁(x)/I₀(x) for x ≥ 0: the power series
// I_ν(x) = Σ_k (x/2)^{2k+ν} / (k! (k+ν)!) scaled by e^{−x} for x ≤ 50, else the asymptotic
// expansion I_ν(x) ≈ e^x/√(2πx) · (1 − (4ν²−1)/(8x) + (4ν²−1)(4ν²−9)/(2!(8x)²) − …)
// (Abramowitz & Stegun 9.6.10 and 9.7.1), whose terms below 1e-17 are dropped.
func logBesselI0(x float64) (float64, float64) {
	if x <= 50 {
		q := x * x / 4
		t0 := math.Exp(-x) // k = 0 term of e^{−x} I₀
		t1 := t0 * x / 2   // k = 0 term of e^{−x} I₁
		s0, s1 := t0, t1
		for k := 1; k < 500; k++ {
			fk := float64(k)
			t0 *= q / (fk * fk)
			t1 *= q / (fk * (fk + 1))
			s0 += t0
			s1 += t1
			if t0 < 1e-17*s0 && t1 < 1e-17*s1 {
				break
			}
		}
		return x + math.Log(s0), s1 / s0
	}
	asym := func(nu float64) float64 {
		mu := 4 * nu * nu
		s, term := 1.0, 1.0
		for k := 1; k < 30; k++ {
			fk := float64(2*k - 1)
			term *= -(mu - fk*fk) / (float64(k) * 8 * x)
			s += term
			if math.Abs(term) < 1e-17 {
				break
			}
		}
		return s
	}
	a0, a1 := asym(0), asym(1)
	return x - 0.5*math.Log(2*math.Pi*x) + math.Log(a0), a1 / a0
}

// vonMisesKern: log p = κ cos(y − μ) − log(2π I₀(κ)); ∂/∂y = −κ sin(y − μ),
// ∂/∂μ = κ sin(y − μ), ∂/∂κ = cos(y − μ) − I₁(κ)/I₀(κ). Only the density (kind kLpdf).
func vonMisesKern(y float64, p [3]float64, _ int) (float64, float64, dist.Partials) {
	mu, k := p[0], p[1]
	li0, ratio := logBesselI0(k)
	s, c := math.Sincos(y - mu)
	return k*c - math.Log(2*math.Pi) - li0, -k * s, dist.Partials{k * s, c - ratio}
}

// vonMisesRand draws by Best & Fisher (1979), "Efficient simulation of the von Mises
// distribution", Applied Statistics 28, result in (μ − π, μ + π].
func vonMisesRand(r *rand.Rand, p [3]float64) float64 {
	mu, k := p[0], p[1]
	if k < 1e-8 {
		return mu + math.Pi*(2*r.Float64()-1)
	}
	a := 1 + math.Sqrt(1+4*k*k)
	b := (a - math.Sqrt(2*a)) / (2 * k)
	rr := (1 + b*b) / (2 * b)
	for {
		u1, u2, u3 := r.Float64(), r.Float64(), r.Float64()
		z := math.Cos(math.Pi * u1)
		f := (1 + rr*z) / (rr + z)
		c := k * (rr - f)
		if c*(2-c)-u2 > 0 || math.Log(c/u2)+1-c >= 0 {
			th := math.Acos(f)
			if u3 < 0.5 {
				th = -th
			}
			return mu + th
		}
	}
}
