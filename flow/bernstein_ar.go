package flow

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/nn"
)

// BernsteinAR is the multivariate Bernstein flow of BF-VI (Dürr et al. 2024, §2.2, eq. 2): a
// triangular map whose coordinate j is a one-dimensional Bernstein flow (see Bernstein) with
// polynomial coefficients produced by a MADE conditioner from the earlier base coordinates,
//
//	z_j = h(σ(α_j·u_j + β_j); ϑ^j(u_<j)),   ϑ^j_0 = c_{0,j}(u_<j),
//	ϑ^j_k = ϑ^j_{k−1} + softplus(c_{k,j}(u_<j)),   c = MADE(u)
//
// (LinearTails: the sigmoid is dropped and h continued linearly, as for Bernstein). The
// Jacobian ∂z/∂u is lower triangular in the MADE's ordering, so
//
//	log|det ∂z/∂u| = Σ_j [log h_j′(x_j) + log σ′(v_j) + log α_j],
//
// the diagonal terms only, one fused node. Coordinate 1's coefficients are the MADE's output
// biases (its outputs see no input), the free ϑ^1 of the paper.
//
// Choices, against the paper's reference code (papers.md §1.1): the conditioner reads the base
// noise u (the code's z′), as the code does; α_j = softplus(a′_j) and β_j are free parameters
// per coordinate and trained (the multivariate code leaves them at α = softplus(0), β = 0,
// untrained; BernsteinFrozenAffine reproduces that); the paper's "2 hidden × 10, no
// activation" conditioner is
// nn.NewMADE(d, []int{10, 10}, M+1, nn.WithActivation(ad.Linear)), and its "M = 50" is 50
// coefficients, degree 49.
//
// Parameters: the MADE's (K = M+1 outputs per coordinate, parameter-major: output
// c[k·d + j] is raw coefficient k of coordinate j), then (a′_j, β_j) for j = 1..d (absent with
// BernsteinFrozenAffine).
// Cost of Forward: the MADE's hidden layers as tape nodes, then one ad.Custom node for its
// output layer (read from a copy of the unmasked output weights packed once per parameter
// value, nn.MADE.PackOutput), the d·M softplus increments, the d polynomials and the
// log-determinant (bernstein_fused.go): O(MADE + d·M), with d·M softplus evaluations (one
// kernel.Softplus pass) and four coordinates' polynomials per kernel.BernsteinElev4 call.
// For M = 50, d = 10 the MADE's output layer (≈ 2.8·10³ multiply-adds forward, twice that
// backward) now costs more than the softplus pass and the polynomials together
// (bench/results/bfvi_speed.md).
// Inverse is sequential: d MADE passes and d 1-D root searches.
type BernsteinAR struct {
	made  *nn.MADE
	d     int
	p     bernPoly
	nm    int
	fixed []float64 // BernsteinFrozenAffine: the constant pairs (a′, β) = (0, 0); nil otherwise
	// grp describes the batch node's packed output layer, one entry per group of four
	// coordinates (bernstein_batch.go).
	grp []bernGroup
}

// NewBernsteinAR returns the triangular Bernstein flow whose coefficients come from cond; the
// degree is M = cond.K() − 1 (so K ≥ 2).
func NewBernsteinAR(cond *nn.MADE, opts ...BernsteinOption) *BernsteinAR {
	if cond.K() < 2 {
		panic(fmt.Sprintf("flow: NewBernsteinAR: conditioner has %d outputs per dimension, want M+1 ≥ 2", cond.K()))
	}
	c := newBernsteinConfig(opts)
	b := &BernsteinAR{made: cond, d: cond.Dim(), p: newBernPoly(cond.K()-1, c.tails), nm: cond.NumParams()}
	if c.frozen {
		b.fixed = make([]float64, 2*b.d)
	}
	b.grp = newBernGroups(cond, b.p.m+1)
	return b
}

// Conditioner returns the MADE.
func (b *BernsteinAR) Conditioner() *nn.MADE { return b.made }

// Dim returns d.
func (b *BernsteinAR) Dim() int { return b.d }

// Degree returns M.
func (b *BernsteinAR) Degree() int { return b.p.m }

// Tails returns the behaviour beyond the unit interval.
func (b *BernsteinAR) Tails() Tails { return b.p.tails }

// FrozenAffine reports whether the input affine maps are fixed (BernsteinFrozenAffine).
func (b *BernsteinAR) FrozenAffine() bool { return b.fixed != nil }

// Spec returns the flow's spec (type bernstein_ar).
func (b *BernsteinAR) Spec() Spec {
	return Spec{Type: SpecBernsteinAR, Dim: b.d, MADE: madeSpec(b.made), Degree: b.p.m, Tails: b.p.tails.String(), FrozenAffine: b.FrozenAffine()}
}

// NumParams returns the MADE's parameter count plus 2d (plus 0 with BernsteinFrozenAffine).
func (b *BernsteinAR) NumParams() int {
	if b.fixed != nil {
		return b.nm
	}
	return b.nm + 2*b.d
}

// affine returns the (a′_j, β_j) pairs: from params, or the frozen constants.
func (b *BernsteinAR) affine(params []float64) []float64 {
	if b.fixed != nil {
		return b.fixed
	}
	return params[b.nm:]
}

