package fit

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/model"
)

// laplaceResult is a Gaussian approximation at the mode of the target.
type laplaceResult struct {
	Mode  []float64
	Cov   []float64 // d×d row-major, inverse of the negative Hessian at the mode
	Chol  []float64 // lower Cholesky factor of Cov
	Evals int       // gradient evaluations spent
	Note  string    // how the start was found, in words
	// LogDensity is log p at the mode; LogEvidence the Laplace estimate of log ∫ p,
	// log p(z*) + d/2·log 2π − ½·log det H with H the negative Hessian (= + ½·log det Cov).
	LogDensity, LogEvidence float64
	// DiagHessian: the negative Hessian was not positive definite and its positive diagonal
	// was used (the evidence is then a rough estimate).
	DiagHessian bool
}

// laplace finds the mode of log p(z) (z unconstrained, Jacobian included) by L-BFGS from z0
// and the curvature there by central differences of the gradient (2d gradient evaluations).
// It fails when the optimiser does not reach a finite point or the negative Hessian is not
// positive definite after a diagonal fallback, and then returns an error saying why, so the
// caller can fall back to a start at z0, with a result that holds only the evaluations spent.
func laplace(target model.Target, z0 []float64, maxIter int) (*laplaceResult, error) {
	d := target.Dim()
	var t ad.Tape
	g := make([]float64, d)
	evals := 0
	neg := func(x []float64) float64 {
		evals++
		lp := model.Gradient(&t, target, x, g)
		if math.IsNaN(lp) || math.IsInf(lp, 0) {
			return math.Inf(1)
		}
		return -lp
	}
	prob := optimize.Problem{
		Func: neg,
		Grad: func(grad, x []float64) {
			evals++
			model.Gradient(&t, target, x, grad)
			for i := range grad {
				grad[i] = -grad[i]
			}
		},
	}
	settings := &optimize.Settings{
		GradientThreshold: 1e-8,
		MajorIterations:   maxIter,
		FuncEvaluations:   20 * maxIter,
	}
	start := append([]float64(nil), z0...)
	if f := neg(start); math.IsInf(f, 1) {
		err := fmt.Errorf("log density is not finite at the start point")
		if e, ok := target.(model.Explainer); ok {
			if why := e.ExplainAt(start); why != nil {
				err = fmt.Errorf("log density is not finite at the start point: %w", why)
			}
		}
		return &laplaceResult{Evals: evals}, err
	}
	res, err := optimize.Minimize(prob, start, settings, &optimize.LBFGS{})
	if res == nil {
		return &laplaceResult{Evals: evals}, fmt.Errorf("mode search failed: %v", err)
	}
	for i, x := range res.X {
		if math.IsNaN(x) || math.Abs(x) > 1e6 {
			return &laplaceResult{Evals: evals}, fmt.Errorf("mode search ran off to z[%d] = %g (improper or unbounded density?)", i, x)
		}
	}
	// Line searches near the mode can fail on rounding (gonum then reports Failure) although the
	// point is a mode to working precision: the note reports the gradient norm reached, and a
	// failure far from a stationary point gets one restart from where it stopped.
	gradMax := func(x []float64) float64 {
		model.Gradient(&t, target, x, g)
		evals++
		m := 0.0
		for _, v := range g {
			m = max(m, math.Abs(v))
		}
		return m
	}
	gmax := gradMax(res.X)
	if res.Status == optimize.Failure && gmax > 1e-3 {
		if res2, _ := optimize.Minimize(prob, append([]float64(nil), res.X...), settings, &optimize.LBFGS{}); res2 != nil && res2.F <= res.F {
			res2.Stats.MajorIterations += res.Stats.MajorIterations
			res = res2
			gmax = gradMax(res.X)
		}
	}
	mode := res.X
	status := fmt.Sprintf("%s, |∇|∞ = %.2g", res.Status, gmax)
	// Negative Hessian by central differences of the gradient.
	P := make([]float64, d*d)
	gp, gm := make([]float64, d), make([]float64, d)
	x := append([]float64(nil), mode...)
	for j := 0; j < d; j++ {
		h := 1e-5 * math.Max(1, math.Abs(mode[j]))
		x[j] = mode[j] + h
		model.Gradient(&t, target, x, gp)
		x[j] = mode[j] - h
		model.Gradient(&t, target, x, gm)
		x[j] = mode[j]
		evals += 2
		for i := 0; i < d; i++ {
			P[i*d+j] = -(gp[i] - gm[i]) / (2 * h)
		}
	}
	sym := mat.NewSymDense(d, nil)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			sym.SetSym(i, j, 0.5*(P[i*d+j]+P[j*d+i]))
		}
	}
	note := fmt.Sprintf("Laplace start: L-BFGS mode (%s, %d iterations), finite-difference Hessian", status, res.Stats.MajorIterations)
	var ch mat.Cholesky
	diagFallback := false
	if !ch.Factorize(sym) {
		// Not positive definite (a saddle or a flat direction): keep the positive curvatures
		// of the diagonal, unit curvature elsewhere.
		for i := 0; i < d; i++ {
			for j := 0; j < i; j++ {
				sym.SetSym(i, j, 0)
			}
			if v := sym.At(i, i); !(v > 0) || math.IsInf(v, 0) {
				sym.SetSym(i, i, 1)
			}
		}
		if !ch.Factorize(sym) {
			return &laplaceResult{Evals: evals}, fmt.Errorf("negative Hessian at the mode is not usable")
		}
		note += "; Hessian not positive definite, diagonal used"
		diagFallback = true
	}
	var cov mat.SymDense
	if err := ch.InverseTo(&cov); err != nil {
		return &laplaceResult{Evals: evals}, fmt.Errorf("inverting the Hessian: %v", err)
	}
	out := &laplaceResult{Mode: mode, Cov: make([]float64, d*d), Chol: make([]float64, d*d), Evals: evals, Note: note,
		LogDensity: -res.F, DiagHessian: diagFallback}
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			out.Cov[i*d+j] = cov.At(i, j)
		}
	}
	var cc mat.Cholesky
	if !cc.Factorize(&cov) {
		return &laplaceResult{Evals: evals}, fmt.Errorf("covariance at the mode is not positive definite")
	}
	var L mat.TriDense
	cc.LTo(&L)
	for i := 0; i < d; i++ {
		for j := 0; j <= i; j++ {
			out.Chol[i*d+j] = L.At(i, j)
		}
	}
	// ½·log det Cov = Σ log L_ii.
	out.LogEvidence = out.LogDensity + 0.5*float64(d)*math.Log(2*math.Pi)
	for i := 0; i < d; i++ {
		out.LogEvidence += math.Log(out.Chol[i*d+i])
	}
	if k := guardScale(&t, target, out); k > 0 {
		out.Note += fmt.Sprintf("; Laplace scale shrunk in %d coordinate(s) where log p fell by more than %g nats within one sd", k, ScaleGuardDrop)
	}
	return out, nil
}

