package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/internal/textsafe"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/output"
)

// fitFlags are the options of vigo fit.
type fitFlags struct {
	data, posteriordb string
	family            string
	rank              int
	seed              uint64
	draws             int
	out               string
	reference         string
	iter, samples     int
	lr, tol           float64
	workers           int
	quiet             bool
	psisResample      bool
	init              string // CmdStan init JSON
	estimator         string
	k                 int
	optimizer         string
	recipe            string // a Recipe JSON file (or a fit.json holding one)
	starts            int    // mode searches of the multi-start initialisation (0: the recipe's)

	// flows and auto
	layers     int
	hidden     []int
	degree     int
	activation string
	bounded    bool
	affine     string
	baseDF     float64
	warm       bool
	budget     time.Duration

	// ensembles
	ensemble        int
	ensembleL       int
	ensembleWeights string
}

// familyAuto is --family auto.
const familyAuto = "auto"

// familyNames lists the values of --family.
var familyNames = strings.Join(fit.Kinds(), ", ") + " or " + familyAuto

// minDiagDraws is the number of draws k̂ is computed on at least (issue 3: ≥ 1000).
const minDiagDraws = 1000

// maxPanels caps the panels of marginals.png.
const maxPanels = 36

func newFitCmd(reg *registry) *cobra.Command {
	var f fitFlags
	cmd := &cobra.Command{
		Use:   "fit [MODEL]",
		Short: "Fit a zoo model by variational inference and write draws, summaries, the fit and plots",
		Long: `vigo fit fits a variational approximation to the posterior of a zoo model (default:
eight_schools, whose data is embedded) and checks it with PSIS k̂.

Families (--family):
  meanfield, fullrank, lowrank   Gaussians, started at the Laplace approximation
  maf        2 inverse autoregressive layers (MADE 32×32, tanh, direct connections)
  realnvp    4 affine coupling layers (MLP 32×32, tanh)
  bernstein  triangular Bernstein flow of BF-VI (degree 20, MADE 10×10, tanh, linear tails)
             followed by one affine autoregressive layer (--affine none leaves it out)
  auto       meanfield, fullrank, then bernstein, then maf, until the family leading on
             ELBO has k̂ below the PSIS threshold (0.67 with 1000 draws) and covers every
             mode the starts found, or --budget is spent; a Gaussian that misses modes is
             followed by an ensemble with one member per mode; keeps the highest-ELBO family
             that passes (else the highest ELBO, with a warning) and prints a line per stage
             and why it chose it
Every fit starts with --starts mode searches (default 16: from --init or 0, then from
uniform(−r, r) draws on the unconstrained scale, r = 2 as Stan initialises, then 4, 8 in
turn; doubled up to 64 while a
mode was reached by one start only) and starts q at the mode of highest Laplace evidence; the verdict says how many modes the starts found, and is never
"reliable" or "usable" when q misses one that holds mass (k̂ cannot see mass q does not
cover).
Flows start at the Laplace approximation, in its whitened coordinates (--warm fits a
full-rank Gaussian first and starts the flow exactly at it). --layers, --hidden, --activation, --degree, --bounded and --affine change the
flows' structure; --base-df ν gives a flow a Student-t base with ν degrees of freedom (heavier
tails) instead of the standard normal. Flows default to the STL gradient with 12 antithetic draws
per step (realnvp: 16 independent), step size 0.01 (maf 0.005) and the noise rule (a step-size cut
once the ELBO's gain over 10 tracking estimates, maf and realnvp 8, is not significantly above 0.01 nats),
for about a tenth of the gradient evaluations of the earlier defaults (bench/results/flows.md).

It writes into --out:
  draws.csv          Stan CSV: lp__ (log density of the unconstrained draw, Jacobian and
                     constants included), lp_approx__ (log q of the draw), then the Stan
                     parameters on the constrained scale (theta_trans.1, …) and the model's
                     transformed parameters (theta.1, …); lp__ − lp_approx__ are the PSIS
                     log weights
  summary.txt|csv|json   per-variable summary with k̂ and ELBO ± MCSE
  fit.json           the approximation; vigo draw samples it without the data
  elbo.png           the ELBO trace
  marginals.png      marginal densities (reference draws overlaid with --reference)

Exit codes: 0 converged, 3 not converged (iteration cap), 1 error, 130 cancelled (Ctrl-C or
SIGTERM; a second one exits at once): the partial result is written to --out, or to
--out/cancelled when --out holds an earlier fit.json, which is kept.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := "eight_schools"
			if len(args) == 1 {
				name = args[0]
			}
			if f.recipe != "" && !cmd.Flags().Changed("family") {
				r, err := readRecipe(f.recipe)
				if err != nil {
					return err
				}
				f.family = r.Family.Kind
			}
			return runFit(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), reg, name, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.data, "data", "", "data file for the model (CmdStan JSON, .json.zip or CSV with a header)")
	fl.StringVar(&f.posteriordb, "posteriordb", "", datadir.PosteriorDBHelp+"; for models without embedded data")
	fl.StringVar(&f.family, "family", "meanfield", "variational family: "+familyNames)
	fl.IntVar(&f.rank, "rank", 0, "rank of the lowrank family (default ⌈√d⌉)")
	fl.IntVar(&f.layers, "layers", 0, "flow layers (default maf 2, realnvp 4, bernstein 1)")
	fl.IntSliceVar(&f.hidden, "hidden", nil, "hidden layer sizes of the flow's conditioners, e.g. 32,32 (default maf and realnvp 32,32; bernstein 10,10)")
	fl.IntVar(&f.degree, "degree", 0, "degree M of the Bernstein polynomials (default 20)")
	fl.StringVar(&f.activation, "activation", "", "activation of the flow's conditioners: tanh (default), relu or linear")
	fl.BoolVar(&f.bounded, "bounded", false, "bernstein: the BF-VI paper's bounded map (compact support) instead of linear tails")
	fl.StringVar(&f.affine, "affine", "", "bernstein: the affine autoregressive layer: last (after the Bernstein layers: conditional scales that change fast, as in funnels; the default), first, or none")
	fl.Float64Var(&f.baseDF, "base-df", 0, "flows: Student-t base with this many degrees of freedom, 1 to 1000 (default 0: standard-normal base)")
	fl.BoolVar(&f.warm, "warm", false, "flows: fit a full-rank Gaussian first and start the flow at it (default: start at the Laplace approximation, as fit.DefaultRecipe's flows do)")
	fl.DurationVar(&f.budget, "budget", 0, "auto: wall-time budget of the whole search, e.g. 5m (default none)")
	fl.Uint64Var(&f.seed, "seed", 1, "random seed; the same seed gives byte-identical draws.csv")
	fl.IntVar(&f.draws, "draws", 1000, "draws written to draws.csv (k̂ uses at least 1000)")
	fl.BoolVar(&f.psisResample, "psis-resample", false, "write draws resampled (with replacement) by their PSIS weights when k̂ is below its threshold, as Stan's Pathfinder does; the summary then describes the PSIS-corrected approximation")
	fl.StringVar(&f.out, "out", "vigo_out", "output directory")
	fl.StringVar(&f.reference, "reference", "", "reference draws (posteriordb draws .json.zip) to compare with")
	fl.IntVar(&f.iter, "iter", 0, "iteration cap (default 20000)")
	fl.IntVar(&f.samples, "samples", 0, fmt.Sprintf("Monte Carlo draws per gradient step (default 8; maf and bernstein %d, realnvp %d)", fit.FlowDraws, fit.FlowDrawsRealNVP))
	fl.Float64Var(&f.lr, "lr", 0, fmt.Sprintf("Adam step size in preconditioned coordinates (default 0.02; realnvp and bernstein %g, maf %g)", fit.FlowLRFlow, fit.FlowLRMAF))
	fl.Float64Var(&f.tol, "tol", 0, fmt.Sprintf("plateau tolerance of the stopping rule in nats (default 0.02; flows %g, the noise rule's)", fit.FlowNoiseTol))
	fl.IntVar(&f.workers, "workers", 0, "goroutines per step, at most 4 (default GOMAXPROCS); results do not depend on it")
	fl.IntVar(&f.starts, "starts", 0, fmt.Sprintf("mode searches before the fit: from --init (or 0), then from uniform(−r, r) draws on the unconstrained scale (r = 2, 4, 8 in turn), doubled up to %d while a mode was reached by one start only; q starts at the mode of highest Laplace evidence and the verdict reports the modes found (default %d; 1: one search, no check for other modes)", fit.DefaultStartsMax, fit.DefaultStarts))
	fl.StringVar(&f.init, "init", "", "initial values: a CmdStan init JSON file with every parameter's constrained value by name; the fit's Laplace mode search starts there")
	fl.StringVar(&f.estimator, "estimator", "", "gradient estimator: elbo (plain reparameterisation), stl, iwelbo or dreg (default stl)")
	fl.IntVar(&f.k, "k", 0, "iwelbo and dreg: draws per importance-weighted group (default 1; with --estimator iwelbo|dreg, 4)")
	fl.StringVar(&f.optimizer, "optimizer", "", "optimiser: adam (default) or rmsprop (Keras's, as the BF-VI paper uses)")
	fl.StringVar(&f.recipe, "recipe", "", "run the fit described by this Recipe JSON file (or the recipe stored in a fit.json); other fit flags change its fields")
	fl.IntVar(&f.ensemble, "ensemble", 0, fmt.Sprintf("fit an ensemble of S members of the family (seeds derived from --seed; 1 to %d) and use their mixture, scored by MISELBO (0: one fit)", fit.MaxEnsembleMembers))
	fl.IntVar(&f.ensembleL, "ensemble-l", 0, "--ensemble: draws per member in each importance-weighted group of MISELBO_L and the mean IWELBO_L (default 10)")
	fl.StringVar(&f.ensembleWeights, "ensemble-weights", "", "--ensemble: mixture weights, uniform (default, the balance heuristic) or evidence (maximise the mixture's ELBO over the weights)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress output")
	return cmd
}

// flowOptions are the flow structure flags.
func flowOptions(f fitFlags) fit.FlowOptions {
	return fit.FlowOptions{Layers: f.layers, Hidden: f.hidden, Degree: f.degree, Activation: f.activation,
		Bounded: f.bounded, Affine: f.affine, BaseDF: f.baseDF}
}

// fitRecipe turns the flags into the Recipe of --family (not auto): DefaultRecipe(family), or
// the --recipe file, with every flag that was given written into it; init is the unconstrained
// initial point of --init (nil without it).
func fitRecipe(f fitFlags, init []float64) (fit.Recipe, error) {
	r := fit.DefaultRecipe(f.family)
	if f.recipe != "" {
		var err error
		if r, err = readRecipe(f.recipe); err != nil {
			return r, err
		}
	}
	if fit.IsFlowKind(r.Family.Kind) {
		fo := flowOptions(f)
		if r.Family.Flow != nil { // the default's or the --recipe file's structure, with the flags given
			fo = mergeFlow(*r.Family.Flow, fo)
		}
		r.Family.Flow = &fo
		if f.warm {
			r.WarmStart = fit.WarmFullRank
		}
	}
	r.Family.Rank = max(r.Family.Rank, f.rank)
	applyCommon(&r, f, init)
	applyEnsemble(&r, f)
	if err := r.Validate(); err != nil {
		return r, flagError(err, r.Family.Kind)
	}
	return r, nil
}

// recipeFlags maps a Recipe's JSON fields to the flags that set them.
func recipeFlags() map[string]string {
	return map[string]string{
		"ensemble.members": "--ensemble", "ensemble.l": "--ensemble-l", "ensemble.weights": "--ensemble-weights",
		"family.rank": "--rank", "objective.estimator": "--estimator", "objective.samples": "--samples",
		"objective.k": "--k", "objective.samples × objective.k": "--samples", "optimizer.name": "--optimizer",
		"optimizer.lr": "--lr", "stop.tol": "--tol", "max_iter": "--iter", "diag_draws": "--draws",
		"init.point": "--init", "init.starts": "--starts",
	}
}

// applyEnsemble writes --ensemble, --ensemble-l and --ensemble-weights into r (a --recipe's
// ensemble is kept and changed by the flags given).
func applyEnsemble(r *fit.Recipe, f fitFlags) {
	if f.ensemble != 0 {
		if r.Ensemble == nil {
			r.Ensemble = fit.DefaultEnsemble(f.ensemble)
		}
		r.Ensemble.Members = f.ensemble
	}
	if r.Ensemble == nil {
		return
	}
	if f.ensembleL != 0 {
		r.Ensemble.L = f.ensembleL
	}
	if f.ensembleWeights != "" {
		r.Ensemble.Weights = f.ensembleWeights
	}
}

// flagError names the flag behind a recipe error (fit.FieldError): "--rank: fit: …". A flow
// structure error (field family.flow, from fit.NewFlowFamily) names the flow flag its message
// is about, else --family KIND.
func flagError(err error, kind string) error {
	var fe *fit.FieldError
	if !errors.As(err, &fe) {
		return fmt.Errorf("flags: %w", err)
	}
	field, _, _ := strings.Cut(fe.Field, "[")
	if strings.HasPrefix(field, "family.flow") {
		msg := err.Error()
		for _, kw := range [][2]string{{"base degrees of freedom", "--base-df"}, {"affine", "--affine"}, {"hidden", "--hidden"},
			{"degree", "--degree"}, {"layers", "--layers"}, {"activation", "--activation"}} {
			if strings.Contains(msg, kw[0]) {
				return fmt.Errorf("%s (--family %s): %w", kw[1], kind, err)
			}
		}
		return fmt.Errorf("--family %s: %w", kind, err)
	}
	if flag, ok := recipeFlags()[field]; ok {
		return fmt.Errorf("%s: %w", flag, err)
	}
	return fmt.Errorf("flags: %w", err)
}

// applyCommon writes the flags every stage shares into r.
func applyCommon(r *fit.Recipe, f fitFlags, init []float64) {
	r.Seed = f.seed
	r.DiagDraws = max(f.draws, minDiagDraws)
	if f.psisResample {
		// Resample from 4× as many draws as are written, so fewer rows repeat.
		r.DiagDraws = max(4*f.draws, minDiagDraws)
	}
	if f.iter != 0 {
		r.MaxIter = f.iter
	}
	if f.samples != 0 {
		r.Objective.Samples = f.samples
	}
	if f.estimator != "" {
		r.Objective.Estimator = f.estimator
		if f.estimator == fit.EstIWELBO || f.estimator == fit.EstDReG {
			r.Objective.K = 4
		} else {
			r.Objective.K = 1
		}
	}
	if f.k != 0 {
		r.Objective.K = f.k
	}
	if f.optimizer != "" {
		r.Optimizer.Name = f.optimizer
	}
	if f.lr != 0 {
		r.Optimizer.LR = f.lr
	}
	if f.tol != 0 {
		r.Stop.Tol = f.tol
	}
	if init != nil {
		r.Init.Point = init
	}
	if f.starts != 0 {
		r.Init.Starts = f.starts
	}
}

// mergeFlow is the flow structure of a --recipe file with the structure flags given.
func mergeFlow(base, flags fit.FlowOptions) fit.FlowOptions {
	if flags.Layers != 0 {
		base.Layers = flags.Layers
	}
	if flags.Hidden != nil {
		base.Hidden = flags.Hidden
	}
	if flags.Degree != 0 {
		base.Degree = flags.Degree
	}
	if flags.Activation != "" {
		base.Activation = flags.Activation
	}
	if flags.Bounded {
		base.Bounded = true
	}
	if flags.Affine != "" {
		base.Affine = flags.Affine
	}
	if flags.BaseDF != 0 {
		base.BaseDF = flags.BaseDF
	}
	return base
}

// readRecipe reads a Recipe JSON file, or the "recipe" of a fit.json.
func readRecipe(path string) (fit.Recipe, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return fit.Recipe{}, fmt.Errorf("--recipe: %w", err)
	}
	var probe struct {
		Format string          `json:"format"`
		Recipe json.RawMessage `json:"recipe"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return fit.Recipe{}, fmt.Errorf("--recipe %s: %w", path, err)
	}
	if probe.Format == fit.SaveFormat {
		if probe.Recipe == nil {
			return fit.Recipe{}, fmt.Errorf("--recipe %s: a fit.json without a recipe (written before version 3)", path)
		}
		b = probe.Recipe
	}
	var r fit.Recipe
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, fmt.Errorf("--recipe %s: %w", path, err)
	}
	if err := r.Validate(); err != nil {
		return r, fmt.Errorf("--recipe %s: %w", path, err)
	}
	return r, nil
}

