package zoo

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/kernel"
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
// Models with a batched form (eight_schools: one fused node for all S rows; the normal
// regressions diamonds, arK, kidiq, mesquite, nes, sblrc, earnings: the layout and prior per
// row, the S likelihoods as one node) record it; for the others ok is false and nothing is
// recorded.
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

// glmBatch is the Backwarder of the normal regression's batched likelihood node (arguments:
// alpha_s, beta_s, sigma_s for s = 1..S, in that order; aux: per draw the partials in alpha,
// beta (D) and sigma).
type glmBatch glm

func (n *glmBatch) Backward(c ad.Custom) {
	t := c.Tape()
	g, aux := c.Grad(), c.Aux()
	S := len(g)
	D := n.xt.Rows
	for s, lb := range g {
		a := aux[s*(D+2) : (s+1)*(D+2)]
		if ga := t.Grad(c.Arg(s)); ga != nil {
			ga[0] += lb * a[0]
		}
		if gb := t.Grad(c.Arg(S + s)); gb != nil {
			for j := range D {
				gb[j] += lb * a[1+j]
			}
		}
		if gs := t.Grad(c.Arg(2*S + s)); gs != nil {
			gs[0] += lb * a[D+1]
		}
	}
}

// glmBatchMax is the most rows glm.logDensityBatch records at once (its argument lists live on
// the stack); a larger batch is recorded in chunks.
const glmBatchMax = 16

// glmVars is the most parameters a normal regression's layout has without an allocation in
// logDensityBatch (the zoo's have 2 or 3).
const glmVars = 4

// logDensityBatch: per row the layout's transforms, split and the prior on the tape as
// LogDensity records them, and the S likelihoods Σ_i log N(y_i | alpha_s + x_i·beta_s,
// sigma_s) as one node whose forward reads each feature column once for all the rows of a
// chunk (the linear predictors η_s = alpha_s + X·beta_s by axpys over the columns), with the
// partials
// ∂/∂alpha_s = Σ_i r_i/σ_s, ∂/∂beta_s = Σ_i x_i r_i/σ_s, ∂/∂sigma_s = Σ_i (r_i² − 1)/σ_s,
// r_i = (y_i − η_i)/σ_s. Cost O(S·N·D) multiply-adds, the design read S/glmBatchMax times
// instead of S times.
func (m *glm) logDensityBatch(t *ad.Tape, Z ad.Var, jac bool) ad.Var {
	D, N := m.xt.Rows, m.xt.Cols
	dz := m.lay.Dim()
	S := t.Size(Z) / dz
	var chunks [1 + 64/glmBatchMax]ad.Var
	cs := chunks[:0]
	for lo := 0; lo < S; lo += glmBatchMax {
		hi := min(lo+glmBatchMax, S)
		var args [3 * glmBatchMax]ad.Var
		var rest [glmBatchMax]ad.Var
		pbuf, _ := m.vars.Get().(*[glmVars]ad.Var)
		if pbuf == nil {
			pbuf = new([glmVars]ad.Var)
		}
		n := hi - lo
		for s := lo; s < hi; s++ {
			var p []ad.Var
			if nl := m.lay.NumParams(); nl <= len(pbuf) {
				p = pbuf[:nl]
			} else {
				p = make([]ad.Var, nl)
			}
			lj := m.lay.Constrain(t, t.Slice(Z, s*dz, (s+1)*dz), p)
			a, b, sg := m.split(t, p)
			args[s-lo], args[n+s-lo], args[2*n+s-lo] = a, b, sg
			r := t.Const(0)
			if m.prior != nil {
				r = m.prior(t, a, b, sg)
			}
			if jac && !t.IsConst(lj) {
				r = t.Add(r, lj)
			}
			rest[s-lo] = r
		}
		c := t.CustomUninit((*glmBatch)(m), n, n*(D+2), args[:3*n]...) // every partial is written below
		out, aux := c.Value(), c.Aux()
		eta := t.Scratch(n * N) // row s: η of draw s, then its residuals r
		for s := range n {
			e := eta[s*N : (s+1)*N]
			a := t.Float(args[s])
			for i := range e {
				e[i] = a
			}
		}
		for j := range D {
			x := m.xt.Data[j*N : (j+1)*N]
			for s := range n {
				kernel.Axpy(t.Value(args[n+s])[j], x, eta[s*N:(s+1)*N])
			}
		}
		for s := range n {
			sg := t.Float(args[2*n+s])
			inv := 1 / sg
			r := eta[s*N : (s+1)*N]
			ss, sr := 0.0, 0.0
			for i, y := range m.y {
				v := (y - r[i]) * inv
				r[i] = v
				ss += v * v
				sr += v
			}
			out[s] = -0.5*ss - float64(N)*(math.Log(sg)+0.5*math.Log(2*math.Pi))
			a := aux[s*(D+2) : (s+1)*(D+2)]
			a[0] = sr * inv
			for j := range D {
				a[1+j] = kernel.Dot(m.xt.Data[j*N:(j+1)*N], r) * inv
			}
			a[D+1] = (ss - float64(N)) * inv
		}
		m.vars.Put(pbuf)
		cs = append(cs, t.Add(t.Concat(rest[:n]...), c.Var()))
	}
	if len(cs) == 1 {
		return cs[0]
	}
	return t.Concat(cs...)
}
