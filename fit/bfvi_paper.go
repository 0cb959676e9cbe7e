package fit

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/flow"
)

// The BF-VI reference code's multivariate settings (Dürr, Hörling, Dold, Kovylov & Sick 2024,
// AStA Adv. Stat. Anal. 108:375–394; github.com/tensorchiefs/bfvi_paper, README and
// R/multidimensional_script.R; shared/docs/papers.md §1.1).
const (
	// PaperDegree is the Bernstein degree of the paper's "M = 50": 50 coefficients.
	PaperDegree = 49
	// PaperSamples is the paper's T: draws per gradient step.
	PaperSamples = 10
	// PaperSteps is the paper's training length (its "epochs", full batch).
	PaperSteps = 100000
	// PaperLR is Keras RMSprop's default step size, which the paper uses.
	PaperLR = 1e-3
	// PaperDraws is the number of draws the paper's stored eight-schools NCP runs hold for
	// PSIS k̂ (its CP runs: 5,000).
	PaperDraws = 50000
	// paperCoefMin and paperCoefMax are the reference code's w_min and w_max (all experiments
	// but melanoma).
	paperCoefMin, paperCoefMax = -10.0, 10.0
)

// BFVIPaperRecipe returns the BF-VI paper's recipe for its multivariate experiments, as its
// reference code runs them:
//
//   - family: one triangular Bernstein layer (bernstein) of degree PaperDegree (50
//     coefficients) with the bounded map (sigmoid before the polynomial), its input affine
//     map frozen at α = softplus(0), β = 0, a MADE with 2 hidden layers of 10 linear units
//     (TFP's default: no activation) and no direct connections, and the paper's coefficient
//     initialisation (CoefInitPaper);
//   - objective: the plain ELBO with PaperSamples draws per step;
//   - optimiser: RMSprop (Keras: ρ 0.9, ε 1e-7) at PaperLR;
//   - PaperSteps steps: the plateau rule's window (stop.window) is longer than the run, so
//     the step size is never cut and the fit runs all steps;
//   - cold start: no warm start and no Laplace preconditioning (init.method zero, init.scale
//     1), so q starts where the coefficients put it;
//   - PaperDraws diagnostic draws.
//
// family.Flow's elementwise output layer is fixed at the identity (FlowOptions.FixedOutput),
// as the reference code's flow has none. One thing differs from the code: the result is the
// best of the last iterate and the best tracked iterate by the common-random-number ELBO
// (256 draws every 1,000 steps), where the code keeps the last. Cost: PaperSteps × PaperSamples draws of the flow and the target, plus
// PaperDraws for the diagnostics.
func BFVIPaperRecipe() Recipe {
	r := DefaultRecipe(KindBernstein)
	r.Family.Flow = &FlowOptions{Degree: PaperDegree, Hidden: []int{10, 10}, Activation: "linear", Bounded: true,
		FrozenAffine: true, NoDirect: true, CoefInit: CoefInitPaper, FixedOutput: true}
	r.Objective = ObjectiveRecipe{Estimator: EstELBO, Samples: PaperSamples, K: 1}
	r.Optimizer = OptimizerRecipe{Name: OptRMSprop, LR: PaperLR}
	r.MaxIter = PaperSteps
	r.Stop.Rule, r.Stop.EvalEvery, r.Stop.Average = RuleHalves, 1000, 0
	r.Stop.Window = r.MaxIter/r.Stop.EvalEvery + 1 // never full: no cut, no stop
	r.WarmStart = WarmNone
	r.Init = InitRecipe{Method: InitMethodZero, Scale: 1, Iter: r.Init.Iter, Starts: 1}
	r.DiagDraws = PaperDraws
	return r
}

// checkPaperOptions checks the flow options of the BF-VI paper's structure: FrozenAffine,
// NoDirect and CoefInit are for bernstein only, and CoefInitPaper needs the bounded map, one
// Bernstein layer and no affine layer (the reference code's flow). field is the JSON field
// at fault under family.flow.
func checkPaperOptions(kind string, o FlowOptions) (field string, err error) {
	switch {
	case o.FrozenAffine && kind != KindBernstein:
		return "frozen_affine", fmt.Errorf("fit: NewFlowFamily: a frozen input affine map (frozen_affine) is for %s only (kind=%s)", KindBernstein, kind)
	case o.NoDirect && kind != KindBernstein:
		return "no_direct", fmt.Errorf("fit: NewFlowFamily: no_direct is for %s only (kind=%s)", KindBernstein, kind)
	case o.CoefInit != "" && o.CoefInit != CoefInitIdentity && o.CoefInit != CoefInitPaper:
		return "coef_init", fmt.Errorf("fit: NewFlowFamily: coef_init %q, want %s or %s", o.CoefInit, CoefInitIdentity, CoefInitPaper)
	case o.CoefInit != "" && kind != KindBernstein:
		return "coef_init", fmt.Errorf("fit: NewFlowFamily: coef_init is for %s only (kind=%s)", KindBernstein, kind)
	case o.CoefInit == CoefInitPaper && !o.Bounded:
		return "coef_init", fmt.Errorf("fit: NewFlowFamily: coef_init %s needs the bounded map (bounded=true): the paper's coefficients are for σ(u) ∈ (0, 1)", CoefInitPaper)
	case o.CoefInit == CoefInitPaper && o.Layers > 1:
		return "coef_init", fmt.Errorf("fit: NewFlowFamily: coef_init %s is for one Bernstein layer (layers=%d)", CoefInitPaper, o.Layers)
	case o.CoefInit == CoefInitPaper && o.Affine != "" && o.Affine != AffineNone:
		return "coef_init", fmt.Errorf("fit: NewFlowFamily: coef_init %s is for the paper's flow, without an affine layer (affine=%s)", CoefInitPaper, o.Affine)
	}
	return "", nil
}