// autoStages are the stages of --family auto with the flags written into each.
func autoStages(f fitFlags, init []float64) ([]fit.Recipe, error) {
	st := fit.AutoStages(flowOptions(f))
	for i := range st {
		applyCommon(&st[i], f, init)
		if err := st[i].Validate(); err != nil {
			return nil, flagError(fmt.Errorf("auto stage %s: %w", st[i].Family.Kind, err), st[i].Family.Kind)
		}
	}
	return st, nil
}

// loadInit reads --init (CmdStan init JSON: constrained values by parameter name) into an
// unconstrained point of m's layout.
func loadInit(path string, lay *model.Layout) ([]float64, error) {
	if path == "" {
		return nil, nil
	}
	d, err := model.LoadData(path)
	if err != nil {
		return nil, fmt.Errorf("--init: %w", err)
	}
	vals := map[string][]float64{}
	shapes := map[string][]int{}
	for _, p := range lay.Params() {
		if !d.Has(p.Name) {
			continue
		}
		dims := make([]int, len(p.Dims))
		for i := range dims {
			dims[i] = -1
		}
		v, sh, err := d.Array(p.Name, dims...)
		if err != nil {
			return nil, fmt.Errorf("--init %s: %w", path, err)
		}
		vals[p.Name], shapes[p.Name] = v, sh
	}
	lookup := func(name string) (float64, bool) {
		base, idx, ok := splitIndex(name)
		v, have := vals[base]
		if !ok || !have || len(idx) != len(shapes[base]) {
			return 0, false
		}
		off := 0
		for i, k := range idx { // row-major offset of the 1-based index
			if k < 1 || k > shapes[base][i] {
				return 0, false
			}
			off = off*shapes[base][i] + k - 1
		}
		return v[off], true
	}
	z := make([]float64, lay.Dim())
	if err := lay.FreeNamed(lookup, z); err != nil {
		return nil, fmt.Errorf("--init %s: %w (give every parameter)", path, err)
	}
	return z, nil
}

