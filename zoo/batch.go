package zoo

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/model"
)

// batcher is implemented by models with a batched log density (model.BatchTarget): the log
// density of the S rows of Z (S×Dim unconstrained points) as one vector node of size S, with
// the log-Jacobian when jac is set.
type batcher interface {
	logDensityBatch(t *ad.Tape, Z ad.Var, jac bool) ad.Var
}

var _ model.BatchTarget = (*Model)(nil)

// LogDensityBatch records the log densities of the S rows of Z (an S×Dim node) as one vector
// node of size S (model.BatchTarget), the values LogDensity gives row by row up to rounding.
// Models with a batched form (eight_schools) record one fused node for all S rows; for the
// others ok is false and nothing is recorded.
func (m *Model) LogDensityBatch(t *ad.Tape, Z ad.Var) (ad.Var, bool) {
	b, ok := m.impl.(batcher)
	if !ok {
		return ad.Var{}, false
	}
	if n := t.Size(Z); n == 0 || n%m.Dim() != 0 {
		panic(fmt.Sprintf("zoo: %s: LogDensityBatch: size of Z %d is not a positive multiple of Dim=%d", m.Name, n, m.Dim()))
	}
	return b.logDensityBatch(t, Z, !m.tgt.NoJacobian), true
}

// eightBatch is the Backwarder of eight_schools' batch node (argument: Z; aux: the S×10
// partials ∂lp_s/∂z_s): Z̄_s += l̄_s·∂lp_s/∂z_s.
type eightBatch eightSchools

func (n *eightBatch) Backward(c ad.Custom) {
	t := c.Tape()
	gz := t.Grad(c.Arg(0))
	if gz == nil {
		return
	}
	g, aux := c.Grad(), c.Aux()
	for s, lb := range g {
		for i, v := range aux[s*10 : (s+1)*10] {
			gz[s*10+i] += lb * v
		}
	}
}

// logDensityBatch: for each row z = (theta_trans[1..8], mu, log tau), tau = e^{z_10}, θ_j =
// mu + tau·theta_trans_j and r_j = (y_j − θ_j)/σ_j,
//
//	lp = Σ_j [−½ theta_trans_j² − ½ r_j² − log σ_j] − 17·½log 2π − ½(mu/5)² − log 5
//	     − log(5π) − log1p((tau/5)²) + z_10 (with the Jacobian),
//
// with the partials ∂/∂theta_trans_j = −theta_trans_j + tau·r_j/σ_j, ∂/∂mu = Σ_j r_j/σ_j −
// mu/25 and ∂/∂z_10 = tau·(Σ_j theta_trans_j·r_j/σ_j − (2tau/25)/(1 + (tau/5)²)) (+ 1), one
// fused node with 10·S partials. Cost O(S·J).
func (m *eightSchools) logDensityBatch(t *ad.Tape, Z ad.Var, jac bool) ad.Var {
	const D = 10
	zv := t.Value(Z)
	S := len(zv) / D
	c := t.CustomUninit((*eightBatch)(m), S, S*D, Z) // every partial is written below
	out, aux := c.Value(), c.Aux()
	cst := -17*0.5*math.Log(2*math.Pi) - math.Log(5) - math.Log(5*math.Pi) // 17 normals: theta_trans, y, mu
	for _, s := range m.sigma {
		cst -= math.Log(s)
	}
	for s := range S {
		z, g := zv[s*D:(s+1)*D], aux[s*D:(s+1)*D]
		mu, lt := z[8], z[9]
		tau := math.Exp(lt)
		lp, gmu, gtau := 0.0, -mu/25, 0.0
		for j, tt := range z[:8] {
			sj := m.sigma[j]
			r := (m.y[j] - (mu + tau*tt)) / sj
			lp -= 0.5 * (tt*tt + r*r)
			w := r / sj
			g[j] = -tt + tau*w
			gmu += w
			gtau += tt * w
		}
		q := tau / 5
		lp += cst - 0.5*(mu/5)*(mu/5) - math.Log1p(q*q)
		g[8] = gmu
		g[9] = tau * (gtau - (2*tau/25)/(1+q*q))
		if jac {
			lp += lt
			g[9]++
		}
		out[s] = lp
	}
	return c.Var()
}
