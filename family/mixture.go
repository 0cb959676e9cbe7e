package family

import (
	"errors"
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/ad"
)

var _ LogProber = (*Mixture)(nil)

// Mixture is a finite mixture of S member families on the same ℝ^d with fixed weights w_s
// (structure, like a family's rank): the ensemble of variational approximations of Kviman et
// al. (2022, AISTATS, "Multiple importance sampling ELBO and deep ensembles of variational
// approximations"), uniform weights being their balance heuristic. Its parameter vector is the
// concatenation of the members' parameters (member s owns params[Offset(s):Offset(s+1)]):
//
//	log q(z) = log Σ_s w_s q_s(z; φ_s)   (computed as logsumexp_s(log w_s + log q_s(z)))
//
// Mixture is a Family and a LogProber, so a fitted ensemble goes wherever a fitted family
// goes (draws, log q for PSIS, moments, saving). It has no closed-form entropy and cannot be
// set from moments. Draws. A draw consumes NoiseDim() = 1 + max_s NoiseDim_s standard
// normals: ε₀ chooses the member s by inverting the weights' CDF at Φ(ε₀), and the next
// NoiseDim_s values are member s's noise (the rest are unused). The choice is piecewise
// constant in φ, so Draw's reparameterisation gradient is the unbiased Σ_s w_s ∇E_{q_s}[·].
// Stratified draws (Strata and SampleMember) give each member its share of n draws exactly
// up to rounding in every prefix of the draws, the design of multiple importance sampling
// (Elvira et al. 2019) that MISELBO and the ensemble's diagnostics use.
//
// Cost per draw or log density: one draw of the chosen member plus the log densities of the
// S − 1 others (members of zero weight are skipped), O(S) scratch.
type Mixture struct {
	members []Family
	probers []LogProber
	weights []float64 // normalised
	logW    []float64
	cum     []float64 // CDF of the weights, cum[S−1] = 1
	offs    []int
	noise   int
	pool    *bufPool
}

// MaxMixtureMembers caps the members of a Mixture: every draw evaluates every member's log
// density, so the cost of a mixture grows with S²; an ensemble of more than a few dozen
// approximations is not what the mixture is for.
const MaxMixtureMembers = 256

// NewMixture returns the mixture of members with weights (nil: uniform, 1/S each). Weights
// must be finite and ≥ 0 with a positive sum; they are normalised. Every member must have
// the first member's dimension and be a LogProber (every family of this package is).
func NewMixture(members []Family, weights []float64) (*Mixture, error) {
	S := len(members)
	switch {
	case S == 0:
		return nil, errors.New("family: NewMixture: no members")
	case S > MaxMixtureMembers:
		return nil, fmt.Errorf("family: NewMixture: %d members, want at most %d (family.MaxMixtureMembers)", S, MaxMixtureMembers)
	case weights != nil && len(weights) != S:
		return nil, fmt.Errorf("family: NewMixture: %d weights for %d members", len(weights), S)
	}
	m := &Mixture{members: members, probers: make([]LogProber, S), offs: make([]int, S+1)}
	d := members[0].Dim()
	for s, f := range members {
		if f.Dim() != d {
			return nil, fmt.Errorf("family: NewMixture: member %d has dimension %d, member 0 has %d", s, f.Dim(), d)
		}
		lp, ok := f.(LogProber)
		if !ok {
			return nil, fmt.Errorf("family: NewMixture: member %d (%T) cannot evaluate log q at a point (not a LogProber)", s, f)
		}
		m.probers[s] = lp
		m.offs[s+1] = m.offs[s] + f.NumParams()
		m.noise = max(m.noise, f.NoiseDim())
	}
	m.noise++
	w := make([]float64, S)
	if weights == nil {
		for s := range w {
			w[s] = 1 / float64(S)
		}
	} else {
		sum := 0.0
		for s, v := range weights {
			if !(v >= 0) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("family: NewMixture: weight %d is %g, want finite and ≥ 0", s, v)
			}
			sum += v
		}
		if !(sum > 0) || math.IsInf(sum, 0) {
			return nil, fmt.Errorf("family: NewMixture: weights sum to %g, want a finite value > 0", sum)
		}
		for s, v := range weights {
			w[s] = v / sum
		}
	}
	m.weights = w
	m.logW = make([]float64, S)
	m.cum = make([]float64, S)
	c := 0.0
	for s, v := range w {
		m.logW[s] = math.Log(v)
		c += v
		m.cum[s] = c
	}
	for s := S - 1; s >= 0; s-- { // the last member of positive weight ends the CDF at 1
		if w[s] > 0 {
			for j := s; j < S; j++ {
				m.cum[j] = 1
			}
			break
		}
	}
	m.pool = newBufPool(S)
	return m, nil
}