// splitIndex splits a Stan-flattened name "theta[2,1]" into "theta" and [2 1].
func splitIndex(name string) (string, []int, bool) {
	i := strings.IndexByte(name, '[')
	if i < 0 {
		return name, nil, true
	}
	if !strings.HasSuffix(name, "]") {
		return "", nil, false
	}
	var idx []int
	for _, part := range strings.Split(name[i+1:len(name)-1], ",") {
		k, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil {
			return "", nil, false
		}
		idx = append(idx, k)
	}
	return name[:i], idx, true
}

func checkFitFlags(f fitFlags) error {
	flowish := fit.IsFlowKind(f.family) || f.family == familyAuto
	switch {
	case f.family == fit.KindMeanField, f.family == fit.KindFullRank, f.family == fit.KindLowRank, flowish:
	default:
		return fmt.Errorf("--family: unknown family %q (want %s)", f.family, familyNames)
	}
	if f.rank != 0 && f.family != fit.KindLowRank {
		return fmt.Errorf("--rank: only for --family lowrank (family=%s)", f.family)
	}
	for _, c := range []struct {
		flag string
		set  bool
		ok   bool
		need string
	}{
		{"--layers", f.layers != 0, flowish, "a flow family or auto"},
		{"--hidden", f.hidden != nil, flowish, "a flow family or auto"},
		{"--activation", f.activation != "", flowish, "a flow family or auto"},
		{"--base-df", f.baseDF != 0, flowish, "a flow family or auto"},
		{"--degree", f.degree != 0, f.family == fit.KindBernstein || f.family == familyAuto, "--family bernstein or auto"},
		{"--bounded", f.bounded, f.family == fit.KindBernstein || f.family == familyAuto, "--family bernstein or auto"},
		{"--affine", f.affine != "", f.family == fit.KindBernstein || f.family == familyAuto, "--family bernstein or auto"},
		{"--warm", f.warm, fit.IsFlowKind(f.family), "a flow family (auto always warm-starts its flows)"},
		{"--budget", f.budget != 0, f.family == familyAuto, "--family auto"},
		{"--recipe", f.recipe != "", f.family != familyAuto, "a single family (auto runs its own stages)"},
		{"--ensemble", f.ensemble != 0, f.family != familyAuto, "a single family (auto runs its own stages)"},
		{"--ensemble-l", f.ensembleL != 0, f.ensemble != 0 || f.recipe != "", "--ensemble S"},
		{"--ensemble-weights", f.ensembleWeights != "", f.ensemble != 0 || f.recipe != "", "--ensemble S"},
	} {
		if c.set && !c.ok {
			return fmt.Errorf("%s: only for %s (family=%s)", c.flag, c.need, f.family)
		}
	}
	if f.budget < 0 {
		return fmt.Errorf("--budget: %v, want a positive duration", f.budget)
	}
	bad := func(flag string, v any) error { return fmt.Errorf("%s: %v, want a positive value", flag, v) }
	// The other values are checked by Recipe.Validate, whose errors flagError maps to flags.
	switch {
	case f.draws < 1:
		return bad("--draws", f.draws)
	case f.draws > fit.MaxDiagDraws || f.psisResample && f.draws > fit.MaxDiagDraws/4:
		lim := fit.MaxDiagDraws
		if f.psisResample {
			lim /= 4 // resampled from 4× as many
		}
		return fmt.Errorf("--draws: %d, want at most %d (fit.MaxDiagDraws, a hard cap; more draws: vigo draw with several --seed values)", f.draws, lim)
	case f.workers < 0:
		return bad("--workers", f.workers)
	case f.starts < 0 || f.starts > fit.MaxStarts:
		return fmt.Errorf("--starts: %d, want 1 to %d (fit.MaxStarts, a hard cap)", f.starts, fit.MaxStarts)
	case f.out == "":
		return errors.New("--out: empty directory name")
	}
	return nil
}

