package family

import (
	"fmt"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/flow"
)

// BatchFamily is a Family that records the S draws of a gradient step in one pass (the
// batched path of objective.Estimator, which names the same method set as
// objective.BatchFamily):
//
//	DrawBatch(ε_1, …, ε_S) = (Z, logq),   Z_s· = T(ε_s; φ),   logq_s = log q(Z_s·; φ)
//
// eps holds S·NoiseDim values, draw after draw; Z is an S×Dim node (row-major), logq a vector
// node of size S. Row s has the values and gradients Draw(ε_s) records, up to rounding. The
// Gaussians record one node for all S draws (O(S·d) or O(S·d²) work in one pass over the rows,
// the parameter adjoints summed over the rows before they are added); Flow pushes the S draws
// through flow.ForwardBatch (one node for a whole Bernstein layer); Affine maps the rows of its
// base's batch.
type BatchFamily interface {
	Family
	DrawBatch(t *ad.Tape, params ad.Var, eps []float64) (Z, logq ad.Var)
}

var (
	_ BatchFamily = (*MeanField)(nil)
	_ BatchFamily = (*FullRank)(nil)
	_ BatchFamily = (*Flow)(nil)
	_ BatchFamily = (*Affine)(nil)
)

// batchRows returns S for eps of S draws of d values each; it panics otherwise.
func batchRows(fn string, eps []float64, d int) int {
	if len(eps) == 0 || len(eps)%d != 0 {
		panic(fmt.Sprintf("family: %s: len(eps)=%d is not a positive multiple of NoiseDim=%d", fn, len(eps), d))
	}
	return len(eps) / d
}

// splitBatch returns Z (S×d view) and logq (S) of a batch node whose value is [Z | logq].
func splitBatch(t *ad.Tape, out ad.Var, S, d int) (Z, logq ad.Var) {
	return t.AsMatrix(t.Slice(out, 0, S*d), S, d), t.Slice(out, S*d, S*(d+1))
}

// gaussBatchBack is the backward rule of the Gaussians' batch node (arguments: params, ε as a
// constant): Z_si = μ_i + Σ_{j≤i} L_ij ε_sj (L diagonal for MeanField), logq_s = c_s − Σ_i
// log L_ii. With Z̄ and l̄ the output adjoints:
//
//	μ̄_i += Σ_s Z̄_si,   L̄_ij += Σ_s Z̄_si ε_sj (i > j),
//	ρ̄_i += (Σ_s Z̄_si ε_si)·∂L_ii/∂ρ_i − (Σ_s l̄_s)·∂log L_ii/∂ρ_i.
func gaussBatchBack(c ad.Custom, d int, pos Positivity, full bool) {
	t := c.Tape()
	gp := t.Grad(c.Arg(0))
	if gp == nil {
		return
	}
	p, eps := t.Value(c.Arg(0)), t.Value(c.Arg(1))
	S := len(eps) / d
	G := c.Grad()
	Zb, lb := G[:S*d], G[S*d:]
	sl := 0.0
	for _, v := range lb {
		sl += v
	}
	for i := range d {
		sm, sd := 0.0, 0.0
		for s := range S {
			zb := Zb[s*d+i]
			sm += zb
			sd += zb * eps[s*d+i]
		}
		r := p[d+i]
		sig := pos.scale(r)
		ds := pos.dScale(r, sig)
		dl := 1.0
		if pos != Exp {
			dl = ds / sig
		}
		gp[i] += sm
		gp[d+i] += sd*ds - sl*dl
		if full {
			for j := range i {
				a := 0.0
				for s := range S {
					a += Zb[s*d+i] * eps[s*d+j]
				}
				gp[2*d+offIndex(i, j)] += a
			}
		}
	}
}

// mfBatch and frBatch are the Backwarders of the Gaussians' batch nodes.
type (
	mfBatch MeanField
	frBatch FullRank
)

func (f *mfBatch) Backward(c ad.Custom) { gaussBatchBack(c, f.d, f.pos, false) }
func (f *frBatch) Backward(c ad.Custom) { gaussBatchBack(c, f.d, f.pos, true) }