// Len returns the number of members S.
func (m *Mixture) Len() int { return len(m.members) }

// Member returns member s.
func (m *Mixture) Member(s int) Family { return m.members[s] }

// Weights returns a copy of the normalised weights.
func (m *Mixture) Weights() []float64 { return append([]float64(nil), m.weights...) }

// Offset returns where member s's parameters start in the mixture's parameter vector
// (Offset(Len()) = NumParams()).
func (m *Mixture) Offset(s int) int { return m.offs[s] }

// MemberParams returns member s's parameters, a sub-slice of params.
func (m *Mixture) MemberParams(params []float64, s int) []float64 {
	return params[m.offs[s]:m.offs[s+1]]
}

// Dim returns d.
func (m *Mixture) Dim() int { return m.members[0].Dim() }

// NumParams returns Σ_s NumParams_s.
func (m *Mixture) NumParams() int { return m.offs[len(m.members)] }

// NoiseDim returns 1 + max_s NoiseDim_s: the member choice and the chosen member's noise.
func (m *Mixture) NoiseDim() int { return m.noise }

// Init initialises every member at the same Gaussian (see Family.Init): the members are then
// equal. A mixture is meant to hold members fitted separately (fit's ensembles); Init exists so
// that it is a Family like any other.
func (m *Mixture) Init(params, loc []float64, scale float64) {
	checkLen("Mixture.Init", "params", len(params), m.NumParams())
	for s, f := range m.members {
		f.Init(m.MemberParams(params, s), loc, scale)
	}
}

// Moments writes the mixture's mean Σ_s w_s μ_s and, when cov is not nil, its covariance
// Σ_s w_s (Σ_s + μ_s μ_sᵀ) − μμᵀ, from the members' moments (a flow's by its Monte Carlo
// estimate). Cost: the members' Moments plus O(S·d²).
func (m *Mixture) Moments(params, mean, cov []float64) {
	d := m.Dim()
	checkLen("Mixture.Moments", "mean", len(mean), d)
	ms := make([]float64, d)
	var cs []float64
	if cov != nil {
		checkLen("Mixture.Moments", "cov", len(cov), d*d)
		cs = make([]float64, d*d)
		clear(cov)
	}
	clear(mean)
	for s, f := range m.members {
		w := m.weights[s]
		if w == 0 {
			continue
		}
		f.Moments(m.MemberParams(params, s), ms, cs)
		for i := range d {
			mean[i] += w * ms[i]
		}
		if cov != nil {
			for i := range d {
				for j := range d {
					cov[i*d+j] += w * (cs[i*d+j] + ms[i]*ms[j])
				}
			}
		}
	}
	if cov != nil {
		for i := range d {
			for j := range d {
				cov[i*d+j] -= mean[i] * mean[j]
			}
		}
	}
}

// Choose returns the member a draw with member-choice noise ε₀ comes from: the first s with
// Φ(ε₀) < w_1 + … + w_s (never a member of zero weight).
func (m *Mixture) Choose(eps0 float64) int {
	u := 0.5 * math.Erfc(-eps0/math.Sqrt2)
	for s, c := range m.cum {
		if u < c && m.weights[s] > 0 {
			return s
		}
	}
	for s := len(m.weights) - 1; ; s-- { // u = 1: the last member of positive weight
		if m.weights[s] > 0 {
			return s
		}
	}
}

// Draw records z from the member Choose(eps[0]) picks, and the mixture's log q(z).
func (m *Mixture) Draw(t *ad.Tape, params ad.Var, eps []float64) (z, logq ad.Var) {
	checkLen("Mixture.Draw", "eps", len(eps), m.noise)
	s := m.Choose(eps[0])
	z, lq := m.members[s].Draw(t, t.Slice(params, m.offs[s], m.offs[s+1]), eps[1:1+m.members[s].NoiseDim()])
	return z, m.mixTape(t, params, z, s, lq)
}

// LogDensity records log q(z) = logsumexp_s(log w_s + log q_s(z)).
func (m *Mixture) LogDensity(t *ad.Tape, params, z ad.Var) ad.Var {
	return m.mixTape(t, params, z, -1, ad.Var{})
}

// mixTape records the mixture log density at z, with member own's log density given as lq
// (own < 0: none given).
func (m *Mixture) mixTape(t *ad.Tape, params, z ad.Var, own int, lq ad.Var) ad.Var {
	var terms []ad.Var
	var lw []float64
	for j, f := range m.members {
		if m.weights[j] == 0 {
			continue
		}
		v := lq
		if j != own {
			v = f.LogDensity(t, t.Slice(params, m.offs[j], m.offs[j+1]), z)
		}
		terms = append(terms, v)
		lw = append(lw, m.logW[j])
	}
	return t.LogSumExp(t.Add(t.Concat(terms...), t.Const(lw...)))
}

