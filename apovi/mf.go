package apovi

import (
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
)

// mf is the Backwarder of one amortised mean-field layer of one Monte Carlo sample
// (apovi.md §1.4). Its argument is the inference net's output O (n × 2KD); row i is
// [μ_i (D×K row-major), b_i (D×K)] with σ_i = exp((b_i − 4)/2) + 1e-8, λ_i = σ_i⁻². Per weight j
// the product of the prior N(0, σ_p²) and the n factors N(μ_ij, σ_ij²) is
//
//	Λ_j = σ_p⁻² + Σ_i λ_ij,  η_j = Σ_i λ_ij μ_ij,  m_j = η_j/Λ_j,  s_j = Λ_j^{−1/2}
//
// (the natural-parameter sum η₁ = η, η₂ = −Λ/2), w_j = m_j + s_j ε_j and
// KL_j = ½[σ_p⁻²(s_j² + m_j²) − 1 + ln σ_p² − ln s_j²]. Output as gip's: weights in nn.MLP
// layout, biases, then Σ_j KL_j. Aux: Λ, η, ε (K·D each). Cost O(nKD).
type mf struct {
	din, dout int
	alpha     float64
}

func (g *mf) record(t *ad.Tape, O ad.Var, r *rand.Rand) (W, b, kl ad.Var) {
	n, _ := t.Shape(O)
	K, D := g.din+1, g.dout
	KD := K * D
	c := t.CustomUninit(g, KD+1, 3*KD, O)
	out, aux := c.Value(), c.Aux()
	Lam, eta, eps := aux[:KD], aux[KD:2*KD], aux[2*KD:]
	mfStats(t.Value(O), n, KD, g.alpha, Lam, eta)
	kls := 0.0
	lnAlpha := math.Log(g.alpha)
	for j := range KD {
		d, k := j/K, j%K
		m := eta[j] / Lam[j]
		eps[j] = r.NormFloat64()
		out[k*D+d] = m + eps[j]/math.Sqrt(Lam[j])
		kls += 0.5 * (g.alpha*(1/Lam[j]+m*m) - 1 - lnAlpha + math.Log(Lam[j]))
	}
	out[KD] = kls
	return t.AsMatrix(t.Slice(c.Var(), 0, g.din*D), g.din, D), t.Slice(c.Var(), g.din*D, KD), t.Index(c.Var(), KD)
}

// Backward implements ad.Backwarder: with w̄_j, κ̄ the adjoints, m̄ = w̄ + κ̄σ_p⁻²m, η̄ = m̄/Λ,
// Λ̄ = −½w̄εΛ^{−3/2} + ½κ̄(1/Λ − σ_p⁻²/Λ²) − m̄η/Λ², then μ̄_ij = η̄_j λ_ij and
// λ̄_ij = Λ̄_j + η̄_j μ_ij.
func (g *mf) Backward(c ad.Custom) {
	t := c.Tape()
	O := c.Arg(0)
	og := t.Grad(O)
	if og == nil {
		return
	}
	n, _ := t.Shape(O)
	K, D := g.din+1, g.dout
	KD := K * D
	aux := c.Aux()
	Lam, eta, eps := aux[:KD], aux[KD:2*KD], aux[2*KD:]
	gout := c.Grad()
	gkl := gout[KD]
	sc := t.Scratch(2 * KD)
	etab, lamb := sc[:KD], sc[KD:]
	for j := range KD {
		d, k := j/K, j%K
		wb := gout[k*D+d]
		L := Lam[j]
		m := eta[j] / L
		mb := wb + gkl*g.alpha*m
		etab[j] = mb / L
		lamb[j] = -0.5*wb*eps[j]/(L*math.Sqrt(L)) + 0.5*gkl*(1/L-g.alpha/(L*L)) - mb*eta[j]/(L*L)
	}
	mfBack(t.Value(O), og, n, KD, etab, lamb)
}

