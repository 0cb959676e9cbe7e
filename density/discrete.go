package density

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/dist"
	"github.com/vigo-bayes/vigo/internal/mathx"
)

// discreteLen checks a data slice of length nk against the Var arguments vs (length 1 or the
// common N) and returns N. The outcomes must have length N, or 1 when every Var is scalar
// with N = 1.
func discreteLen(t *ad.Tape, fn string, kname string, nk int, names []string, vs []ad.Var) int {
	n := nk
	for i, v := range vs {
		if s := t.Size(v); s != 1 && s != n {
			panic(fmt.Sprintf("density: %s: len(%s)=%d, want 1 or len(%s)=%d", fn, names[i], s, kname, n))
		}
	}
	return n
}

// BernoulliLogit records Σᵢ log Bernoulli(yᵢ | logistic(ηᵢ)) for y ∈ {0,1} (dist.BernoulliLogit).
// ∂/∂ηᵢ = yᵢ − logistic(ηᵢ). Cost: one exp and one log1p per observation.
func BernoulliLogit(t *ad.Tape, y []int, eta ad.Var) ad.Var {
	n := discreteLen(t, "BernoulliLogit", "y", len(y), []string{"eta"}, []ad.Var{eta})
	ev := t.Value(eta)
	se := stride(ev, n)
	fb := t.Fused()
	de := fb.Partial(eta)
	lp := 0.0
	for i, yi := range y {
		e := ev[i*se]
		if uint(yi) > 1 {
			lp = math.Inf(-1)
			continue
		}
		// log p = −log(1 + e^{−s·η}) with s = ±1; one exp of −|η| serves value and gradient.
		u := math.Exp(-math.Abs(e))
		var p float64 // logistic(η)
		if e >= 0 {
			p = 1 / (1 + u)
		} else {
			p = u / (1 + u)
		}
		m := e // the logit of the observed outcome: η for y = 1, −η for y = 0
		if yi == 0 {
			m = -e
		}
		lp -= math.Max(-m, 0) + math.Log1p(u)
		if de != nil {
			de[i*se] += float64(yi) - p
		}
	}
	return fb.Done(lp)
}

// BinomialLogit records Σᵢ log Binomial(kᵢ | nᵢ, logistic(ηᵢ)) (dist.BinomialLogit); n has
// length 1 or len(k). ∂/∂ηᵢ = kᵢ − nᵢ·logistic(ηᵢ).
func BinomialLogit(t *ad.Tape, k, n []int, eta ad.Var) ad.Var {
	const fn = "BinomialLogit"
	nn := discreteLen(t, fn, "k", len(k), []string{"eta"}, []ad.Var{eta})
	if len(n) != 1 && len(n) != nn {
		panic(fmt.Sprintf("density: %s: len(n)=%d, want 1 or len(k)=%d", fn, len(n), nn))
	}
	sn := 0
	if len(n) == nn {
		sn = 1
	}
	ev := t.Value(eta)
	se := stride(ev, nn)
	fb := t.Fused()
	de := fb.Partial(eta)
	lp := 0.0
	for i, ki := range k {
		lp0, d := dist.BinomialLogit{N: n[i*sn], Eta: ev[i*se]}.LogProbGrad(ki)
		lp += lp0
		if de != nil {
			de[i*se] += d
		}
	}
	return fb.Done(lp)
}

// PoissonLog records Σᵢ log Poisson(kᵢ | e^{ηᵢ}) (dist.PoissonLog). ∂/∂ηᵢ = kᵢ − e^{ηᵢ}.
// The log k! terms are data-only and summed with lgamma. Cost: one exp per observation (one in
// total for scalar η) plus one lgamma per observation with k > 1.
func PoissonLog(t *ad.Tape, k []int, eta ad.Var) ad.Var {
	n := discreteLen(t, "PoissonLog", "k", len(k), []string{"eta"}, []ad.Var{eta})
	ev := t.Value(eta)
	fb := t.Fused()
	de := fb.Partial(eta)
	lp, lf := 0.0, 0.0
	bad := false
	if len(ev) == 1 && n != 1 {
		e := ev[0]
		ks := 0
		for _, ki := range k {
			if ki < 0 {
				bad = true
			}
			ks += ki
			if ki > 1 {
				lf += mathx.Lgamma(float64(ki) + 1)
			}
		}
		lam := math.Exp(e)
		lp = xtimes(float64(ks), e) - float64(n)*lam
		if de != nil {
			de[0] = float64(ks) - float64(n)*lam
		}
	} else {
		for i, ki := range k {
			e := ev[i]
			if ki < 0 {
				bad = true
			}
			if ki > 1 {
				lf += mathx.Lgamma(float64(ki) + 1)
			}
			lam := math.Exp(e)
			lp += xtimes(float64(ki), e) - lam
			if de != nil {
				de[i] = float64(ki) - lam
			}
		}
	}
	if bad {
		return fb.Done(math.Inf(-1))
	}
	return fb.Done(lp - lf)
}

