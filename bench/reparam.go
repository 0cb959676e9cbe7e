package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"github.com/vigo-bayes/vigo/mcmc"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/reparam"
	"github.com/vigo-bayes/vigo/rng"
	"github.com/vigo-bayes/vigo/stan"
	"github.com/vigo-bayes/vigo/zoo"
)

// The reparameterisation benchmark (issue 18 items 2–4): every problem is written once as a
// reparam.Spec (location–scale groups declared) and run in five forms — centred (CP),
// non-centred (NCP), Kingma & Welling's (2014) 50/50 mixture of a CP and an NCP NUTS kernel,
// automatic (a) (reparam.Spec.Choose: the paper's criterion at a NUTS pilot) and automatic
// (b) (reparam.Spec.LearnLambda: VIP's learned partial centring) — under NUTS (min bulk ESS
// per gradient over the quantities in original coordinates) and mean-field VI (fit.Run; W1/sd
// against a reference and PSIS k̂). The problems: eight schools, the two-latent toy across
// σ_z/σ_x, the tanh DBN across σ_z (the models of bench dncp, as Specs), and hierarchical
// posteriors of posteriordb-full compiled by package stan.

// ReparamConfig says what RunReparam runs. Zero fields take the defaults in parentheses.
type ReparamConfig struct {
	// NUTS: Warmup (500) and Draws (500) per chain, Chains (2); Seed (1) is the seed of every
	// run (sampler, VI, pilot, VIP).
	Warmup, Draws, Chains int
	Seed                  uint64
	// NoiseSeeds (3): CP and NCP are rerun with seeds Seed … Seed+NoiseSeeds−1 on the rows
	// marked for it (eight schools and the toy) to measure the seed-to-seed spread that
	// "within noise" is judged against.
	NoiseSeeds int
	// Toy's (σ_x, σ_z) pairs ((1, 0.1), (1, 1), (1, 10), (0.1, 1)).
	Toy [][2]float64
	// DBN: σ_z values (0.03, 0.3, 3), T (10), K (3), P (10), ParamSeed (1).
	DBNSigmas []float64
	T, K, P   int
	ParamSeed uint64
	// Posteriors are posteriordb-full posteriors with a centred group-level prior
	// (DefaultReparamPosteriors); Full is the posteriordb-full directory ("" skips them).
	Posteriors []string
	Full       string
	// VIPSteps are LearnLambda's Adam steps per start (1000).
	VIPSteps int
	// VIStarts is the number of Laplace mode searches of every VI fit (fit.DefaultRecipe's
	// Init.Starts and StartsMax; 0 keeps the recipe's).
	VIStarts int
	// VIMaxIter caps every VI fit's iterations (0 keeps the recipe's).
	VIMaxIter int
	// Progress, when set, receives one line per finished run.
	Progress func(string)
}

// DefaultReparamPosteriors are the posteriordb-full posteriors of the benchmark: centred
// programs whose group-level prior is a normal with a location and scale that are parameters,
// constants or (surgical) a function of one, and whose gradient is cheap enough for the
// budget: eight schools (8 schools, the small funnel), seeds (21 plates, binomial, b ~ N(0, σ))
// and surgical (12 hospitals, binomial, b ~ N(μ, √σ²)). The radon programs (85 counties) also
// qualify but their Stan-compiled gradient, one statement per each of 919 homes, costs ≈ 16 ms
// on the shared machine, beyond the budget (stanGroups still declares them).
var DefaultReparamPosteriors = []string{
	"eight_schools-eight_schools_centered",
	"seeds_data-seeds_centered_model",
	"surgical_data-surgical_model",
}

func (c ReparamConfig) defaults() ReparamConfig {
	setDefault(&c.Warmup, 500)
	setDefault(&c.Draws, 500)
	setDefault(&c.Chains, 2)
	setDefault(&c.Seed, 1)
	setDefault(&c.NoiseSeeds, 3)
	setDefaultSlice(&c.Toy, [][2]float64{{1, 0.1}, {1, 1}, {1, 10}, {0.1, 1}})
	setDefaultSlice(&c.DBNSigmas, []float64{0.03, 0.3, 3})
	setDefault(&c.T, 10)
	setDefault(&c.K, 3)
	setDefault(&c.P, 10)
	setDefault(&c.ParamSeed, 1)
	setDefault(&c.VIPSteps, 1000)
	if c.Posteriors == nil {
		c.Posteriors = DefaultReparamPosteriors
	}
	return c
}

// The forms of a row, in table order.
var reparamForms = []string{"CP", "NCP", "mixture", "auto (a)", "auto (b)"}