// Sample writes a draw z from the member Choose(eps[0]) picks and returns the mixture's
// log q(z), in float64 code.
func (m *Mixture) Sample(params, eps, z []float64) float64 {
	checkLen("Mixture.Sample", "eps", len(eps), m.noise)
	s := m.Choose(eps[0])
	return m.SampleMember(params, s, eps[1:1+m.members[s].NoiseDim()], z)
}

// SampleMember writes a draw z of member s (eps: its NoiseDim_s standard normals) and
// returns the mixture's log q(z): the stratified draws of Strata.
func (m *Mixture) SampleMember(params []float64, s int, eps, z []float64) float64 {
	lq := m.members[s].Sample(m.MemberParams(params, s), eps, z)
	b := m.pool.get()
	defer m.pool.put(b)
	m.logProbs(params, z, s, lq, *b)
	return m.LogMix(*b)
}

// LogProb returns log q(z); −Inf outside the support of every member.
func (m *Mixture) LogProb(params, z []float64) float64 {
	b := m.pool.get()
	defer m.pool.put(b)
	m.LogProbs(params, z, *b)
	return m.LogMix(*b)
}

// LogProbs writes log q_s(z) of every member s into out (len Len(); −Inf for members of zero
// weight, which are not evaluated).
func (m *Mixture) LogProbs(params, z, out []float64) {
	m.logProbs(params, z, -1, 0, out)
}

func (m *Mixture) logProbs(params, z []float64, own int, lq float64, out []float64) {
	checkLen("Mixture.LogProbs", "out", len(out), len(m.members))
	for j, p := range m.probers {
		switch {
		case m.weights[j] == 0:
			out[j] = math.Inf(-1)
		case j == own:
			out[j] = lq
		default:
			out[j] = p.LogProb(m.MemberParams(params, j), z)
		}
	}
}

// LogMix returns logsumexp_s(log w_s + lq_s) for the members' log densities lq (len Len()).
func (m *Mixture) LogMix(lq []float64) float64 {
	mx := math.Inf(-1)
	for j, v := range lq {
		if m.weights[j] > 0 {
			mx = max(mx, m.logW[j]+v)
		}
	}
	if math.IsInf(mx, 0) || math.IsNaN(mx) {
		return mx
	}
	s := 0.0
	for j, v := range lq {
		if m.weights[j] > 0 {
			s += math.Exp(m.logW[j] + v - mx)
		}
	}
	return mx + math.Log(s)
}

// Strata returns the member of each of n stratified draws: draw i goes to the member whose
// count falls furthest below its share, argmax_s (i+1)·w_s − c_s(i) (ties to the lowest s),
// so every prefix of k draws gives member s ⌊k·w_s⌋ or ⌈k·w_s⌉ draws up to one, and uniform
// weights give the round robin 0, 1, …, S−1, 0, 1, …. Members of zero weight get none. The
// assignment depends on n only through its length: Strata(k) is a prefix of Strata(n) for
// k ≤ n. Cost O(n·S).
func (m *Mixture) Strata(n int) []int {
	S := len(m.members)
	out := make([]int, n)
	c := make([]float64, S)
	for i := range out {
		best, bv := 0, math.Inf(-1)
		for s, w := range m.weights {
			if w == 0 {
				continue
			}
			if v := float64(i+1)*w - c[s]; v > bv {
				best, bv = s, v
			}
		}
		out[i] = best
		c[best]++
	}
	return out
}

// SampleStratified writes the n stratified draws of q (rows of z, n × Dim) and their log q
// into logq: draw i comes from member Strata(n)[i] with that member's NoiseDim_s values of
// normal() as its noise, in order. q is a *Mixture or an *Affine whose base is one (a fitted
// ensemble); the second result is false, and nothing is written, for any other q.
func SampleStratified(q Family, params []float64, n int, normal func() float64, z, logq []float64) bool {
	var aff *Affine
	m, ok := q.(*Mixture)
	if a, isAff := q.(*Affine); isAff {
		aff = a
		m, ok = a.Base.(*Mixture)
	}
	if !ok {
		return false
	}
	d := m.Dim()
	checkLen("SampleStratified", "z", len(z), n*d)
	checkLen("SampleStratified", "logq", len(logq), n)
	eps := make([]float64, m.noise)
	u := make([]float64, d)
	for i, s := range m.Strata(n) {
		e := eps[:m.members[s].NoiseDim()]
		for k := range e {
			e[k] = normal()
		}
		zi := z[i*d : (i+1)*d]
		lq := m.SampleMember(params, s, e, u)
		if aff == nil {
			copy(zi, u)
			logq[i] = lq
			continue
		}
		aff.apply(zi, u)
		for k := range zi {
			zi[k] += aff.Shift[k]
		}
		logq[i] = lq - aff.logDet
	}
	return true
}
