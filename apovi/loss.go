package apovi

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
)

// pass is one Monte Carlo sample of the network: the outputs at the inputs q was built from (F,
// n×DY), at the extra inputs (Ft, if any), the KL summed over layers and units, and the layer
// inputs (for NPVI's KL between two posteriors).
type pass struct {
	F, Ft, KL ad.Var
	hasFt     bool
	H, raw    []ad.Var
}

// logLik records Σ log p(y | F) for the output node F (n×DY) as one fused node; logSig is the
// Gaussian log σ (a constant or a slice of the parameters).
func (n *net) logLik(t *ad.Tape, F ad.Var, y []float64, logSig ad.Var) ad.Var {
	fb := t.Fused()
	fv := t.Value(F)
	dF := fb.Partial(F)
	lp := 0.0
	switch n.lik.Kind {
	case Gaussian:
		dls := fb.Partial(logSig)
		ls := t.Value(logSig)[0]
		inv := math.Exp(-2 * ls)
		sq := 0.0
		for i, f := range fv {
			r := y[i] - f
			sq += r * r
			dF[i] = r * inv
		}
		m := float64(len(fv))
		lp = -m*(0.5*math.Log(2*math.Pi)+ls) - 0.5*sq*inv
		if dls != nil {
			dls[0] = -m + sq*inv
		}
	case Bernoulli:
		for i, f := range fv {
			// log σ(f) if y = 1, log σ(−f) = log σ(f) − f if y = 0.
			sp := math.Max(f, 0) + math.Log1p(math.Exp(-math.Abs(f))) // softplus(f)
			lp += y[i]*f - sp
			dF[i] = y[i] - 1/(1+math.Exp(-f))
		}
	}
	return fb.Done(lp)
}

// logSigVar returns log σ as a Var: a slice of p when the noise is trained, else a constant.
func (n *net) logSigVar(t *ad.Tape, p ad.Var) ad.Var {
	if n.logNoise >= 0 {
		return t.Slice(p, n.logNoise, n.logNoise+1)
	}
	if n.lik.Kind == Gaussian {
		return t.Const(math.Log(n.lik.NoiseStd))
	}
	return t.Const(0)
}

func act(l, L int) ad.Activation {
	if l < L-1 {
		return ad.ReLU
	}
	return ad.Linear
}

func constMat(t *ad.Tape, x []float64, rows, cols int) ad.Var {
	return t.AsMatrix(t.ConstRef(x), rows, cols)
}

// xyMat is the inference networks' input [x_n, y_n] (n × (DX+DY)).
func xyMat(d Dataset) ad.Mat {
	m := ad.Mat{Rows: d.N, Cols: d.DX + d.DY, Data: make([]float64, d.N*(d.DX+d.DY))}
	for i := range d.N {
		row := m.Data[i*m.Cols : (i+1)*m.Cols]
		copy(row, d.X[i*d.DX:(i+1)*d.DX])
		copy(row[d.DX:], d.Y[i*d.DY:(i+1)*d.DY])
	}
	return m
}

// checkCall validates the arguments shared by every Loss.
func (n *net) checkCall(fn string, t *ad.Tape, p ad.Var, S int, r *rand.Rand) error {
	switch {
	case t == nil:
		return fmt.Errorf("apovi: %s: nil tape", fn)
	case t.Size(p) != len(n.params):
		return fmt.Errorf("apovi: %s: parameter Var has size %d, the model has %d parameters", fn, t.Size(p), len(n.params))
	case S < 1:
		return fmt.Errorf("apovi: %s: S=%d Monte Carlo samples, want ≥ 1", fn, S)
	case r == nil:
		return fmt.Errorf("apovi: %s: nil random source", fn)
	}
	return nil
}

// lossData validates and combines the datasets of a Loss call: for ELBO q and the likelihood
// use D = ctx ∪ tgt; for NPML and NPVI both are needed.
func (n *net) lossData(fn string, obj Objective, ctx, tgt Dataset) (Dataset, error) {
	dx, dy := n.Dims()
	switch obj {
	case ELBO:
		if ctx.N == 0 && tgt.N == 0 {
			return Dataset{}, fmt.Errorf("apovi: %s: ELBO needs data: ctx.N=0 and tgt.N=0", fn)
		}
		for _, c := range []struct {
			name string
			d    Dataset
		}{{"ctx", ctx}, {"tgt", tgt}} {
			if c.d.N == 0 && len(c.d.X) == 0 && len(c.d.Y) == 0 {
				continue
			}
			if err := checkData(fn, c.name, c.d, dx, dy); err != nil {
				return Dataset{}, err
			}
		}
		return concat(ctx, tgt), nil
	case NPML, NPVI:
		if err := checkData(fn, "ctx", ctx, dx, dy); err != nil {
			return Dataset{}, err
		}
		if err := checkData(fn, "tgt", tgt, dx, dy); err != nil {
			return Dataset{}, err
		}
		return ctx, nil
	}
	return Dataset{}, fmt.Errorf("apovi: %s: unknown objective %v", fn, obj)
}