func runFit(ctx context.Context, stdout, stderr io.Writer, reg *registry, name string, f fitFlags) error {
	if err := checkFitFlags(f); err != nil {
		return err
	}
	m, err := reg.load(name, f.data, f.posteriordb)
	if err != nil {
		return err
	}
	if err := fit.CheckDim("fit "+name, m.Dim()); err != nil {
		return err
	}
	init, err := loadInit(f.init, m.Layout)
	if err != nil {
		return err
	}
	var (
		recipe fit.Recipe
		stages []fit.Recipe
	)
	if f.family == familyAuto {
		stages, err = autoStages(f, init)
	} else {
		recipe, err = fitRecipe(f, init)
	}
	if err != nil {
		return err
	}
	for _, r := range append(stages[:len(stages):len(stages)], recipe) {
		if r.Family.Kind == "" {
			continue // recipe is unset with --family auto
		}
		if err := r.ValidateFor(m.Dim()); err != nil { // the sizes times d, before anything is allocated
			return flagError(err, r.Family.Kind)
		}
	}
	if _, err := recipe.Family.NewFamily(m.Dim(), recipe.Seed); stages == nil && err != nil {
		return flagError(err, recipe.Family.Kind)
	}
	var ref *diag.Draws
	if f.reference != "" {
		if ref, err = model.LoadDraws(f.reference); err != nil {
			return fmt.Errorf("--reference: %w", err)
		}
		if err := diag.CheckReference(ref); err != nil {
			return fmt.Errorf("--reference: %s: %w", f.reference, err)
		}
	}
	if err := output.CheckDir(f.out); err != nil {
		return fmt.Errorf("--out %s: %w", f.out, err)
	}
	opts := []fit.Option{fit.WithWorkers(f.workers)}
	prog := newProgress(stderr, f.quiet)
	if prog != nil {
		opts = append(opts, fit.WithProgress(prog.observe))
	}
	if ctx == nil {
		ctx = context.Background()
	}
	var (
		res  *fit.Result
		auto *fit.AutoResult
	)
	if stages != nil {
		acfg := fit.AutoConfig{Stages: stages, Budget: f.budget}
		auto, err = fit.Auto(ctx, m, acfg, opts...)
		if auto != nil {
			res = auto.Best()
		}
	} else {
		res, err = fit.Run(ctx, m, recipe, opts...)
	}
	prog.finish()
	if res == nil {
		return fmt.Errorf("fit %s: %w", m.Name, err)
	}
	cancelled := errors.Is(err, context.Canceled)
	dir, kept := outputDir(f.out, "fit.json", cancelled)
	out, werr := writeFitOutputs(dir, m, f, res, ref, auto)
	if werr != nil {
		return werr
	}
	printFitReport(stdout, m, f, res, out, auto)
	switch {
	case cancelled && kept:
		return fmt.Errorf("fit %s: %w after %d iterations (partial result written to %s; the earlier fit in %s is kept)", m.Name, context.Cause(ctx), res.Iterations, dir, f.out)
	case cancelled:
		return fmt.Errorf("fit %s: %w after %d iterations (partial result written to %s)", m.Name, context.Cause(ctx), res.Iterations, dir)
	case err != nil:
		return fmt.Errorf("fit %s: %w", m.Name, err)
	case res.Status == fit.Converged:
		return nil
	default:
		return fmt.Errorf("fit %s: %w: %s", m.Name, errNotConverged, res.Reason)
	}
}

