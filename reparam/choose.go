package reparam

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/mcmc"
	"github.com/vigo-bayes/vigo/model"
)

// Pilot configures Choose's pilot posterior: a short NUTS run of the all-non-centred model
// (whose geometry is never worse than a funnel's neck, and whose density in θ̃ has a proper
// scale), from which Points draws, evenly spaced, are the points the criterion is evaluated
// at. Zero fields take the defaults in parentheses.
type Pilot struct {
	Warmup int    // NUTS warmup iterations (150)
	Draws  int    // kept iterations (100)
	Points int    // draws the criterion is averaged over (20, at most Draws)
	Seed   uint64 // sampler seed (1)
}

func (p Pilot) defaults() Pilot {
	if p.Warmup == 0 {
		p.Warmup = 150
	}
	if p.Draws == 0 {
		p.Draws = 100
	}
	if p.Points == 0 {
		p.Points = 20
	}
	p.Points = min(p.Points, p.Draws)
	if p.Seed == 0 {
		p.Seed = 1
	}
	return p
}

// GroupChoice is the form Choose gave one group and why.
type GroupChoice struct {
	Param  string
	Lambda float64 // CP (1) or NCP (0)
	// Ratio is the median over the pilot points and the group's elements of
	// r = c_F·σ²·(−β): the conditional variance of the prior against the inverse curvature of
	// the children's terms (see Choose). NCP iff Ratio < 1.
	Ratio float64
	// Var and Info are the medians of c_F·σ² and of −1/β (+Inf where β ≥ 0).
	Var, Info float64
	// Elements and Points are the group's size and the number of pilot points.
	Elements, Points int
}

// Choice is the outcome of Choose: one form per group, with the pilot's cost.
type Choice struct {
	Groups []GroupChoice
	// GradEvals counts the pilot's gradient evaluations: NUTS plus the curvature finite
	// differences.
	GradEvals int64
}

// Lambda returns the chosen λ per group, for Spec.Model.
func (c *Choice) Lambda() []float64 {
	l := make([]float64, len(c.Groups))
	for g, gc := range c.Groups {
		l[g] = gc.Lambda
	}
	return l
}

// String explains the choice, one line per group: the group, its form, the median ratio
// against 1, the medians of c_F·σ² and −1/β, and how many elements and pilot points they are
// over.
func (c *Choice) String() string {
	var b strings.Builder
	for _, g := range c.Groups {
		rel := "<"
		if g.Ratio >= 1 {
			rel = "≥"
		}
		fmt.Fprintf(&b, "%s: %s: median c_F·σ²·(−β) = %.4g %s 1 (c_F·σ² %.3g, −1/β %.3g; %d element(s) × %d pilot points)\n",
			g.Param, formName(g.Lambda), g.Ratio, rel, g.Var, g.Info, g.Elements, g.Points)
	}
	return b.String()
}