// DrawBatch records the S draws z_s = μ + σ⊙ε_s and log q(z_s) as one node (see
// BatchFamily). Cost O(S·d).
func (f *MeanField) DrawBatch(t *ad.Tape, params ad.Var, eps []float64) (Z, logq ad.Var) {
	d := f.d
	checkLen("MeanField.DrawBatch", "params", t.Size(params), f.NumParams())
	S := batchRows("MeanField.DrawBatch", eps, d)
	c := t.Custom((*mfBatch)(f), S*(d+1), 0, params, t.ConstRef(eps))
	p, out := t.Value(params), c.Value()
	sl := 0.0
	for i := range d {
		sl += f.pos.logScale(p[d+i])
	}
	for s := range S {
		e, z := eps[s*d:(s+1)*d], out[s*d:(s+1)*d]
		for i := range d {
			z[i] = p[i] + f.pos.scale(p[d+i])*e[i]
		}
		out[S*d+s] = -sl + (-halfSq(e) - logNormConst(d))
	}
	return splitBatch(t, c.Var(), S, d)
}

// DrawBatch records the S draws z_s = μ + Lε_s and log q(z_s) as one node (see BatchFamily).
// Cost O(S·d²), the d diagonal scales computed once.
func (f *FullRank) DrawBatch(t *ad.Tape, params ad.Var, eps []float64) (Z, logq ad.Var) {
	d := f.d
	checkLen("FullRank.DrawBatch", "params", t.Size(params), f.NumParams())
	S := batchRows("FullRank.DrawBatch", eps, d)
	c := t.Custom((*frBatch)(f), S*(d+1), 0, params, t.ConstRef(eps))
	p, out := t.Value(params), c.Value()
	diag := t.Scratch(d)
	sl := 0.0
	for i := range d {
		diag[i] = f.pos.scale(p[d+i])
		sl += f.pos.logScale(p[d+i])
	}
	for s := range S {
		e, z := eps[s*d:(s+1)*d], out[s*d:(s+1)*d]
		for i := range d {
			off := p[2*d+offIndex(i, 0):][:i]
			a := 0.0
			for j, l := range off {
				a += l * e[j]
			}
			z[i] = p[i] + (a + diag[i]*e[i])
		}
		out[S*d+s] = -sl + (-halfSq(e) - logNormConst(d))
	}
	return splitBatch(t, c.Var(), S, d)
}

// DrawBatch records the S draws z_s = A(T(ε_s)) and log q(z_s) (see BatchFamily): the base
// points (with a t base, ε_t = F_ν⁻¹(Φ(ε)) row by row in tape scratch) go through
// flow.ForwardBatch of T and the affine layer, and log q_s = log p_base(u_s) − logdet_s.
func (q *Flow) DrawBatch(t *ad.Tape, params ad.Var, eps []float64) (Z, logq ad.Var) {
	d := q.d
	checkLen("Flow.DrawBatch", "params", t.Size(params), q.NumParams())
	S := batchRows("Flow.DrawBatch", eps, d)
	u := eps
	if !q.base.gaussian() {
		u = t.Scratch(len(eps))
		for s := range S {
			q.base.transform(eps[s*d:(s+1)*d], u[s*d:(s+1)*d])
		}
	}
	Z, ld := flow.ForwardBatch(t, q.inner, params, t.AsMatrix(t.ConstRef(u), S, d))
	lb := t.Scratch(S)
	for s := range S {
		lb[s] = q.base.logDensity(u[s*d : (s+1)*d])
	}
	return Z, t.Sub(t.ConstRef(lb), ld)
}

// affineRows is the backward rule of Affine's batch node (argument: the base's S×d draws U):
// Z_s = Scale·U_s + Shift, so Ū_s += Scaleᵀ·Z̄_s.
type affineRows Affine