// validatePaper checks the recipe-level conditions of family.flow.coef_init = paper: the
// coefficients place q themselves, so nothing may move or rescale it before the fit (a warm
// start or a Laplace start would whiten the flow's coordinates, init.scale ≠ 1 would rescale
// its output layer).
func (r *Recipe) validatePaper() error {
	f := r.Family.Flow
	if f == nil {
		return nil
	}
	if field, err := checkPaperOptions(r.Family.Kind, *f); err != nil {
		return &FieldError{Field: "family.flow." + field, Err: fmt.Errorf("fit: Recipe: family.flow.%s: %w", field, err)}
	}
	if f.CoefInit != CoefInitPaper {
		return nil
	}
	bad := func(field string, v any, want string) error {
		return &FieldError{Field: field, Err: fmt.Errorf("fit: Recipe: %s = %v, want %s with family.flow.coef_init %s (a cold start: the paper's coefficients place q)", field, v, want, CoefInitPaper)}
	}
	switch {
	case r.WarmStart != WarmNone:
		return bad("warm_start", fmt.Sprintf("%q", r.WarmStart), WarmNone)
	case r.Init.Method != InitMethodZero:
		return bad("init.method", fmt.Sprintf("%q", r.Init.Method), InitMethodZero)
	case r.Init.Scale != 1:
		return bad("init.scale", r.Init.Scale, "1")
	case r.Init.Point != nil:
		return bad("init.point", r.Init.Point, "none")
	}
	return nil
}

// paperInit is a triangular Bernstein layer whose Init is the BF-VI reference code's cold
// start (paperCoefInit) instead of the near-identity; the map, the parameters and the spec
// are the layer's own (a saved fit reloads as the plain layer: Init only runs at the start).
type paperInit struct{ *flow.BernsteinAR }

// Init writes the reference code's initial parameters (paperCoefInit).
func (p paperInit) Init(params []float64, rnd *rand.Rand) { paperCoefInit(p.BernsteinAR, params, rnd) }

// paperCoefInit initialises b as the BF-VI reference code does (R/multidimensional_script.R;
// papers.md §1.1): the conditioner's weights Glorot-uniform from rnd (nil: a fixed stream)
// with zero biases, as TFP's AutoregressiveNetwork; the first coordinate in the
// conditioner's order (whose coefficients are the output biases: it sees no input) gets the
// code's free coefficients
//
//	ϑ_k = w_min + (w_max − w_min)·Φ(k/M),  k = 0..M,  [w_min, w_max] = [−10, 10],
//
// so its support starts at [0, 20·Φ(1) − 10] ≈ [0, 6.83] (Φ is evaluated on [0, 1], not on the
// real line, so the code's "roughly uniform on [w_min, w_max]" comment does not hold); the other
// coordinates' raw coefficients are the Glorot output (increments softplus(≈ 0) ≈ 0.69); the
// input affine maps, when trained, start at α′ = 0 (α = log 2), β = 0. Cost O(#parameters).
func paperCoefInit(b *flow.BernsteinAR, params []float64, rnd *rand.Rand) {
	if rnd == nil {
		rnd = rand.New(rand.NewPCG(0, 0x70617065))
	}
	m := b.Conditioner()
	nm := m.NumParams()
	mp := params[:nm]
	m.Init(mp, rnd)
	clear(params[nm:])
	d, M := b.Dim(), b.Degree()
	first := 0
	for j, deg := range m.Degrees() {
		if deg == 1 {
			first = j
		}
	}
	_, bias := m.Layer(mp, m.Layers()-1)
	for k, r := range paperRawCoefficients(M) {
		bias[k*d+first] = r
	}
}

// paperRawCoefficients returns the raw coefficients r_0..r_M of the reference code's free
// coefficients ϑ_k = w_min + (w_max − w_min)·Φ(k/M): r_0 = ϑ_0, r_k = softplus⁻¹(ϑ_k − ϑ_{k−1}).
func paperRawCoefficients(M int) []float64 {
	theta := make([]float64, M+1)
	for k := range theta {
		theta[k] = paperCoefMin + (paperCoefMax-paperCoefMin)*0.5*math.Erfc(-float64(k)/float64(M)/math.Sqrt2)
	}
	raw := make([]float64, M+1)
	raw[0] = theta[0]
	for k := 1; k <= M; k++ {
		x := theta[k] - theta[k-1]
		raw[k] = x + math.Log(-math.Expm1(-x)) // softplus⁻¹(x) = log(eˣ − 1)
	}
	return raw
}

// paperParts are the words Describe adds for the paper's structure options.
func paperParts(o FlowOptions) []string {
	var p []string
	if o.FrozenAffine {
		p = append(p, "frozen input affine map")
	}
	if o.NoDirect {
		p = append(p, "no direct connections")
	}
	if o.CoefInit == CoefInitPaper {
		p = append(p, "the paper's coefficient init")
	}
	if o.FixedOutput {
		p = append(p, "fixed output layer")
	}
	return p
}
