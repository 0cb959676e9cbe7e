package flow

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
)

// Batch is a Flow that maps S base points in one pass, the batched form of Forward that
// family.Flow's DrawBatch uses for the S draws of a gradient step:
//
//	ForwardBatch(U) = (Z, logdet),   Z_s· = T(U_s·; φ),   logdet_s = log|det ∂T/∂u| at U_s·
//
// U is an S×Dim node (row-major; a vector of S·Dim values is accepted), Z an S×Dim node and
// logdet a vector node of size S. Row s has the values and gradients Forward(U_s·) records, up
// to rounding. Use the function ForwardBatch, which falls back to Forward row by row for flows
// that are not a Batch.
type Batch interface {
	Flow
	ForwardBatch(t *ad.Tape, params, U ad.Var) (Z, logdet ad.Var)
}

var (
	_ Batch = (*Composed)(nil)
	_ Batch = (*Affine)(nil)
	_ Batch = (*BernsteinAR)(nil)
)

// batchRows returns S for U with S rows of d values; it panics otherwise.
func batchRows(t *ad.Tape, fn string, U ad.Var, d int) int {
	n := t.Size(U)
	if n == 0 || n%d != 0 {
		panic(fmt.Sprintf("flow: %s: size of U %d is not a positive multiple of Dim=%d", fn, n, d))
	}
	return n / d
}

// ForwardBatch records f's forward map of the S rows of U: f.ForwardBatch when f is a Batch,
// else Forward of each row (S row views, S Forward calls and two concatenations).
func ForwardBatch(t *ad.Tape, f Flow, params, U ad.Var) (Z, logdet ad.Var) {
	if b, ok := f.(Batch); ok {
		return b.ForwardBatch(t, params, U)
	}
	d := f.Dim()
	S := batchRows(t, "ForwardBatch", U, d)
	var zb, lb [16]ad.Var
	zs, ls := zb[:0], lb[:0]
	for s := range S {
		z, ld := f.Forward(t, params, t.Slice(U, s*d, (s+1)*d))
		zs, ls = append(zs, z), append(ls, ld)
	}
	return t.AsMatrix(t.Concat(zs...), S, d), t.Concat(ls...)
}

// ForwardBatch applies the parts in order (ForwardBatch of each) and sums their
// log-determinants row by row.
func (c *Composed) ForwardBatch(t *ad.Tape, params, U ad.Var) (Z, logdet ad.Var) {
	checkLen("Composed.ForwardBatch", "params", t.Size(params), c.NumParams())
	batchRows(t, "Composed.ForwardBatch", U, c.d)
	Z = U
	for i, f := range c.parts {
		var ld ad.Var
		Z, ld = ForwardBatch(t, f, c.view(t, params, i), Z)
		if i == 0 {
			logdet = ld
		} else {
			logdet = t.Add(logdet, ld)
		}
	}
	return Z, logdet
}

// affineBatch is the Backwarder of Affine's batch node (arguments: params, U; aux: exp(ω)):
// Z_si = μ_i + e^{ω_i}·U_si, logdet_s = Σ_i ω_i, so with Z̄, l̄ the output adjoints
// μ̄_i += Σ_s Z̄_si, ω̄_i += e^{ω_i}·Σ_s Z̄_si·U_si + Σ_s l̄_s, Ū_si += e^{ω_i}·Z̄_si.
type affineBatch Affine

func (n *affineBatch) Backward(c ad.Custom) {
	d := n.d
	t := c.Tape()
	gp, gu := t.Grad(c.Arg(0)), t.Grad(c.Arg(1))
	u, ex := t.Value(c.Arg(1)), c.Aux()
	S := len(u) / d
	G := c.Grad()
	Zb, lb := G[:S*d], G[S*d:]
	if gp != nil {
		sl := 0.0
		for _, v := range lb {
			sl += v
		}
		for i := range d {
			sm, su := 0.0, 0.0
			for s := range S {
				v := Zb[s*d+i]
				sm += v
				su += v * u[s*d+i]
			}
			gp[i] += sm
			gp[d+i] += ex[i]*su + sl
		}
	}
	if gu != nil {
		for s := range S {
			for i := range d {
				gu[s*d+i] += ex[i] * Zb[s*d+i]
			}
		}
	}
}

// ForwardBatch records z_s = μ + exp(ω)⊙u_s and Σω for the S rows of U as one node.
func (a *Affine) ForwardBatch(t *ad.Tape, params, U ad.Var) (Z, logdet ad.Var) {
	d := a.d
	checkLen("Affine.ForwardBatch", "params", t.Size(params), 2*d)
	S := batchRows(t, "Affine.ForwardBatch", U, d)
	c := t.Custom((*affineBatch)(a), S*(d+1), d, params, U)
	p, u, out, ex := t.Value(params), t.Value(U), c.Value(), c.Aux()
	ld := 0.0
	for i := range d {
		ex[i] = math.Exp(p[d+i])
		ld += p[d+i]
	}
	for s := range S {
		for i := range d {
			out[s*d+i] = p[i] + ex[i]*u[s*d+i]
		}
		out[S*d+s] = ld
	}
	v := c.Var()
	return t.AsMatrix(t.Slice(v, 0, S*d), S, d), t.Slice(v, S*d, S*(d+1))
}