// NUTSForm is one NUTS run of one form.
type NUTSForm struct {
	MinESS     float64 // min bulk ESS over the original-coordinate quantities, all chains
	Grads      int64   // gradient evaluations of the run (warmup included)
	ESSPerGrad float64 // MinESS / Grads
	MaxRhat    float64
	Wall       time.Duration
	Err        string
}

// VIForm is one mean-field VI fit of one form.
type VIForm struct {
	W1SD  float64 // mean over quantities of W1(q, reference)/sd(reference)
	KHat  float64
	Grads int
	Wall  time.Duration
	Err   string
}

// ReparamRow is one problem.
type ReparamRow struct {
	Name, Group string // problem and a short description of its groups
	Dim         int
	NUTS        map[string]*NUTSForm
	VI          map[string]*VIForm
	// ChoiceA and ChoiceB explain the automatic forms; LambdaA, LambdaB are their λ.
	ChoiceA, ChoiceB   string
	LambdaA, LambdaB   []float64
	PilotGrads         int64 // Choose's pilot
	VIPGrads           int64 // LearnLambda
	PilotWall, VIPWall time.Duration
	// Reference says where the W1 reference comes from.
	Reference string
	// NoiseESS and NoiseW1 are the seed spreads (max/min over NoiseSeeds seeds) of CP's and
	// NCP's ESS/grad and W1/sd on this row (0 when the row was not rerun).
	NoiseESS, NoiseW1 [2]float64
	Err               string
}

// ReparamReport is the benchmark's outcome.
type ReparamReport struct {
	Config ReparamConfig
	Rows   []*ReparamRow
}

// reparamProblem is a Spec with what the row needs to be measured.
type reparamProblem struct {
	name, groups string
	spec         *reparam.Spec
	exact        func(r *rng.Stream, n int) [][]float64 // exact posterior draws by quantity (toy), or nil
	noise        bool
}