// vigoVersion is the main module's version ("devel" for a source build).
func vigoVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

func writeFitOutputs(dir string, m *loadedModel, f fitFlags, res *fit.Result, ref *diag.Draws, auto *fit.AutoResult) (*output.Report, error) {
	return output.Write(dir, res, m.Model, output.Info{Vigo: vigoVersion(), Model: m.Name, Posterior: m.Posterior,
		Data: m.data, Layout: m.Layout, Draws: f.draws, PSISResample: f.psisResample, Reference: ref, ReferenceName: f.reference,
		Auto: auto, MaxPanels: maxPanels})
}

func printFitReport(w io.Writer, m *loadedModel, f fitFlags, res *fit.Result, o *output.Report, auto *fit.AutoResult) {
	fmt.Fprintf(w, "%s (%s), %s family, %d unconstrained parameters, seed %d\n\n", m.Name, m.Posterior, output.FamilyDesc(res), m.Dim(), f.seed)
	table := *o.Summary
	table.Notes = nil // the notes (k̂, ELBO, stop reason) close the report below, once
	table.WriteText(w)
	if o.Distance != nil {
		fmt.Fprintf(w, "\ndistance to the reference draws (%s):\n", f.reference)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "variable\tW1/sd\tsd ratio\t|Δmean|/sd\t")
		for _, v := range o.Distance.Vars {
			fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t\n", textsafe.String(v.Variable), v.W1SD, v.SDRatio, v.MeanDiffSD)
		}
		fmt.Fprintf(tw, "mean / max\t%.3f\t%.3f\t%.3f\t\n", o.Distance.W1SD, o.Distance.SDRatio, o.Distance.MaxMeanDiffSD)
		tw.Flush()
	}
	fmt.Fprintf(w, "\n%d iterations, %d gradient evaluations, %s\n", res.Iterations, res.GradEvals, res.Elapsed.Round(time.Millisecond))
	if res.Skipped > 0 {
		fmt.Fprintf(w, "skipped %d steps with a non-finite gradient\n", res.Skipped)
	}
	fmt.Fprintf(w, "ELBO = %.6g ± %.2g (MCSE, %d draws); k̂ = %s ± %.2f (bootstrap sd) on %d draws (threshold %.2f), PSIS ESS %.0f\n",
		res.ELBO, res.ELBOSE, len(res.LogP), diag.FormatKhat(res.KHat), res.KHatSD, len(res.LogP), res.KHatThreshold, res.PSISESS)
	fmt.Fprintf(w, "stopped: %s: %s\n", res.Status, res.Reason)
	printModes(w, res)
	fmt.Fprintf(w, "verdict: %s\n", res.Verdict)
	if next := nextFlags(res); next != "" {
		fmt.Fprintf(w, "next: %s\n", next)
	}
	if o.Resample != "" {
		fmt.Fprintf(w, "PSIS resampling: %s\n", o.Resample)
	}
	if o.Unsaved != "" {
		fmt.Fprintf(w, "warning: fit.json not written: %s\n", o.Unsaved)
	}
	if en := res.Ensemble; en != nil {
		printEnsemble(w, res, en)
	}
	if auto != nil {
		fmt.Fprintln(w, "\nfamily chosen automatically:")
		for _, s := range auto.Stages {
			fmt.Fprintf(w, "  %s\n", s.Line)
		}
		fmt.Fprintf(w, "chose %s: %s\n", auto.Stages[auto.Chosen].Family, auto.Reason)
	}
	fmt.Fprintf(w, "wrote %s\n", strings.Join(o.Files, ", "))
}

