package apovi

import (
	"github.com/vigo-bayes/vigo/internal/kernel"
	"math"

	"github.com/vigo-bayes/vigo/ad"
)

// klNode is the Backwarder of NPVI's KL between the layer conditionals of two passes a and b of
// the same layer, summed over units (apovi.md §2):
//
//	KL(N(μ_a, P_a⁻¹) ‖ N(μ_b, P_b⁻¹)) = ½[tr(P_b Σ_a) + δᵀP_bδ − K + ln det P_a − ln det P_b],
//
// δ = μ_a − μ_b. Backward: P̄_b = ½(Σ_a + δδᵀ − Σ_b) + sym(δμ_bᵀ), b̄_b = −δ,
// P̄_a = ½(Σ_a − Σ_aP_bΣ_a) − sym(b̄_aμ_aᵀ), b̄_a = Σ_aP_bδ, then each through its Gram
// (gip.gramBack). Args: H_a, raw_a, H_b, raw_b. Aux per unit: P_b, Σ_a, Σ_b (K×K), μ_a, μ_b; then
// λ, v, dλ of a and of b.
type klNode struct{ g *gip }

func klAux(K, D, na, nb int) int { return D*(3*K*K+2*K) + 3*(na+nb)*D }

type klViews struct {
	pb, sa, sb, ma, mb         []float64
	lamA, vA, dA, lamB, vB, dB []float64
}

func (k *klNode) views(aux []float64, na, nb int) klViews {
	K, D := k.g.din+1, k.g.dout
	o := 0
	next := func(m int) []float64 { s := aux[o : o+m]; o += m; return s }
	var v klViews
	v.pb, v.sa, v.sb, v.ma, v.mb = next(D*K*K), next(D*K*K), next(D*K*K), next(D*K), next(D*K)
	v.lamA, v.vA, v.dA = next(na*D), next(na*D), next(na*D)
	v.lamB, v.vB, v.dB = next(nb*D), next(nb*D), next(nb*D)
	return v
}

// klGip records Σ_d KL(q_a(w_d) ‖ q_b(w_d)) for layer g given the two passes' layer inputs;
// ya, yb are the exact layer's targets.
func klGip(t *ad.Tape, g *gip, Ha, rawA ad.Var, ya []float64, Hb, rawB ad.Var, yb []float64) ad.Var {
	na, _ := t.Shape(Ha)
	nb, _ := t.Shape(Hb)
	K, D := g.din+1, g.dout
	kn := &klNode{g: g}
	c := t.Custom(kn, 1, klAux(K, D, na, nb), Ha, rawA, Hb, rawB)
	v := kn.views(c.Aux(), na, nb)
	pseudo(g.mode, na, D, t.Value(rawA), ya, v.lamA, v.vA, v.dA)
	pseudo(g.mode, nb, D, t.Value(rawB), yb, v.lamB, v.vB, v.dB)
	n := max(na, nb)
	sc := t.Scratch(n*K + 2*K + K*K)
	Y, bv, tmp, R := sc[:n*K], sc[n*K:n*K+K], sc[n*K+K:n*K+2*K], sc[n*K+2*K:]
	ha, hb := t.Value(Ha), t.Value(Hb)
	kl := 0.0
	for d := range D {
		sa, sb := v.sa[d*K*K:(d+1)*K*K], v.sb[d*K*K:(d+1)*K*K]
		pb := v.pb[d*K*K : (d+1)*K*K]
		ma, mb := v.ma[d*K:(d+1)*K], v.mb[d*K:(d+1)*K]
		lda, ok := g.post(na, ha, v.lamA[d*na:(d+1)*na], v.vA[d*na:(d+1)*na], Y, bv, tmp, R, ma, nil)
		if !ok {
			c.Value()[0] = math.NaN()
			return c.Var()
		}
		gramT(K, K, R, sa)
		symmetrize(K, sa)
		ldb, ok := g.post(nb, hb, v.lamB[d*nb:(d+1)*nb], v.vB[d*nb:(d+1)*nb], Y, bv, tmp, R, mb, pb)
		if !ok {
			c.Value()[0] = math.NaN()
			return c.Var()
		}
		gramT(K, K, R, sb)
		symmetrize(K, sb)
		tr, q := 0.0, 0.0
		for i := range K {
			for j := range K {
				tr += pb[i*K+j] * sa[i*K+j]
				q += (ma[i] - mb[i]) * pb[i*K+j] * (ma[j] - mb[j])
			}
		}
		kl += 0.5 * (tr + q - float64(K) + 2*lda - 2*ldb)
	}
	c.Value()[0] = kl
	return c.Var()
}