// Init initialises the MADE (Glorot weights from rnd, or a fixed stream when nil), zeroes its
// output weights and sets its output biases and the affine pairs to the coordinatewise
// (near-)identity of Bernstein.Init: the flow starts as the elementwise map, and the
// conditioner's hidden units are ready to learn the dependence.
func (b *BernsteinAR) Init(params []float64, rnd *rand.Rand) {
	checkLen("BernsteinAR.Init", "params", len(params), b.NumParams())
	mp := params[:b.nm]
	b.made.Init(mp, defaultRand(rnd))
	W, bias := b.made.Layer(mp, b.made.Layers()-1)
	clear(W)
	var buf [smallVars]float64
	row := buf[:]
	if b.p.m+3 > len(row) {
		row = make([]float64, b.p.m+3)
	}
	if b.fixed != nil {
		b.p.coefIdentity(row, math.Log(2), 0)
	} else {
		b.p.identity(row)
	}
	for j := range b.d {
		for k := 0; k <= b.p.m; k++ {
			bias[k*b.d+j] = row[k]
		}
		if b.fixed == nil {
			params[b.nm+2*j], params[b.nm+2*j+1] = row[b.p.m+1], row[b.p.m+2]
		}
	}
}

// coefs records the conditioner at x and returns the d×(M+1) coefficient matrix (row j =
// coordinate j's raw coefficients) and the layer description.
func (b *BernsteinAR) coefs(t *ad.Tape, params, x ad.Var) bernLayer {
	P := b.p.m + 1
	out := b.made.Forward(t, t.Slice(params, 0, b.nm), x)
	C := t.Transpose(t.AsMatrix(out, P, b.d))
	aff := t.ConstRef(b.fixed)
	if b.fixed == nil {
		aff = t.Slice(params, b.nm, b.nm+2*b.d)
	}
	return bernLayer{coef: C, coefStride: P, aff: aff, affStride: 2}
}

// Forward records z = T(u) and log|det ∂z/∂u|.
func (b *BernsteinAR) Forward(t *ad.Tape, params, u ad.Var) (z, logdet ad.Var) {
	checkLen("BernsteinAR.Forward", "params", t.Size(params), b.NumParams())
	checkLen("BernsteinAR.Forward", "u", t.Size(u), b.d)
	return b.forwardNode(t, params, u)
}

// Inverse writes u = T⁻¹(z) coordinate by coordinate in the autoregressive order (one MADE
// pass and one 1-D root search per coordinate) and returns the forward log-determinant at u.
// It fails with ErrOutsideSupport when a coordinate is outside its support (BoundedTails).
// u may alias z. No allocation in steady state.
func (b *BernsteinAR) Inverse(params, z, u []float64) (float64, error) {
	checkLen("BernsteinAR.Inverse", "params", len(params), b.NumParams())
	checkLen("BernsteinAR.Inverse", "z", len(z), b.d)
	checkLen("BernsteinAR.Inverse", "u", len(u), b.d)
	t := GetTape()
	defer PutTape(t)
	d, P := b.d, b.p.m+1
	ws := t.Scratch(b.p.work())
	row := t.Scratch(P)
	x := t.Scratch(d) // u so far, zeros beyond: the outputs of coordinate j do not read them
	mp := t.ConstRef(params[:b.nm])
	xv := t.ConstRef(x)
	order := b.made.Degrees()
	aff := b.affine(params)
	sum := 0.0
	for pos := 1; pos <= d; pos++ {
		j := indexOf(order, pos)
		m := t.Mark()
		c := t.Value(b.made.Forward(t, mp, xv))
		for k := range P {
			row[k] = c[k*d+j]
		}
		t.Rewind(m)
		uj, ld, err := b.p.invert(ws, row, aff[2*j], aff[2*j+1], z[j])
		if err != nil {
			return math.NaN(), fmt.Errorf("%w (coordinate %d, z=%g)", err, j, z[j])
		}
		x[j] = uj
		sum += ld
	}
	copy(u, x)
	return sum, nil
}

func indexOf(s []int, v int) int {
	for i, x := range s {
		if x == v {
			return i
		}
	}
	panic(fmt.Sprintf("flow: degree %d not in the MADE ordering", v))
}

// InverseTape records u = T⁻¹(z) and the forward log-determinant at u, differentiable in z
// and the parameters. The exact u is found in float64 first (Inverse); then d passes of the
// fixed-point map x ↦ F(x) = (elementwise Bernstein inverse of z with coefficients MADE(x))
// are recorded starting from that constant. Every pass has the same value, and since ∂F/∂x is
// strictly lower triangular (nilpotent), the d-th pass carries the exact implicit derivatives
// (I − ∂F/∂x)⁻¹∂F/∂(z, φ). Cost: Inverse, then d MADE passes and d² polynomial evaluations
// (each pass starts at the known solution). A point outside the support gives NaN values.
func (b *BernsteinAR) InverseTape(t *ad.Tape, params, z ad.Var) (u, logdet ad.Var) {
	checkLen("BernsteinAR.InverseTape", "params", t.Size(params), b.NumParams())
	checkLen("BernsteinAR.InverseTape", "z", t.Size(z), b.d)
	x0 := t.Scratch(b.d)
	if _, err := b.Inverse(t.Value(params), t.Value(z), x0); err != nil {
		for i := range x0 {
			x0[i] = math.NaN()
		}
	}
	x := t.ConstRef(x0)
	for pass := 1; pass <= b.d; pass++ {
		x, logdet = b.p.recordInverse(t, b.d, b.coefs(t, params, x), z, pass == b.d, x0)
	}
	return x, logdet
}

var _ Flow = (*BernsteinAR)(nil)
