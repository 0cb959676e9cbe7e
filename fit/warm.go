package fit

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/model"
)

// warmStart is a fixed preconditioning map that replaces the Laplace start.
type warmStart struct {
	shift, scale []float64
	diag         bool
	note         string
	err          error
	// The multi-start search of the previous fit (WithWarmStart), reported by the new one.
	starts, failed int
	why            string // Result.StartsFailedWhy of the previous fit
	modes          []Mode
}

// WithPreconditioner fits in the coordinates u of z = shift + scale·u (scale d×d lower
// triangular row-major, or its d diagonal entries when diag is set) instead of those of the
// Laplace approximation, and initialises the family at N(0, I) in u. No mode search is run.
// The slices are copied.
func WithPreconditioner(shift, scale []float64, diag bool) Option {
	w := &warmStart{shift: clone(shift), scale: clone(scale), diag: diag,
		note: "start at N(shift, scale·scaleᵀ) given by the caller (no Laplace search)"}
	return func(o *options) { o.warm = w }
}

// WithWarmStart starts the fit at the Gaussian moment match of a previous fit's approximation:
// the preconditioning map becomes z = m + L·u, with m the mean of prev's q and L the lower
// Cholesky factor of its covariance, and the family starts at N(0, I) in u, i.e. at N(m, LLᵀ)
// in z. After a full-rank Gaussian fit that is exactly the fitted q; a family.Flow then starts
// at it exactly (its Init is N(0, I) whenever the flow's Init is the identity: MAF, RealNVP,
// Bernstein flows with linear tails; bounded Bernstein flows start at a unit-variance
// near-identity) and only has to learn the non-Gaussian part. This is the warm start of
// BF-VI-style fits (issue 4 item 4); the Laplace search is skipped. Cost: the moments of prev's
// family (closed form for the Gaussians; Monte Carlo for flows, see family.Flow.Moments) and an
// O(d³) Cholesky factorisation.
func WithWarmStart(prev *Result) Option {
	w := &warmStart{}
	switch {
	case prev == nil || prev.Family == nil:
		w.err = errors.New("fit: WithWarmStart: no previous fit")
	default:
		w.shift, w.scale, w.err = gaussianMoments(prev.Family, prev.Params)
		w.starts, w.failed, w.modes = prev.Starts, prev.StartsFailed, cloneModes(prev.Modes)
		w.why = prev.StartsFailedWhy
		name := "previous"
		if prev.Recipe != nil {
			name = prev.Recipe.Family.Kind
		}
		w.note = fmt.Sprintf("warm start: whitened by the mean and covariance of the %s fit (k̂ %.2f, ELBO %.4g); q starts at that Gaussian",
			name, prev.KHat, prev.ELBO)
	}
	return func(o *options) { o.warm = w }
}

// gaussianMoments returns the mean of q and the lower Cholesky factor of its covariance.
func gaussianMoments(q family.Family, params []float64) (mean, chol []float64, err error) {
	d := q.Dim()
	mean, cov := make([]float64, d), make([]float64, d*d)
	q.Moments(params, mean, cov)
	sym := mat.NewSymDense(d, nil)
	for i := range d {
		if !finiteSlice(mean[i:i+1]) || !(cov[i*d+i] > 0) || math.IsInf(cov[i*d+i], 0) {
			return nil, nil, fmt.Errorf("fit: WithWarmStart: previous q has mean %g and variance %g in coordinate %d", mean[i], cov[i*d+i], i)
		}
		for j := 0; j <= i; j++ {
			sym.SetSym(i, j, 0.5*(cov[i*d+j]+cov[j*d+i]))
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sym) {
		return nil, nil, errors.New("fit: WithWarmStart: covariance of the previous q is not positive definite")
	}
	var L mat.TriDense
	ch.LTo(&L)
	chol = make([]float64, d*d)
	for i := range d {
		for j := 0; j <= i; j++ {
			chol[i*d+j] = L.At(i, j)
		}
	}
	return mean, chol, nil
}

func finiteSlice(x []float64) bool {
	for _, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return false
		}
	}
	return true
}

// state builds the starting state at the warm start's map.
func (w *warmStart) state(st *State, target model.Target, fam family.Family, cfg Config) (*State, *family.Affine, error) {
	if w.err != nil {
		return nil, nil, w.err
	}
	d := target.Dim()
	if len(w.shift) != d {
		return nil, nil, fmt.Errorf("fit: warm start: shift has %d values, target dimension is %d", len(w.shift), d)
	}
	st.InitNote = w.note
	return startAt(st, fam, clone(w.shift), clone(w.scale), w.diag, 1, cfg)
}