func (n *affineRows) Backward(c ad.Custom) {
	a := (*Affine)(n)
	t := c.Tape()
	gu := t.Grad(c.Arg(0))
	if gu == nil {
		return
	}
	d := a.Dim()
	G := c.Grad()
	for s := range len(G) / d {
		zb, ub := G[s*d:(s+1)*d], gu[s*d:(s+1)*d]
		if a.Diag {
			for i, v := range zb {
				ub[i] += a.Scale[i] * v
			}
			continue
		}
		for i, v := range zb {
			row := a.Scale[i*d : (i+1)*d]
			for k := 0; k <= i; k++ {
				ub[k] += row[k] * v
			}
		}
	}
}

// DrawBatch records the base family's S draws (its DrawBatch when it is a BatchFamily, else
// Draw row by row) mapped by z = Shift + Scale·u, one node for the S rows, and log q − log|det
// Scale| (see BatchFamily). Cost on top of the base: O(S·d²) (O(S·d) diagonal).
func (a *Affine) DrawBatch(t *ad.Tape, params ad.Var, eps []float64) (Z, logq ad.Var) {
	d := a.Dim()
	nd := a.NoiseDim()
	S := batchRows("Affine.DrawBatch", eps, nd)
	var U, lq ad.Var
	if b, ok := a.Base.(BatchFamily); ok {
		U, lq = b.DrawBatch(t, params, eps)
	} else {
		us, lqs := make([]ad.Var, S), make([]ad.Var, S)
		for s := range S {
			us[s], lqs[s] = a.Base.Draw(t, params, eps[s*nd:(s+1)*nd])
		}
		U, lq = t.Concat(us...), t.Concat(lqs...)
	}
	c := t.Custom((*affineRows)(a), S*d, 0, U)
	uv, out := t.Value(U), c.Value()
	for s := range S {
		u, z := uv[s*d:(s+1)*d], out[s*d:(s+1)*d]
		for i := range d {
			var v float64
			if a.Diag {
				v = a.Scale[i] * u[i]
			} else {
				row := a.Scale[i*d : (i+1)*d]
				for k := 0; k < d; k++ {
					v += row[k] * u[k]
				}
			}
			z[i] = v + a.Shift[i]
		}
	}
	return t.AsMatrix(c.Var(), S, d), t.AddC(lq, -a.logDet)
}

// BatchDensityFamily is a BatchFamily that also records log q of S given points in one call,
// for sticking-the-landing gradients on the batched path (objective.Estimator with STL, which
// names the same method set): LogDensityBatch(params, Z) is a vector node of size S whose
// element s is LogDensity(params, Z_s·). The Gaussians and Affine implement it, row by row
// (S fused nodes of LogDensity; a Gaussian's is one node of O(d²) work), so values and
// gradients are those of LogDensity exactly.
type BatchDensityFamily interface {
	BatchFamily
	LogDensityBatch(t *ad.Tape, params, Z ad.Var) ad.Var
}

var (
	_ BatchDensityFamily = (*MeanField)(nil)
	_ BatchDensityFamily = (*FullRank)(nil)
	_ BatchDensityFamily = (*Affine)(nil)
)

// logDensityRows records f.LogDensity of each row of Z and concatenates the S values.
func logDensityRows(t *ad.Tape, f Family, params, Z ad.Var) ad.Var {
	d := f.Dim()
	S := t.Size(Z) / d
	var buf [16]ad.Var
	v := buf[:0]
	for s := range S {
		v = append(v, f.LogDensity(t, params, t.Slice(Z, s*d, (s+1)*d)))
	}
	return t.Concat(v...)
}

// LogDensityBatch records LogDensity of each row of Z (see BatchDensityFamily).
func (f *MeanField) LogDensityBatch(t *ad.Tape, params, Z ad.Var) ad.Var {
	return logDensityRows(t, f, params, Z)
}

// LogDensityBatch records LogDensity of each row of Z (see BatchDensityFamily).
func (f *FullRank) LogDensityBatch(t *ad.Tape, params, Z ad.Var) ad.Var {
	return logDensityRows(t, f, params, Z)
}

// LogDensityBatch records LogDensity of each row of Z (see BatchDensityFamily): for a flow
// base an inversion per row, as LogDensity.
func (a *Affine) LogDensityBatch(t *ad.Tape, params, Z ad.Var) ad.Var {
	return logDensityRows(t, a, params, Z)
}