// RunReparam runs the benchmark. A problem that fails is a row with its error; a cancelled
// context returns the rows so far with the error.
func RunReparam(ctx context.Context, cfg ReparamConfig) (*ReparamReport, error) {
	cfg = cfg.defaults()
	if cfg.Warmup < 1 || cfg.Draws < 1 || cfg.Chains < 1 || cfg.NoiseSeeds < 1 || cfg.VIPSteps < 1 {
		return nil, fmt.Errorf("bench: RunReparam: Warmup, Draws, Chains, NoiseSeeds and VIPSteps must be at least 1 (%d, %d, %d, %d, %d)",
			cfg.Warmup, cfg.Draws, cfg.Chains, cfg.NoiseSeeds, cfg.VIPSteps)
	}
	var probs []reparamProblem
	probs = append(probs, reparamProblem{name: "eight schools", groups: "theta ~ N(mu, tau)", spec: eightSchoolsSpec(), noise: true})
	for _, p := range cfg.Toy {
		probs = append(probs, toySpec(p[0], p[1]))
	}
	for _, s := range cfg.DBNSigmas {
		p, err := dbnSpec(cfg.T, cfg.K, cfg.P, s, cfg.ParamSeed)
		if err != nil {
			return nil, err
		}
		probs = append(probs, p)
	}
	rep := &ReparamReport{Config: cfg}
	for _, name := range cfg.Posteriors {
		if cfg.Full == "" {
			break
		}
		p, err := stanReparam(cfg.Full, name)
		if err != nil {
			rep.Rows = append(rep.Rows, &ReparamRow{Name: name, Err: err.Error()})
			continue
		}
		probs = append(probs, p)
	}
	for _, p := range probs {
		row, err := runReparamRow(ctx, cfg, p)
		rep.Rows = append(rep.Rows, row)
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func (c ReparamConfig) progress(format string, a ...any) {
	if c.Progress != nil {
		c.Progress(fmt.Sprintf(format, a...))
	}
}

// runReparamRow measures one problem in every form.
func runReparamRow(ctx context.Context, cfg ReparamConfig, p reparamProblem) (*ReparamRow, error) {
	row := &ReparamRow{Name: p.name, Group: p.groups, NUTS: map[string]*NUTSForm{}, VI: map[string]*VIForm{}}
	ng := len(p.spec.Groups)
	all := func(l float64) []float64 {
		v := make([]float64, ng)
		for i := range v {
			v[i] = l
		}
		return v
	}
	fail := func(err error) (*ReparamRow, error) {
		row.Err = err.Error()
		cfg.progress("%s: %v", p.name, err)
		if ctx.Err() != nil {
			return row, err
		}
		return row, nil
	}
	t0 := time.Now()
	choice, err := p.spec.Choose(ctx, reparam.Pilot{Seed: cfg.Seed})
	if err != nil {
		return fail(err)
	}
	row.PilotWall, row.PilotGrads = time.Since(t0), choice.GradEvals
	row.ChoiceA, row.LambdaA = choice.String(), choice.Lambda()
	t0 = time.Now()
	vr := cfg.viRecipe(cfg.Seed)
	vip, err := p.spec.LearnLambda(ctx, reparam.VIPConfig{Steps: cfg.VIPSteps, Seed: cfg.Seed, Recipe: &vr})
	if err != nil {
		return fail(err)
	}
	row.VIPWall, row.VIPGrads = time.Since(t0), vip.GradEvals
	row.ChoiceB, row.LambdaB = vip.String(), vip.Lambda
	cfg.progress("%s: pilot %s; VIP %s", p.name, strings.TrimSpace(row.ChoiceA), strings.TrimSpace(row.ChoiceB))

	lambdas := map[string][]float64{"CP": all(1), "NCP": all(0), "auto (a)": row.LambdaA, "auto (b)": row.LambdaB}
	models := map[string]*model.Model{}
	for f, l := range lambdas {
		if models[f], err = p.spec.Model(l); err != nil {
			return fail(err)
		}
	}
	row.Dim = models["CP"].Dim()
	hmc := mcmc.Config{Chains: cfg.Chains, Warmup: cfg.Warmup, Draws: cfg.Draws, Seed: cfg.Seed}
	draws := map[string][][]float64{}
	for _, f := range reparamForms {
		var res *mcmc.Result
		var m *model.Model
		t0 := time.Now()
		if f == "mixture" {
			m = models["CP"]
			to, err1 := p.spec.Converter(all(1), all(0))
			from, err2 := p.spec.Converter(all(0), all(1))
			if err1 != nil || err2 != nil {
				return fail(fmt.Errorf("bench: reparam: %v %v", err1, err2))
			}
			mh := hmc
			mh.Metric = mcmc.Unit // SampleMixture supports the unit metric only
			mr, err := mcmc.SampleMixture(ctx, m, mcmc.Mixture{Alt: mcmc.Reparam{Target: models["NCP"], To: to.Convert, From: from.Convert}, Prob: 0.5}, mh)
			if err != nil {
				row.NUTS[f] = &NUTSForm{Err: err.Error()}
				cfg.progress("%s: NUTS %s: %v", p.name, f, err)
				continue
			}
			res = mr.Result
		} else {
			m = models[f]
			if res, err = mcmc.Sample(ctx, m, hmc); err != nil {
				row.NUTS[f] = &NUTSForm{Err: err.Error()}
				cfg.progress("%s: NUTS %s: %v", p.name, f, err)
				if ctx.Err() != nil {
					return row, err
				}
				continue
			}
		}
		nf, d := measureNUTS(res, m)
		nf.Wall = time.Since(t0)
		row.NUTS[f] = nf
		draws[f] = d
		cfg.progress("%s: NUTS %s: min ESS %.0f, ESS/grad %.3g", p.name, f, nf.MinESS, nf.ESSPerGrad)
	}
	// The W1 reference: exact draws where the posterior is known, else the NUTS draws of the
	// better of CP and NCP by min ESS.
	var ref [][]float64
	if p.exact != nil {
		ref = p.exact(rng.New(cfg.Seed, 99), 10000)
		row.Reference = "exact posterior (10,000 independent draws)"
	} else {
		best := "CP"
		if row.NUTS["NCP"].MinESS > row.NUTS["CP"].MinESS || row.NUTS["CP"].Err != "" {
			best = "NCP"
		}
		ref = draws[best]
		row.Reference = fmt.Sprintf("NUTS %s draws (min ESS %.0f)", best, row.NUTS[best].MinESS)
	}
	for _, f := range reparamForms {
		if f == "mixture" {
			continue
		}
		row.VI[f] = runVIForm(ctx, cfg, models[f], ref, cfg.Seed)
		cfg.progress("%s: VI %s: W1/sd %.3g, k̂ %.2f", p.name, f, row.VI[f].W1SD, row.VI[f].KHat)
	}
	if p.noise && cfg.NoiseSeeds > 1 {
		for k, f := range []string{"CP", "NCP"} {
			var ess, w1 []float64
			for s := range cfg.NoiseSeeds {
				h := hmc
				h.Seed = cfg.Seed + uint64(s)
				res, err := mcmc.Sample(ctx, models[f], h)
				if err != nil {
					return fail(err)
				}
				nf, _ := measureNUTS(res, models[f])
				ess = append(ess, nf.ESSPerGrad)
				w1 = append(w1, runVIForm(ctx, cfg, models[f], ref, cfg.Seed+uint64(s)).W1SD)
			}
			row.NoiseESS[k] = slices.Max(ess) / slices.Min(ess)
			row.NoiseW1[k] = slices.Max(w1) / slices.Min(w1)
		}
		cfg.progress("%s: seed spread ESS/grad CP %.2f NCP %.2f, W1/sd CP %.2f NCP %.2f", p.name, row.NoiseESS[0], row.NoiseESS[1], row.NoiseW1[0], row.NoiseW1[1])
	}
	return row, nil
}

// quantities returns the indices of m's columns in original coordinates: every column but the
// groups' sampled coordinates (named *_tilde).
func quantities(m *model.Model) []int {
	var idx []int
	for i, n := range m.Columns() {
		base, _, _ := strings.Cut(n, "[")
		if !strings.HasSuffix(base, "_tilde") {
			idx = append(idx, i)
		}
	}
	return idx
}

// measureNUTS returns the ESS summary of res over m's original-coordinate quantities and the
// pooled draws of each quantity.
func measureNUTS(res *mcmc.Result, m *model.Model) (*NUTSForm, [][]float64) {
	d := res.Draws(m.Columns(), m.Row)
	nf := &NUTSForm{Grads: res.GradEvals, MinESS: math.Inf(1)}
	var pooled [][]float64
	for _, j := range quantities(m) {
		v := d.Var(j)
		nf.MinESS = math.Min(nf.MinESS, diag.ESSBulk(v))
		nf.MaxRhat = math.Max(nf.MaxRhat, diag.Rhat(v))
		pooled = append(pooled, slices.Concat(v...))
	}
	nf.ESSPerGrad = nf.MinESS / float64(nf.Grads)
	return nf, pooled
}

// viRecipe is the mean-field recipe of every VI fit (and of LearnLambda's starts).
func (c ReparamConfig) viRecipe(seed uint64) fit.Recipe {
	r := fit.DefaultRecipe(fit.KindMeanField)
	r.Seed = seed
	if c.VIStarts > 0 {
		r.Init.Starts, r.Init.StartsMax = c.VIStarts, c.VIStarts
	}
	if c.VIMaxIter > 0 {
		r.MaxIter = c.VIMaxIter
	}
	return r
}

// runVIForm fits mean-field VI (viRecipe) to m and measures W1/sd against ref.
func runVIForm(ctx context.Context, cfg ReparamConfig, m *model.Model, ref [][]float64, seed uint64) *VIForm {
	r := cfg.viRecipe(seed)
	t0 := time.Now()
	res, err := fit.Run(ctx, m, r)
	if err != nil {
		return &VIForm{Err: err.Error(), W1SD: math.NaN(), KHat: math.NaN()}
	}
	vf := &VIForm{KHat: res.KHat, Grads: res.GradEvals, Wall: time.Since(t0)}
	d := m.Dim()
	n := len(res.Draws) / d
	cols := quantities(m)
	vals := make([][]float64, len(cols))
	row := make([]float64, len(m.Columns()))
	for i := range n {
		m.Row(row, res.Draws[i*d:(i+1)*d])
		for k, j := range cols {
			vals[k] = append(vals[k], row[j])
		}
	}
	var s float64
	for k := range cols {
		s += diag.W1(vals[k], ref[k], 0) / sd(ref[k])
	}
	vf.W1SD = s / float64(len(cols))
	return vf
}

func sd(x []float64) float64 {
	var m, v float64
	for _, a := range x {
		m += a
	}
	m /= float64(len(x))
	for _, a := range x {
		v += (a - m) * (a - m)
	}
	return math.Sqrt(v / float64(len(x)-1))
}

// The eight schools data (Rubin 1981), as posteriordb's eight_schools.
var (
	schoolsY     = []float64{28, 8, -3, 7, -1, 1, 18, 12}
	schoolsSigma = []float64{15, 10, 16, 11, 9, 11, 10, 18}
)

// eightSchoolsSpec: theta ~ N(mu, tau) declared as a group; y ~ N(theta, sigma),
// mu ~ N(0, 5), tau ~ half-Cauchy(0, 5) in Density.
func eightSchoolsSpec() *reparam.Spec {
	lay, _ := model.NewLayout(
		model.Param{Name: "theta", Dims: []int{8}},
		model.Param{Name: "mu"},
		model.Param{Name: "tau", Constraint: bijector.Lower(1, 0)},
	)
	return &reparam.Spec{
		Layout: lay,
		Density: func(t *ad.Tape, p []ad.Var) ad.Var {
			lp := density.Normal(t, t.ConstRef(schoolsY), p[0], t.ConstRef(schoolsSigma))
			return t.Add(lp, t.Add(density.Normal(t, p[1], t.Const(0), t.Const(5)), density.Cauchy(t, p[2], t.Const(0), t.Const(5))))
		},
		Groups: []reparam.Group{{Param: "theta",
			Loc:   func(t *ad.Tape, p []ad.Var) ad.Var { return p[1] },
			Scale: func(t *ad.Tape, p []ad.Var) ad.Var { return p[2] }}},
	}
}

// toySpec is zoo.DNCPToy as a Spec: z1 ~ N(0, 1) and z2 ~ N(z1, σz) are groups, x1 = 0.5 and
// x2 = 1.5 observed with noise σx. Its posterior is Gaussian (DNCPToy.Correlations' precision),
// so the reference is exact.
func toySpec(sx, sz float64) reparamProblem {
	lay, _ := model.NewLayout(model.Param{Name: "z1"}, model.Param{Name: "z2"})
	x := [2]float64{0.5, 1.5}
	spec := &reparam.Spec{
		Layout: lay,
		Density: func(t *ad.Tape, p []ad.Var) ad.Var {
			return t.Add(density.Normal(t, t.Const(x[0]), p[0], t.Const(sx)), density.Normal(t, t.Const(x[1]), p[1], t.Const(sx)))
		},
		Groups: []reparam.Group{
			{Param: "z1", Loc: func(t *ad.Tape, p []ad.Var) ad.Var { return t.Const(0) }, Scale: func(t *ad.Tape, p []ad.Var) ad.Var { return t.Const(1) }},
			{Param: "z2", Loc: func(t *ad.Tape, p []ad.Var) ad.Var { return p[0] }, Scale: func(t *ad.Tape, p []ad.Var) ad.Var { return t.Const(sz) }},
		},
	}
	// Posterior precision over (z1, z2): [[1 + a + 1/s, −1/s], [−1/s, 1/s + a]], a = 1/σx², s = σz²;
	// mean = P⁻¹·(a·x1, a·x2).
	a, s := 1/(sx*sx), sz*sz
	p11, p12, p22 := 1+a+1/s, -1/s, 1/s+a
	det := p11*p22 - p12*p12
	c11, c12, c22 := p22/det, -p12/det, p11/det
	m1, m2 := c11*a*x[0]+c12*a*x[1], c12*a*x[0]+c22*a*x[1]
	l11 := math.Sqrt(c11)
	l21 := c12 / l11
	l22 := math.Sqrt(c22 - l21*l21)
	exact := func(r *rng.Stream, n int) [][]float64 {
		out := [][]float64{make([]float64, n), make([]float64, n)}
		for i := range n {
			e1, e2 := r.NormFloat64(), r.NormFloat64()
			out[0][i], out[1][i] = m1+l11*e1, m2+l21*e1+l22*e2
		}
		return out
	}
	return reparamProblem{name: fmt.Sprintf("toy σx=%g σz=%g", sx, sz), groups: "z1 ~ N(0, 1), z2 ~ N(z1, σz)", spec: spec, exact: exact, noise: true}
}

// dbnSpec is zoo.TanhDBN (same parameters and data for a seed) as a Spec with one group per
// time step: z_1 ~ N(0, I), z_t ~ N(tanh(W_z z_{t−1} + b_z), σ_z² I), x_t ~ Bernoulli(sigmoid(W_x z_t)).
func dbnSpec(T, K, P int, sz float64, seed uint64) (reparamProblem, error) {
	m, err := zoo.NewTanhDBN(T, K, P, sz, seed)
	if err != nil {
		return reparamProblem{}, fmt.Errorf("bench: reparam: %w", err)
	}
	ps := make([]model.Param, T)
	for t := range T {
		ps[t] = model.Param{Name: fmt.Sprintf("z%d", t+1), Dims: []int{K}}
	}
	lay, err := model.NewLayout(ps...)
	if err != nil {
		return reparamProblem{}, fmt.Errorf("bench: reparam: %w", err)
	}
	wz, wx := ad.Mat{Rows: K, Cols: K, Data: m.Wz}, ad.Mat{Rows: P, Cols: K, Data: m.Wx}
	y := make([][]int, T)
	for t := range T {
		y[t] = make([]int, P)
		for p := range P {
			y[t][p] = int(m.X[t*P+p])
		}
	}
	spec := &reparam.Spec{Layout: lay, Density: func(t *ad.Tape, p []ad.Var) ad.Var {
		lp := t.Const(0)
		for s := range T {
			lp = t.Add(lp, density.BernoulliLogit(t, y[s], t.MatVecC(wx, p[s])))
		}
		return lp
	}}
	for s := range T {
		g := reparam.Group{Param: ps[s].Name}
		if s == 0 {
			g.Loc = func(t *ad.Tape, p []ad.Var) ad.Var { return t.Const(0) }
			g.Scale = func(t *ad.Tape, p []ad.Var) ad.Var { return t.Const(1) }
		} else {
			g.Loc = func(t *ad.Tape, p []ad.Var) ad.Var { return t.Tanh(t.Add(t.MatVecC(wz, p[s-1]), t.ConstRef(m.Bz))) }
			g.Scale = func(t *ad.Tape, p []ad.Var) ad.Var { return t.Const(sz) }
		}
		spec.Groups = append(spec.Groups, g)
	}
	return reparamProblem{name: fmt.Sprintf("tanh DBN σz=%g", sz), groups: fmt.Sprintf("%d groups z_t (%d each)", T, K), spec: spec}, nil
}

// stanGroups are the group-level priors of DefaultReparamPosteriors: the group parameter, and
// the location and scale parameters ("" location: 0; "sqrt:v": the scale is √v).
var stanGroups = map[string][3]string{
	"eight_schools_centered":                {"theta", "mu", "tau"},
	"radon_hierarchical_intercept_centered": {"alpha", "mu_alpha", "sigma_alpha"},
	"radon_variable_intercept_centered":     {"alpha", "mu_alpha", "sigma_alpha"},
	"seeds_centered_model":                  {"c", "", "sigma"},
	"surgical_model":                        {"b", "mu", "sqrt:sigmasq"},
}

// stanReparam compiles a posterior's centred Stan program and declares its group: Density is
// the program's log density minus the group's normal prior, which the Spec adds back in the
// chosen coordinates (package stan keeps the `~` statements' normalising constants, so the
// difference is exact, not only up to a constant).
func stanReparam(full, name string) (reparamProblem, error) {
	def, err := model.LoadPosteriorInfo(filepath.Join(full, "posteriors", name+".json"))
	if err != nil {
		return reparamProblem{}, fmt.Errorf("bench: reparam: %w", err)
	}
	grp, ok := stanGroups[def.ModelName]
	if !ok {
		return reparamProblem{}, fmt.Errorf("bench: reparam: posterior %s: no group declared for model %s", name, def.ModelName)
	}
	prog := filepath.Join(full, "models", def.ModelName+".stan")
	src, err := os.ReadFile(prog)
	if err != nil {
		return reparamProblem{}, fmt.Errorf("bench: reparam: %w", err)
	}
	info := zoo.Info{Name: name, Posterior: name, Data: def.DataName}
	data, err := model.LoadData(info.DataPath(full))
	if err != nil {
		return reparamProblem{}, fmt.Errorf("bench: reparam: %w", err)
	}
	m, err := stan.Compile(prog, src, data)
	if err != nil {
		return reparamProblem{}, fmt.Errorf("bench: reparam: posterior %s: %w", name, err)
	}
	sname, sqrt := strings.CutPrefix(grp[2], "sqrt:")
	gi, li, si := m.Layout.Index(grp[0]), m.Layout.Index(grp[1]), m.Layout.Index(sname)
	if gi < 0 || si < 0 || (grp[1] != "" && li < 0) {
		return reparamProblem{}, fmt.Errorf("bench: reparam: posterior %s: parameters %v not all in the program", name, grp)
	}
	loc := func(t *ad.Tape, p []ad.Var) ad.Var {
		if li < 0 {
			return t.Const(0)
		}
		return p[li]
	}
	scale := func(t *ad.Tape, p []ad.Var) ad.Var {
		if sqrt {
			return t.Sqrt(p[si])
		}
		return p[si]
	}
	spec := &reparam.Spec{
		Layout: m.Layout,
		Density: func(t *ad.Tape, p []ad.Var) ad.Var {
			return t.Sub(m.Density(t, p), density.Normal(t, p[gi], loc(t, p), scale(t, p)))
		},
		Groups:  []reparam.Group{{Param: grp[0], Loc: loc, Scale: scale}},
		Derived: m.Derived, Derive: m.Derive,
	}
	lname := grp[1]
	if lname == "" {
		lname = "0"
	}
	return reparamProblem{name: name, groups: fmt.Sprintf("%s ~ N(%s, %s)", grp[0], lname, grp[2]), spec: spec}, nil
}

// Markdown writes the report.
func (r *ReparamReport) Markdown(w io.Writer, h resultmd.Header) error {
	c := r.Config
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	if err := resultmd.Write(w, "Reparameterisation as a model feature: CP, NCP, mixture and the automatic choices", h); err != nil {
		return err
	}
	p("- NUTS (every form): %d chains × (%d warmup + %d draws), seed %d, diagonal metric (mcmc defaults). ESS = min over the quantities in original coordinates (the groups' θ and every other parameter, constrained) of the rank-normalised bulk ESS over all chains; ESS/grad divides it by every gradient evaluation of the run, warmup included.\n", c.Chains, c.Warmup, c.Draws, c.Seed)
	p("- Mixture: Kingma & Welling's (2014, §4) proposal, a CP NUTS transition with probability 0.5, else an NCP one (`mcmc.SampleMixture`, the two coordinate systems mapped by `reparam.Converter`), with the unit metric (the only one SampleMixture supports; the other forms adapt a diagonal metric). NUTS only.\n")
	p("- auto (a): `reparam.Spec.Choose`: per group, NCP iff the median over a pilot's 20 points × the group's elements of c_F·σ²·(−β) is below 1 (σ the group's scale, β the curvature of the rest of the log density in θ, c_F = 1 for a normal); pilot: NUTS on the all-NCP model, 1 chain, 150 warmup + 100 draws. The pilot's gradients are NOT in ESS/grad (column \"pilot grads\").\n")
	p("- auto (b): `reparam.Spec.LearnLambda`: VIP (Gorinova, Moore & Hoffman 2020) from λ = 0.1 and 0.9, each started from a mean-field `fit.Run` at that λ (the VI recipe below), then %d joint Adam steps (4 draws each) on (q, λ); the start with the higher ELBO wins. Its gradients are NOT in ESS/grad (column \"VIP grads\"). The NUTS and VI runs of auto (b) use the learned λ fixed.\n", c.VIPSteps)
	p("- VI (every form but the mixture): `fit.Run` with `fit.DefaultRecipe(\"meanfield\")`%s, seed %d; W1/sd = mean over the original-coordinate quantities of W1(VI draws, reference)/sd(reference) on 1,000 VI draws; k̂ from fit. The reference is per row (column \"reference\").\n", starts(c.VIStarts), c.Seed)
	p("- Noise: on the rows with a seed spread, CP and NCP were rerun under NUTS and VI with seeds %d…%d; the spread is max/min over the seeds. \"Within noise\" below: auto may fall short of the better of CP and NCP on a row by at most the noise factor, the largest seed spread of the better form (of CP and NCP, by the seed-%d run) over the rerun rows, for NUTS ESS/grad and VI W1/sd separately. (The worse form's spread is left out: CP on a funnel spreads by an order of magnitude, and it is never the form to match.)\n\n", c.Seed, c.Seed+uint64(c.NoiseSeeds)-1, c.Seed)

	fN, fV := noiseFactors(r.Rows)
	p("## NUTS: min ESS per 1000 gradients\n\n| problem | groups | dim | CP | NCP | mixture | auto (a) | auto (b) | pilot grads (a) / VIP grads (b) | auto (a) within noise of best of CP/NCP? | auto (b)? | max R̂ CP / NCP |\n|---|---|---:|---:|---:|---:|---:|---:|---|---|---|---|\n")
	for _, row := range r.Rows {
		if row.Err != "" {
			p("| %s | %s | | error: %s | | | | | | | | |\n", row.Name, row.Group, row.Err)
			continue
		}
		p("| %s | %s | %d |", row.Name, row.Group, row.Dim)
		for _, f := range reparamForms {
			p(" %s |", fmtNUTS(row.NUTS[f]))
		}
		best := math.Max(essOf(row.NUTS["CP"]), essOf(row.NUTS["NCP"]))
		p(" %d / %d | %s | %s | %s / %s |\n", row.PilotGrads, row.VIPGrads,
			verdict(essOf(row.NUTS["auto (a)"]) >= best/fN, essOf(row.NUTS["auto (a)"])/best),
			verdict(essOf(row.NUTS["auto (b)"]) >= best/fN, essOf(row.NUTS["auto (b)"])/best),
			rhat(row.NUTS["CP"]), rhat(row.NUTS["NCP"]))
	}
	p("\nNoise factor (largest seed spread of the better form's NUTS ESS/grad): %.2f. The ratio in the verdict columns is auto / best.\n\n", fN)
	p("## Mean-field VI: W1/sd (k̂)\n\n| problem | CP | NCP | auto (a) | auto (b) | auto (a) within noise of best? | auto (b)? | reference |\n|---|---:|---:|---:|---:|---|---|---|\n")
	for _, row := range r.Rows {
		if row.Err != "" {
			continue
		}
		p("| %s |", row.Name)
		for _, f := range []string{"CP", "NCP", "auto (a)", "auto (b)"} {
			p(" %s |", fmtVI(row.VI[f]))
		}
		best := math.Min(w1Of(row.VI["CP"]), w1Of(row.VI["NCP"]))
		p(" %s | %s | %s |\n",
			verdict(w1Of(row.VI["auto (a)"]) <= best*fV, w1Of(row.VI["auto (a)"])/best),
			verdict(w1Of(row.VI["auto (b)"]) <= best*fV, w1Of(row.VI["auto (b)"])/best), row.Reference)
	}
	p("\nNoise factor (largest seed spread of the better form's VI W1/sd): %.2f. The ratio in the verdict columns is auto / best (lower is better).\n\n", fV)
	p("## Seed spreads (max/min over seeds)\n\n| problem | NUTS ESS/grad CP | NCP | VI W1/sd CP | NCP |\n|---|---:|---:|---:|---:|\n")
	for _, row := range r.Rows {
		if row.NoiseESS[0] > 0 {
			p("| %s | %.2f | %.2f | %.2f | %.2f |\n", row.Name, row.NoiseESS[0], row.NoiseESS[1], row.NoiseW1[0], row.NoiseW1[1])
		}
	}
	p("\n## Wall time (s): NUTS / VI per form; pilot and VIP\n\n| problem | CP | NCP | mixture | auto (a) | auto (b) | pilot (a) | VIP (b) |\n|---|---|---|---|---|---|---:|---:|\n")
	for _, row := range r.Rows {
		if row.Err != "" {
			continue
		}
		p("| %s |", row.Name)
		for _, f := range reparamForms {
			n, v := row.NUTS[f], row.VI[f]
			ns, vs := "—", "—"
			if n != nil && n.Err == "" {
				ns = fmt.Sprintf("%.1f", n.Wall.Seconds())
			}
			if v != nil && v.Err == "" {
				vs = fmt.Sprintf("%.1f", v.Wall.Seconds())
			}
			p(" %s / %s |", ns, vs)
		}
		p(" %.1f | %.1f |\n", row.PilotWall.Seconds(), row.VIPWall.Seconds())
	}
	p("\n## Which form each group got, and why\n\n")
	for _, row := range r.Rows {
		if row.ChoiceA == "" || row.ChoiceB == "" {
			continue
		}
		p("**%s**\n\n- auto (a):\n", row.Name)
		for _, l := range strings.Split(strings.TrimSpace(row.ChoiceA), "\n") {
			p("  - %s\n", l)
		}
		p("- auto (b):\n")
		for _, l := range strings.Split(strings.TrimSpace(row.ChoiceB), "\n") {
			p("  - %s\n", l)
		}
		p("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// noiseFactors returns the largest seed spread of the better of CP and NCP over the rows that
// were rerun: NUTS ESS/grad (higher is better) and VI W1/sd (lower is better).
func noiseFactors(rows []*ReparamRow) (fN, fV float64) {
	fN, fV = 1, 1
	for _, row := range rows {
		if row.NoiseESS[0] == 0 || row.Err != "" {
			continue
		}
		k := 0
		if essOf(row.NUTS["NCP"]) > essOf(row.NUTS["CP"]) {
			k = 1
		}
		fN = math.Max(fN, row.NoiseESS[k])
		k = 0
		if w1Of(row.VI["NCP"]) < w1Of(row.VI["CP"]) {
			k = 1
		}
		fV = math.Max(fV, row.NoiseW1[k])
	}
	return fN, fV
}

func starts(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" with %d Laplace starts", n)
}

func essOf(n *NUTSForm) float64 {
	if n == nil || n.Err != "" {
		return 0
	}
	return n.ESSPerGrad
}

func w1Of(v *VIForm) float64 {
	if v == nil || v.Err != "" {
		return math.Inf(1)
	}
	return v.W1SD
}

func fmtNUTS(n *NUTSForm) string {
	if n == nil {
		return "—"
	}
	if n.Err != "" {
		return "error"
	}
	return fmt.Sprintf("%.3g", 1000*n.ESSPerGrad)
}

func fmtVI(v *VIForm) string {
	if v == nil {
		return "—"
	}
	if v.Err != "" {
		return "error"
	}
	return fmt.Sprintf("%.3f (%.2f)", v.W1SD, v.KHat)
}

func rhat(n *NUTSForm) string {
	if n == nil || n.Err != "" {
		return "—"
	}
	return fmt.Sprintf("%.3f", n.MaxRhat)
}

func verdict(ok bool, ratio float64) string {
	if ok {
		return fmt.Sprintf("yes (%.2f)", ratio)
	}
	return fmt.Sprintf("NO (%.2f)", ratio)
}