// Choose picks CP or NCP for every group by Kingma & Welling's (2014, §4) correlation
// criterion. For a latent θ_i with conditional prior variance σ² given its parents and children
// whose log density has curvature β = ∂²/∂θ_i² log p(children | θ) < 0, the posterior
// correlation between θ and its parents is smaller in the non-centred form exactly when
// σ² < −1/β: the prior is tighter than what the children say, so θ is mostly its parents plus
// noise, which the non-centred coordinates make independent. Here σ² is c_F·σ_i² with c_F the
// family's standard conditional variance (1/curvature of the standard log density at its
// centre: normal 1, Student-t ν/(ν+1), logistic 2, Cauchy ½; Laplace, with a kink at 0, its
// variance 2), and β is the diagonal curvature, in original coordinates, of the whole log density
// except the group's own prior (the likelihood terms and the priors of groups that θ is a
// parent of), by central differences of the AD gradient (h = 10⁻⁴·max(1, |θ_i|)).
//
// The criterion is evaluated at p.Points draws of a short NUTS run of the all-NCP model (the
// pilot), and for a group of several elements it is aggregated as the median of
// r = c_F·σ²·max(0, −β) over points × elements: NCP iff that median is below 1, i.e. iff most
// of the group's elements at most of the posterior's points prefer NCP. The same choice serves
// NUTS and VI (both suffer from the same posterior correlations).
//
// Cost: the pilot's NUTS iterations plus 2·Σ_g size_g gradient evaluations per point.
func (s *Spec) Choose(ctx context.Context, p Pilot) (*Choice, error) {
	c, err := s.check("Spec.Choose")
	if err != nil {
		return nil, err
	}
	if p.Warmup < 0 || p.Draws < 0 || p.Points < 0 {
		return nil, fmt.Errorf("reparam: Spec.Choose: negative pilot length (Warmup=%d, Draws=%d, Points=%d)", p.Warmup, p.Draws, p.Points)
	}
	p = p.defaults()
	ng := len(c.idx)
	ncpL, cpL := make([]float64, ng), make([]float64, ng)
	for g := range cpL {
		cpL[g] = 1
	}
	ncp, err := c.model(ncpL)
	if err != nil {
		return nil, err
	}
	res, err := mcmc.Sample(ctx, ncp, mcmc.Config{Chains: 1, Warmup: p.Warmup, Draws: p.Draws, Seed: p.Seed})
	if err != nil {
		return nil, fmt.Errorf("reparam: Spec.Choose: pilot: %w", err)
	}
	toCP, err := s.Converter(ncpL, cpL)
	if err != nil {
		return nil, err
	}
	d := ncp.Dim()
	ch := &res.Chains[0]
	n := len(ch.Draws) / d
	out := &Choice{GradEvals: res.GradEvals}
	ratios := make([][]float64, ng)
	vars := make([][]float64, ng)
	infos := make([][]float64, ng)
	offs := blockOffsets(c.params)
	z := make([]float64, d)
	for k := range p.Points {
		i := (k*n)/p.Points + n/(2*p.Points)
		toCP.Convert(z, ch.Draws[i*d:(i+1)*d])
		_, _, sigmas := c.original(toCP.pool, constrained(toCP.pool, toCP.lay, z), cpL)
		for g := range c.idx {
			fam := s.Groups[g].Family.varianceFactor(s.Groups[g].Nu)
			beta := c.curvature(z, g, offs[c.idx[g]])
			out.GradEvals += int64(2 * len(beta))
			for e, b := range beta {
				v := fam * sigmas[g][e] * sigmas[g][e]
				info := math.Inf(1)
				r := 0.0
				if b < 0 {
					info = -1 / b
					r = v / info
				}
				ratios[g] = append(ratios[g], r)
				vars[g] = append(vars[g], v)
				infos[g] = append(infos[g], info)
			}
		}
	}
	for g, i := range c.idx {
		gc := GroupChoice{Param: c.params[i].Name, Ratio: median(ratios[g]), Var: median(vars[g]), Info: median(infos[g]),
			Elements: c.size[g], Points: p.Points, Lambda: CP}
		if gc.Ratio < 1 {
			gc.Lambda = NCP
		}
		out.Groups = append(out.Groups, gc)
	}
	return out, nil
}

// curvature returns β_e = ∂²/∂θ_e² of the log density without group g's prior, for every element
// e of group g (whose block starts at off in z, CP coordinates), by central differences of the
// AD gradient.
func (c *compiled) curvature(z []float64, g, off int) []float64 {
	lay, _ := c.layout()
	ng := len(c.idx)
	grad := func(zz []float64, e int) float64 {
		var t ad.Tape
		in := t.Input(zz)
		q := make([]ad.Var, len(c.params))
		lj := lay.Constrain(&t, in, q)
		lam := make([]ad.Var, ng)
		for h := range lam {
			lam[h] = t.Const(1)
		}
		out := t.Add(c.eval(&t, q, make([]ad.Var, len(c.params)), lam, g), lj)
		t.Backward(out)
		return t.Grad(in)[off+e]
	}
	beta := make([]float64, c.size[g])
	zz := slices.Clone(z)
	for e := range beta {
		x := z[off+e]
		h := 1e-4 * math.Max(1, math.Abs(x))
		zz[off+e] = x + h
		gp := grad(zz, e)
		zz[off+e] = x - h
		gm := grad(zz, e)
		zz[off+e] = x
		beta[e] = (gp - gm) / (2 * h)
	}
	return beta
}

// blockOffsets returns the offset of every parameter's block in z.
func blockOffsets(ps []model.Param) []int {
	offs := make([]int, len(ps))
	off := 0
	for i, p := range ps {
		offs[i] = off
		off += freeSize(p)
	}
	return offs
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return 0.5 * (s[n/2-1] + s[n/2])
}