// amortisedLoss is the Loss of APOVI and AMFVI given a function that records one pass.
func (n *net) amortisedLoss(t *ad.Tape, p ad.Var, obj Objective, ctx, tgt Dataset, S int, r *rand.Rand,
	infer func(q Dataset) []ad.Var, run func(q Dataset, O []ad.Var, xt []float64, nt int, keep bool) pass,
	klq func(a, b pass, qa, qb Dataset) ad.Var) ad.Var {
	logSig := n.logSigVar(t, p)
	var total ad.Var
	add := func(v ad.Var) {
		if total == (ad.Var{}) {
			total = v
		} else {
			total = t.Add(total, v)
		}
	}
	var norm float64
	switch obj {
	case ELBO:
		d := concat(ctx, tgt)
		O := infer(d)
		for range S {
			ps := run(d, O, nil, 0, false)
			add(t.Sub(n.logLik(t, ps.F, d.Y, logSig), ps.KL))
		}
		norm = float64(d.N)
	case NPML:
		O := infer(ctx)
		for range S {
			ps := run(ctx, O, tgt.X, tgt.N, false)
			add(n.logLik(t, ps.Ft, tgt.Y, logSig))
		}
		norm = float64(tgt.N)
	case NPVI:
		d := concat(ctx, tgt)
		Od, Oc := infer(d), infer(ctx)
		_, dy := n.Dims()
		for range S {
			pd := run(d, Od, nil, 0, true)
			pc := run(ctx, Oc, nil, 0, true)
			ft := t.Slice(pd.F, ctx.N*dy, d.N*dy)
			add(t.Sub(n.logLik(t, ft, tgt.Y, logSig), klq(pd, pc, d, ctx)))
		}
		norm = float64(tgt.N)
	}
	return t.MulC(total, -1/(float64(S)*norm))
}

// Loss records the per-dataset loss of obj; see Model.Loss. The inference networks run once on
// the context (and once on C∪T for ELBO/NPVI) and are shared by the S samples.
func (m *APOVI) Loss(t *ad.Tape, p ad.Var, obj Objective, ctx, tgt Dataset, S int, r *rand.Rand) (ad.Var, error) {
	const fn = "APOVI.Loss"
	if err := m.checkCall(fn, t, p, S, r); err != nil {
		return ad.Var{}, err
	}
	if _, err := m.lossData(fn, obj, ctx, tgt); err != nil {
		return ad.Var{}, err
	}
	logSig := m.logSigVar(t, p)
	infer := func(q Dataset) []ad.Var { return m.infer(t, p, q) }
	run := func(q Dataset, O []ad.Var, xt []float64, nt int, keep bool) pass {
		return m.pass(t, q, O, logSig, xt, nt, r, keep)
	}
	klq := func(a, b pass, qa, qb Dataset) ad.Var { return m.klq(t, a, b, qa, qb) }
	return m.amortisedLoss(t, p, obj, ctx, tgt, S, r, infer, run, klq), nil
}

// infer records every amortised layer's inference network on q's [x, y].
func (m *APOVI) infer(t *ad.Tape, p ad.Var, q Dataset) []ad.Var {
	xy := xyMat(q)
	O := make([]ad.Var, len(m.nets))
	for l, nt := range m.nets {
		O[l] = nt.ForwardC(t, t.Slice(p, m.offs[l], m.offs[l+1]), xy)
	}
	return O
}

// gips returns the layer node of layer l.
func (m *APOVI) gip(l int) *gip {
	mode := amortised
	if l >= len(m.nets) {
		mode = exact
	}
	return &gip{din: m.dims[l], dout: m.dims[l+1], mode: mode, alpha: m.alpha}
}

