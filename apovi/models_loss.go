package apovi

import (
	"fmt"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
)

// Loss records the per-dataset loss of obj; see Model.Loss.
func (m *AMFVI) Loss(t *ad.Tape, p ad.Var, obj Objective, ctx, tgt Dataset, S int, r *rand.Rand) (ad.Var, error) {
	const fn = "AMFVI.Loss"
	if err := m.checkCall(fn, t, p, S, r); err != nil {
		return ad.Var{}, err
	}
	if _, err := m.lossData(fn, obj, ctx, tgt); err != nil {
		return ad.Var{}, err
	}
	infer := func(q Dataset) []ad.Var { return m.infer(t, p, q) }
	run := func(q Dataset, O []ad.Var, xt []float64, nt int, keep bool) pass {
		ps := m.pass(t, q, O, xt, nt, r)
		if keep {
			ps.raw = O
		}
		return ps
	}
	klq := func(a, b pass, _, _ Dataset) ad.Var {
		var kl ad.Var
		for l := range a.raw {
			g := &mfKL{din: m.dims[l], dout: m.dims[l+1], alpha: m.alpha}
			k := g.record(t, a.raw[l], b.raw[l])
			if l == 0 {
				kl = k
			} else {
				kl = t.Add(kl, k)
			}
		}
		return kl
	}
	return m.amortisedLoss(t, p, obj, ctx, tgt, S, r, infer, run, klq), nil
}

func (m *AMFVI) infer(t *ad.Tape, p ad.Var, q Dataset) []ad.Var {
	xy := xyMat(q)
	O := make([]ad.Var, len(m.nets))
	for l, nt := range m.nets {
		O[l] = nt.ForwardC(t, t.Slice(p, m.offs[l], m.offs[l+1]), xy)
	}
	return O
}

func (m *AMFVI) pass(t *ad.Tape, q Dataset, O []ad.Var, xt []float64, nt int, r *rand.Rand) pass {
	L := m.layers()
	var ps pass
	H := constMat(t, q.X, q.N, q.DX)
	var Ht ad.Var
	if nt > 0 {
		Ht, ps.hasFt = constMat(t, xt, nt, q.DX), true
	}
	for l := range L {
		g := &mf{din: m.dims[l], dout: m.dims[l+1], alpha: m.alpha}
		W, b, kl := g.record(t, O[l], r)
		if l == 0 {
			ps.KL = kl
		} else {
			ps.KL = t.Add(ps.KL, kl)
		}
		a := act(l, L)
		H = t.Dense(H, W, b, a)
		if ps.hasFt {
			Ht = t.Dense(Ht, W, b, a)
		}
	}
	ps.F, ps.Ft = H, Ht
	return ps
}

// Predict draws S posterior samples given ctx; see Model.Predict.
func (m *AMFVI) Predict(ctx Dataset, xTest []float64, S int, r *rand.Rand) (*Prediction, error) {
	const fn = "AMFVI.Predict"
	if err := m.checkPredict(fn, &ctx, xTest, S, r, true); err != nil {
		return nil, err
	}
	var t ad.Tape
	p := t.ConstRef(m.params)
	O := m.infer(&t, p, ctx)
	nt := len(xTest) / ctx.DX
	return m.predict(nt, S, func() []float64 {
		mk := t.Mark()
		ps := m.pass(&t, ctx, O, xTest, nt, r)
		f := append([]float64(nil), t.Value(ps.Ft)...)
		t.Rewind(mk)
		return f
	}), nil
}

// Loss records the per-dataset loss; POVI supports ELBO only, on D = ctx ∪ tgt (its q does
// not depend on data). See Model.Loss.
func (m *POVI) Loss(t *ad.Tape, p ad.Var, obj Objective, ctx, tgt Dataset, S int, r *rand.Rand) (ad.Var, error) {
	const fn = "POVI.Loss"
	if obj != ELBO {
		return ad.Var{}, fmt.Errorf("apovi: %s: objective %v is for amortised models; POVI is trained with elbo", fn, obj)
	}
	if err := m.checkCall(fn, t, p, S, r); err != nil {
		return ad.Var{}, err
	}
	d, err := m.lossData(fn, obj, ctx, tgt)
	if err != nil {
		return ad.Var{}, err
	}
	logSig := m.logSigVar(t, p)
	var total ad.Var
	for s := range S {
		ps := m.pass(t, p, d.X, d.N, r)
		v := t.Sub(m.logLik(t, ps.F, d.Y, logSig), ps.KL)
		if s == 0 {
			total = v
		} else {
			total = t.Add(total, v)
		}
	}
	return t.MulC(total, -1/(float64(S)*float64(d.N))), nil
}

// pass records one sample: the weights are drawn layer by layer from the inducing-point
// conditionals, the inducing inputs and the n rows of x are pushed through the same weights.
func (m *POVI) pass(t *ad.Tape, p ad.Var, x []float64, n int, r *rand.Rand) pass {
	L := m.layers()
	dx := m.dims[0]
	var ps pass
	Hu := t.AsMatrix(t.Slice(p, 0, m.offs[0]), m.cfg.M, dx)
	H := constMat(t, x, n, dx)
	for l := range L {
		g := &gip{din: m.dims[l], dout: m.dims[l+1], mode: free, alpha: m.alpha}
		W, b, kl := g.record(t, Hu, t.Slice(p, m.offs[l], m.offs[l+1]), nil, r)
		if l == 0 {
			ps.KL = kl
		} else {
			ps.KL = t.Add(ps.KL, kl)
		}
		H = t.Dense(H, W, b, act(l, L))
		if l < L-1 {
			Hu = t.Dense(Hu, W, b, ad.ReLU)
		}
	}
	ps.F = H
	return ps
}

// Predict draws S weight samples from q and pushes xTest through them; ctx is not used (it may
// be the zero Dataset). See Model.Predict.
func (m *POVI) Predict(ctx Dataset, xTest []float64, S int, r *rand.Rand) (*Prediction, error) {
	const fn = "POVI.Predict"
	if err := m.checkPredict(fn, &ctx, xTest, S, r, false); err != nil {
		return nil, err
	}
	var t ad.Tape
	p := t.ConstRef(m.params)
	nt := len(xTest) / m.dims[0]
	return m.predict(nt, S, func() []float64 {
		mk := t.Mark()
		ps := m.pass(&t, p, xTest, nt, r)
		f := append([]float64(nil), t.Value(ps.F)...)
		t.Rewind(mk)
		return f
	}), nil
}