// printEnsemble prints an ensemble's bounds and members.
func printEnsemble(w io.Writer, res *fit.Result, en *fit.EnsembleResult) {
	S := len(en.Members)
	fmt.Fprintf(w, "\nensemble of %d members, weights %s\n", S, en.WeightNote)
	fmt.Fprintf(w, "MISELBO_%d = %.6g ± %.2g, mean IWELBO_%d = %.6g ± %.2g\n", en.L, en.MISELBO, en.MISELBOSE, en.L, en.MeanIWELBO, en.IWELBOSE)
	fmt.Fprintf(w, "MISELBO_1 = %.6g, mean ELBO = %.6g ± %.2g, JSD = MISELBO_1 − mean ELBO = %.3g ± %.2g (0 to log %d = %.3g)\n",
		en.MISELBO1, en.MeanELBO, en.MeanELBOSE, en.JSD, en.JSDSE, S, math.Log(float64(S)))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "member\tseed\tweight\tELBO\tMCSE\tk̂\tstatus\t")
	for s, m := range en.Members {
		var seed uint64
		if m.Recipe != nil {
			seed = m.Recipe.Seed
		}
		fmt.Fprintf(tw, "%d\t%d\t%.3g\t%.6g\t%.2g\t%s\t%s\t\n", s, seed, en.Weights[s], en.ELBO[s], en.ELBOSE[s], diag.FormatKhat(m.KHat), m.Status)
	}
	tw.Flush()
}