// pass records one sample: q(W) from q's data, outputs at q's inputs and at xt (nt rows).
func (m *APOVI) pass(t *ad.Tape, q Dataset, O []ad.Var, logSig ad.Var, xt []float64, nt int, r *rand.Rand, keep bool) pass {
	L := m.layers()
	var ps pass
	H := constMat(t, q.X, q.N, q.DX)
	var Ht ad.Var
	if nt > 0 {
		Ht, ps.hasFt = constMat(t, xt, nt, q.DX), true
	}
	for l := range L {
		g := m.gip(l)
		raw := logSig
		if g.mode == amortised {
			raw = O[l]
		}
		if keep {
			ps.H, ps.raw = append(ps.H, H), append(ps.raw, raw)
		}
		W, b, kl := g.record(t, H, raw, q.Y, r)
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

// klq is NPVI's Σ_ℓ KL(q_a(W^ℓ|·) ‖ q_b(W^ℓ|·)) between the layer conditionals of two passes.
func (m *APOVI) klq(t *ad.Tape, a, b pass, qa, qb Dataset) ad.Var {
	var kl ad.Var
	for l := range a.H {
		g := m.gip(l)
		k := klGip(t, g, a.H[l], a.raw[l], qa.Y, b.H[l], b.raw[l], qb.Y)
		if l == 0 {
			kl = k
		} else {
			kl = t.Add(kl, k)
		}
	}
	return kl
}

// Predict draws S posterior samples given ctx; see Model.Predict. The inference networks run
// once on the tape; the S weight samples are drawn without it (predictFast).
func (m *APOVI) Predict(ctx Dataset, xTest []float64, S int, r *rand.Rand) (*Prediction, error) {
	const fn = "APOVI.Predict"
	if err := m.checkPredict(fn, &ctx, xTest, S, r, true); err != nil {
		return nil, err
	}
	var t ad.Tape
	p := t.ConstRef(m.params)
	O := m.infer(&t, p, ctx)
	raw := make([][]float64, len(O))
	for l, o := range O {
		raw[l] = t.Value(o)
	}
	logSig := t.Float(m.logSigVar(&t, p))
	nt := len(xTest) / ctx.DX
	F := m.predictFast(ctx, raw, logSig, xTest, nt, S, r)
	s := 0
	return m.predict(nt, S, func() []float64 {
		if F == nil { // a factorisation failed, as the tape path's NaN weights
			f := make([]float64, nt*m.dims[len(m.dims)-1])
			for i := range f {
				f[i] = math.NaN()
			}
			return f
		}
		s++
		return F[s-1]
	}), nil
}

// predictTape is Predict on the tape, one pass per sample (the training path's forward): the
// reference of predictFast's tests.
func (m *APOVI) predictTape(ctx Dataset, xTest []float64, S int, r *rand.Rand) *Prediction {
	var t ad.Tape
	p := t.ConstRef(m.params)
	O := m.infer(&t, p, ctx)
	logSig := m.logSigVar(&t, p)
	nt := len(xTest) / ctx.DX
	return m.predict(nt, S, func() []float64 {
		mk := t.Mark()
		ps := m.pass(&t, ctx, O, logSig, xTest, nt, r, false)
		f := append([]float64(nil), t.Value(ps.Ft)...)
		t.Rewind(mk)
		return f
	})
}

// checkPredict validates Predict's arguments; ctx is required when needCtx.
func (n *net) checkPredict(fn string, ctx *Dataset, xTest []float64, S int, r *rand.Rand, needCtx bool) error {
	dx, dy := n.Dims()
	if needCtx {
		if err := checkData(fn, "ctx", *ctx, dx, dy); err != nil {
			return err
		}
	}
	switch {
	case len(xTest) == 0 || len(xTest)%dx != 0:
		return fmt.Errorf("apovi: %s: len(xTest)=%d must be a positive multiple of DX=%d", fn, len(xTest), dx)
	case S < 1:
		return fmt.Errorf("apovi: %s: S=%d samples, want ≥ 1", fn, S)
	case r == nil:
		return fmt.Errorf("apovi: %s: nil random source", fn)
	}
	for i, v := range xTest {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("apovi: %s: xTest[%d]=%v is not finite", fn, i, v)
		}
	}
	return nil
}

// predict collects S samples from draw and summarises them on the response scale.
func (n *net) predict(nt, S int, draw func() []float64) *Prediction {
	_, dy := n.Dims()
	pr := &Prediction{NTest: nt, DY: dy, S: S, F: make([][]float64, S),
		Mean: make([]float64, nt*dy), Std: make([]float64, nt*dy)}
	resp := make([][]float64, S)
	for s := range S {
		pr.F[s] = draw()
		resp[s] = pr.F[s]
		if n.lik.Kind == Bernoulli {
			resp[s] = make([]float64, len(pr.F[s]))
			for i, f := range pr.F[s] {
				resp[s][i] = 1 / (1 + math.Exp(-f))
			}
		}
	}
	for i := range pr.Mean {
		mu := 0.0
		for s := range S {
			mu += resp[s][i]
		}
		mu /= float64(S)
		pr.Mean[i] = mu
		if S > 1 {
			ss := 0.0
			for s := range S {
				e := resp[s][i] - mu
				ss += e * e
			}
			pr.Std[i] = math.Sqrt(ss / float64(S-1))
		}
	}
	return pr
}

var (
	_ Model = (*APOVI)(nil)
	_ Model = (*AMFVI)(nil)
	_ Model = (*POVI)(nil)
)