// xtimes returns k·e with 0·(−Inf) = 0 (k = 0 observations at a zero rate).
func xtimes(k, e float64) float64 {
	if k == 0 {
		return 0
	}
	return k * e
}

// NegBinomial2 records Σᵢ log NegBinomial2(kᵢ | μᵢ, φᵢ) (dist.NegBinomial2, variance μ + μ²/φ).
func NegBinomial2(t *ad.Tape, k []int, mu, phi ad.Var) ad.Var {
	n := discreteLen(t, "NegBinomial2", "k", len(k), []string{"mu", "phi"}, []ad.Var{mu, phi})
	mv, pv := t.Value(mu), t.Value(phi)
	sm, sp := stride(mv, n), stride(pv, n)
	fb := t.Fused()
	dm, dp := fb.Partial(mu), fb.Partial(phi)
	lp := 0.0
	for i, ki := range k {
		l, a, b := dist.NegBinomial2{Mu: mv[i*sm], Phi: pv[i*sp]}.LogProbGrad(ki)
		lp += l
		if dm != nil {
			dm[i*sm] += a
		}
		if dp != nil {
			dp[i*sp] += b
		}
	}
	return fb.Done(lp)
}

// NegBinomial2Log records Σᵢ log NegBinomial2(kᵢ | e^{ηᵢ}, φᵢ) (dist.NegBinomial2Log).
func NegBinomial2Log(t *ad.Tape, k []int, eta, phi ad.Var) ad.Var {
	n := discreteLen(t, "NegBinomial2Log", "k", len(k), []string{"eta", "phi"}, []ad.Var{eta, phi})
	ev, pv := t.Value(eta), t.Value(phi)
	se, sp := stride(ev, n), stride(pv, n)
	fb := t.Fused()
	de, dp := fb.Partial(eta), fb.Partial(phi)
	lp := 0.0
	for i, ki := range k {
		l, a, b := dist.NegBinomial2Log{Eta: ev[i*se], Phi: pv[i*sp]}.LogProbGrad(ki)
		lp += l
		if de != nil {
			de[i*se] += a
		}
		if dp != nil {
			dp[i*sp] += b
		}
	}
	return fb.Done(lp)
}

// CategoricalLogit records Σᵢ log softmax(η)_{yᵢ} for 0-based outcomes y (dist.CategoricalLogit).
// eta is either one K-vector shared by all observations (any shape other than len(y)×K with
// K > 1) or a len(y)×K matrix (t.Shape) with one row of logits per observation. With a shared
// η the cost is O(N + K): Σ η_{yᵢ} − N·logsumexp(η), ∂/∂η_j = count_j − N·softmax_j.
func CategoricalLogit(t *ad.Tape, y []int, eta ad.Var) ad.Var {
	ev := t.Value(eta)
	rows, cols := t.Shape(eta)
	n := len(y)
	fb := t.Fused()
	de := fb.Partial(eta)
	lp := 0.0
	if rows == n && cols > 1 {
		k := cols
		for i, yi := range y {
			row := ev[i*k : (i+1)*k]
			if yi < 0 || yi >= k {
				lp = math.Inf(-1)
				continue
			}
			lse := mathx.LogSumExp(row)
			lp += row[yi] - lse
			if de != nil {
				d := de[i*k : (i+1)*k]
				for j, e := range row {
					d[j] = -math.Exp(e - lse)
				}
				d[yi]++
			}
		}
		return fb.Done(lp)
	}
	k := len(ev)
	lse := mathx.LogSumExp(ev)
	for _, yi := range y {
		if yi < 0 || yi >= k {
			return fb.Done(math.Inf(-1))
		}
		lp += ev[yi]
		if de != nil {
			de[yi]++
		}
	}
	if de != nil {
		nf := float64(n)
		for j, e := range ev {
			de[j] -= nf * math.Exp(e-lse)
		}
	}
	return fb.Done(lp - float64(n)*lse)
}