// Backward implements ad.Backwarder.
func (k *klNode) Backward(c ad.Custom) {
	t := c.Tape()
	g := k.g
	Ha, rawA, Hb, rawB := c.Arg(0), c.Arg(1), c.Arg(2), c.Arg(3)
	hga, rga, hgb, rgb := t.Grad(Ha), t.Grad(rawA), t.Grad(Hb), t.Grad(rawB)
	na, _ := t.Shape(Ha)
	nb, _ := t.Shape(Hb)
	K, D := g.din+1, g.dout
	v := k.views(c.Aux(), na, nb)
	gk := c.Grad()[0]
	if gk == 0 {
		return
	}
	n := max(na, nb)
	sc := t.Scratch(2*n*K + 2*n*K + 3*K*K + 4*K + n)
	o := 0
	next := func(m int) []float64 { s := sc[o : o+m]; o += m; return s }
	Ua, Ub, T := next(na*K), next(nb*K), next(n*K)
	Ga, Gb, X := next(K*K), next(K*K), next(K*K)
	delta, pd, ba, bb := next(K), next(K), next(K), next(K)
	ub := next(n)
	g.fillU(na, t.Value(Ha), Ua)
	g.fillU(nb, t.Value(Hb), Ub)
	for d := range D {
		sa, sb := v.sa[d*K*K:(d+1)*K*K], v.sb[d*K*K:(d+1)*K*K]
		pb := v.pb[d*K*K : (d+1)*K*K]
		ma, mb := v.ma[d*K:(d+1)*K], v.mb[d*K:(d+1)*K]
		for i := range K {
			delta[i] = ma[i] - mb[i]
		}
		for i := range K { // pd = P_b δ
			s := 0.0
			for j := range K {
				s += pb[i*K+j] * delta[j]
			}
			pd[i] = s
		}
		for i := range K { // b̄_a = Σ_a P_b δ, b̄_b = −δ
			s := 0.0
			for j := range K {
				s += sa[i*K+j] * pd[j]
			}
			ba[i] = gk * s
			bb[i] = -gk * delta[i]
		}
		kernel.Gemm(false, false, K, K, K, sa, pb, 0, X)
		kernel.Gemm(false, false, K, K, K, X, sa, 0, Ga) // Σ_a P_b Σ_a
		for i := range K {
			for j := range K {
				ij := i*K + j
				Ga[ij] = gk*0.5*(sa[ij]-Ga[ij]) - 0.5*(ba[i]*ma[j]+ma[i]*ba[j])
				Gb[ij] = gk*0.5*(sa[ij]+delta[i]*delta[j]-sb[ij]) + 0.5*gk*(delta[i]*mb[j]+mb[i]*delta[j])
			}
		}
		if hga != nil || rga != nil {
			g.gramBack(na, Ua, T[:na*K], Ga, ba, ub[:na], v.lamA[d*na:(d+1)*na], v.vA[d*na:(d+1)*na], v.dA[d*na:(d+1)*na], hga, rga, d)
		}
		if hgb != nil || rgb != nil {
			g.gramBack(nb, Ub, T[:nb*K], Gb, bb, ub[:nb], v.lamB[d*nb:(d+1)*nb], v.vB[d*nb:(d+1)*nb], v.dB[d*nb:(d+1)*nb], hgb, rgb, d)
		}
	}
}