// ScaleGuardDrop and ScaleGuardSD define the Laplace scale guard (guardScale): a coordinate whose
// Laplace sd exceeds ScaleGuardSD is checked at z* ± sd, and its scale is halved while log p
// falls by more than ScaleGuardDrop nats on both sides (a Gaussian falls by ½ nat at one sd).
const (
	ScaleGuardDrop = 20.0
	ScaleGuardSD   = 10.0
)

// guardScale shrinks absurd Laplace scales: where the curvature at the mode is nearly zero but
// the density is not flat (a ring-shaped or curved ridge, where the Hessian sees only the
// tangent), the inverse Hessian gives a scale that puts q's mass where p has none, and VI
// starts from a hopeless ELBO. For each coordinate j with sd_j > ScaleGuardSD, log p is
// evaluated at z* ± s·v_j, s = sd_j, along v_j = Cov·e_j / Cov_jj — coordinate j moved by s and
// the others to their conditional means under the Laplace Gaussian, where that Gaussian's log
// density is only ½ nat below its peak however correlated the coordinates are (moving e_j alone
// would fall by ½·Cov_jj·(Cov⁻¹)_jj nats, ≫ ScaleGuardDrop on a strongly correlated regression
// that the Laplace fit describes well); while both fall below log p(z*) − ScaleGuardDrop (or are
// not finite), s is halved (at most 60 times). The covariance becomes D·Cov·D and its Cholesky
// factor D·L, with D the diagonal of the factors, so it stays positive definite; the Laplace
// evidence keeps the Hessian's value (it is what ranks modes). It returns the number of
// coordinates shrunk. Cost: 2 gradient evaluations per halving step of a checked coordinate;
// none when every sd is at most ScaleGuardSD, which is every well-scaled model.
func guardScale(t *ad.Tape, target model.Target, out *laplaceResult) int {
	d := len(out.Mode)
	x := append([]float64(nil), out.Mode...)
	g := make([]float64, d)
	f := make([]float64, d)
	shrunk := 0
	for j := 0; j < d; j++ {
		f[j] = 1
		sd := math.Sqrt(out.Cov[j*d+j])
		if !(sd > ScaleGuardSD) {
			continue
		}
		cjj := out.Cov[j*d+j]
		drops := func(s float64) bool { // both sides fall too far
			for _, sign := range []float64{1, -1} {
				for i := range x {
					x[i] = out.Mode[i] + sign*s*out.Cov[i*d+j]/cjj
				}
				lp := model.Gradient(t, target, x, g)
				out.Evals++
				if !math.IsNaN(lp) && lp >= out.LogDensity-ScaleGuardDrop {
					return false
				}
			}
			return true
		}
		for k := 0; k < 60 && drops(sd*f[j]); k++ {
			f[j] /= 2
		}
		if f[j] < 1 {
			shrunk++
		}
	}
	if shrunk == 0 {
		return 0
	}
	for i := 0; i < d; i++ {
		for j := 0; j < d; j++ {
			out.Cov[i*d+j] *= f[i] * f[j]
			out.Chol[i*d+j] *= f[i]
		}
	}
	return shrunk
}