// progress shows the fit's tracking estimates: one updating line on a terminal, plain lines
// otherwise (CI logs, files).
type progress struct {
	w       io.Writer
	tty     bool
	printed bool
	start   time.Time
}

func newProgress(w io.Writer, quiet bool) *progress {
	if quiet {
		return nil
	}
	return &progress{w: w, tty: isTerminal(w), start: time.Now()}
}

// isTerminal reports whether w is a character device (a terminal) and TERM is not "dumb".
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func (p *progress) observe(pr fit.Progress) {
	if pr.Line != "" {
		p.line(pr.Line)
		return
	}
	gain := "  (window filling)"
	if !math.IsNaN(pr.Gain) {
		gain = fmt.Sprintf("  gain over window %+.3g", pr.Gain)
	}
	line := fmt.Sprintf("%siter %d/%d  ELBO %.6g%s  step %.3g  %s", ensemblePrefix(pr.Stage), pr.Iter, pr.MaxIter, pr.ELBO, gain, pr.LR, time.Since(p.start).Round(100*time.Millisecond))
	if pr.Skipped > 0 {
		line += fmt.Sprintf("  skipped %d", pr.Skipped)
	}
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
	p.printed = true
}

// line prints a whole line (an auto stage) between progress updates.
func (p *progress) line(s string) {
	if p.tty && p.printed {
		fmt.Fprint(p.w, "\r\033[K")
	}
	fmt.Fprintln(p.w, s)
	p.printed = false
}