// mfStats accumulates Λ_j = σ_p⁻² + Σ_i λ_ij and η_j = Σ_i λ_ij μ_ij from O (n × 2KD).
func mfStats(ov []float64, n, KD int, alpha float64, Lam, eta []float64) {
	for j := range Lam {
		Lam[j], eta[j] = alpha, 0
	}
	for i := range n {
		row := ov[i*2*KD : (i+1)*2*KD]
		for j := range KD {
			l, _ := normalPrec(row[KD+j])
			Lam[j] += l
			eta[j] += l * row[j]
		}
	}
}

// mfBack adds to og (n × 2KD) the adjoint of O given η̄ and Λ̄ per weight.
func mfBack(ov, og []float64, n, KD int, etab, lamb []float64) {
	for i := range n {
		row := ov[i*2*KD : (i+1)*2*KD]
		gr := og[i*2*KD : (i+1)*2*KD]
		for j := range KD {
			l, dl := normalPrec(row[KD+j])
			gr[j] += etab[j] * l
			gr[KD+j] += (lamb[j] + etab[j]*row[j]) * dl
		}
	}
}

// mfKL is the Backwarder of NPVI's KL between two mean-field posteriors of the same layer
// (args O_a, O_b): Σ_j ½[Λ_b/Λ_a + Λ_b(m_a − m_b)² − 1 + ln Λ_a − ln Λ_b]. Aux: Λ_a, η_a, Λ_b, η_b.
type mfKL struct {
	din, dout int
	alpha     float64
}

func (g *mfKL) record(t *ad.Tape, Oa, Ob ad.Var) ad.Var {
	na, _ := t.Shape(Oa)
	nb, _ := t.Shape(Ob)
	KD := (g.din + 1) * g.dout
	c := t.Custom(g, 1, 4*KD, Oa, Ob)
	aux := c.Aux()
	La, ea, Lb, eb := aux[:KD], aux[KD:2*KD], aux[2*KD:3*KD], aux[3*KD:]
	mfStats(t.Value(Oa), na, KD, g.alpha, La, ea)
	mfStats(t.Value(Ob), nb, KD, g.alpha, Lb, eb)
	kl := 0.0
	for j := range KD {
		dm := ea[j]/La[j] - eb[j]/Lb[j]
		kl += 0.5 * (Lb[j]/La[j] + Lb[j]*dm*dm - 1 + math.Log(La[j]) - math.Log(Lb[j]))
	}
	c.Value()[0] = kl
	return c.Var()
}

// Backward implements ad.Backwarder.
func (g *mfKL) Backward(c ad.Custom) {
	t := c.Tape()
	Oa, Ob := c.Arg(0), c.Arg(1)
	na, _ := t.Shape(Oa)
	nb, _ := t.Shape(Ob)
	KD := (g.din + 1) * g.dout
	aux := c.Aux()
	La, ea, Lb, eb := aux[:KD], aux[KD:2*KD], aux[2*KD:3*KD], aux[3*KD:]
	gk := c.Grad()[0]
	sc := t.Scratch(4 * KD)
	eta, lba, etb, lbb := sc[:KD], sc[KD:2*KD], sc[2*KD:3*KD], sc[3*KD:]
	for j := range KD {
		ma, mb := ea[j]/La[j], eb[j]/Lb[j]
		dm := ma - mb
		mab := gk * Lb[j] * dm
		eta[j] = mab / La[j]
		lba[j] = gk*0.5*(1/La[j]-Lb[j]/(La[j]*La[j])) - mab*ea[j]/(La[j]*La[j])
		mbb := -mab
		etb[j] = mbb / Lb[j]
		lbb[j] = gk*0.5*(1/La[j]+dm*dm-1/Lb[j]) - mbb*eb[j]/(Lb[j]*Lb[j])
	}
	if og := t.Grad(Oa); og != nil {
		mfBack(t.Value(Oa), og, na, KD, eta, lba)
	}
	if og := t.Grad(Ob); og != nil {
		mfBack(t.Value(Ob), og, nb, KD, etb, lbb)
	}
}