// ensemblePrefix names the ensemble member a progress line is about ("meanfield member 2/4: "),
// "" outside an ensemble.
func ensemblePrefix(stage string) string {
	if strings.Contains(stage, " member ") {
		return stage + ": "
	}
	return ""
}

func (p *progress) finish() {
	if p != nil && p.tty && p.printed {
		fmt.Fprintln(p.w)
	}
}

// maxModeLines caps the modes printed by printModes.
const maxModeLines = 5

// printModes prints the modes the multi-start search found, best first, when there was a
// search with more than one start.
func printModes(w io.Writer, res *fit.Result) {
	if res.Starts <= 1 || len(res.Modes) == 0 {
		return
	}
	fmt.Fprintf(w, "starts: %d mode searches", res.Starts)
	if res.StartsFailed > 0 {
		fmt.Fprintf(w, " (%d failed", res.StartsFailed)
		if res.StartsFailedWhy != "" {
			fmt.Fprintf(w, "; the first: %s", textsafe.String(res.StartsFailedWhy))
		}
		fmt.Fprint(w, ")")
	}
	fmt.Fprintf(w, ", %d distinct mode(s), best (highest Laplace evidence) first; q started at mode 1:\n", len(res.Modes))
	for i, m := range res.Modes {
		if i == maxModeLines {
			fmt.Fprintf(w, "  … %d more (fit.json lists them all)\n", len(res.Modes)-i)
			break
		}
		fmt.Fprintf(w, "  mode %d: log p %.6g, Laplace log evidence %.6g (%+.3g nats), log q %.4g, reached by %d start(s)",
			i+1, m.LogDensity, m.LogEvidence, m.LogEvidence-res.Modes[0].LogEvidence, m.LogQ, m.Count)
		if m.DiagHessian {
			fmt.Fprint(w, "; Hessian not positive definite (rough evidence)")
		}
		fmt.Fprintln(w)
	}
}

// nextFlags suggests the flags of a richer fit when k̂ is not below its threshold, or an
// ensemble when the starts found modes q misses: the verdict's advice in this command line's
// terms.
func nextFlags(res *fit.Result) string {
	if a := fit.Assess(res); a.Uncovered > 0 {
		return fmt.Sprintf("--ensemble %d (one member per mode: the posterior is multimodal); --starts %d looks for more modes", min(len(res.Modes), 8), 2*max(res.Starts, 4))
	}
	if res.Recipe == nil || res.KHat < res.KHatThreshold {
		return ""
	}
	switch k := res.Recipe.Family.Kind; {
	case k == fit.KindMeanField || k == fit.KindLowRank:
		return "--family fullrank, or a flow: --family bernstein (or --family auto)"
	case k == fit.KindFullRank:
		return "--family bernstein, maf or realnvp (or --family auto)"
	case k == fit.KindBernstein:
		return "--layers 2 --degree 50, --affine last, or --family maf; --draws 10000 firms up k̂"
	default:
		return "--layers, --hidden, or another --family; --draws 10000 firms up k̂"
	}
}
