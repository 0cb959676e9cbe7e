package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/objective"
	"github.com/vigo-bayes/vigo/zoo"
)

func init() { commands = append(commands, newFitCmd) }

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
}

// familyAuto is --family auto.
const familyAuto = "auto"

// familyNames lists the values of --family.
const familyNames = "meanfield, fullrank, lowrank, maf, realnvp, bernstein or auto"

// isFlowKind reports whether kind is one of the flow families.
func isFlowKind(kind string) bool {
	return kind == fit.KindMAF || kind == fit.KindRealNVP || kind == fit.KindBernstein
}

// minDiagDraws is the number of draws k̂ is computed on at least (issue 3: ≥ 1000).
const minDiagDraws = 1000

// maxPanels caps the panels of marginals.png.
const maxPanels = 36

func newFitCmd() *cobra.Command {
	var f fitFlags
	cmd := &cobra.Command{
		Use:   "fit [MODEL]",
		Short: "Fit a zoo model by variational inference and write draws, summaries, the fit and plots",
		Long: `vigo fit fits a variational approximation to the posterior of a zoo model (default:
eight_schools, whose data is embedded) and checks it with PSIS k̂.

Families (--family):
  meanfield, fullrank, lowrank   Gaussians, started at the Laplace approximation
  maf        2 inverse autoregressive layers (MADE 32×32, tanh, direct connections)
  realnvp    4 affine coupling layers (MLP 32×32, tanh), STL gradient
  bernstein  triangular Bernstein flow of BF-VI (degree 20, MADE 10×10, tanh, linear tails)
  auto       meanfield, fullrank, then bernstein, then maf, until the family leading on
             ELBO has k̂ below the PSIS threshold (0.67 with 1000 draws) or --budget is
             spent; keeps the highest-ELBO family below the threshold and prints a line
             per stage and why it chose it
Flows are warm-started: a full-rank Gaussian is fitted first and the flow starts exactly
at it, in its whitened coordinates (--warm=false starts from the Laplace approximation
instead). --layers, --hidden, --activation, --degree, --bounded and --affine change the
flows' structure; --base-df ν gives a flow a Student-t base with ν degrees of freedom (heavier
tails) instead of the standard normal. Flows default to 32 draws per step, step size 0.01 and plateau tolerance
0.002 nats (Gaussians: 8, 0.02, 0.02): with the Gaussian settings the stopping rule ends
a flow fit long before its ELBO stops rising.

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

Exit codes: 0 converged, 3 not converged (iteration cap), 1 error, 130 cancelled.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := "eight_schools"
			if len(args) == 1 {
				name = args[0]
			}
			return runFit(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), name, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.data, "data", "", "data file for the model (CmdStan JSON, .json.zip or CSV with a header)")
	fl.StringVar(&f.posteriordb, "posteriordb", "", "posteriordb directory for models without embedded data (default ../shared/data/posteriordb)")
	fl.StringVar(&f.family, "family", "meanfield", "variational family: "+familyNames)
	fl.IntVar(&f.rank, "rank", 0, "rank of the lowrank family (default ⌈√d⌉)")
	fl.IntVar(&f.layers, "layers", 0, "flow layers (default maf 2, realnvp 4, bernstein 1)")
	fl.IntSliceVar(&f.hidden, "hidden", nil, "hidden layer sizes of the flow's conditioners, e.g. 32,32 (default maf and realnvp 32,32; bernstein 10,10)")
	fl.IntVar(&f.degree, "degree", 0, "degree M of the Bernstein polynomials (default 20)")
	fl.StringVar(&f.activation, "activation", "", "activation of the flow's conditioners: tanh (default), relu or linear")
	fl.BoolVar(&f.bounded, "bounded", false, "bernstein: the BF-VI paper's bounded map (compact support) instead of linear tails")
	fl.StringVar(&f.affine, "affine", "", "bernstein: add an affine autoregressive layer, last (after the Bernstein layers: conditional scales that change fast, as in funnels) or first (default none)")
	fl.Float64Var(&f.baseDF, "base-df", 0, "flows: Student-t base with this many degrees of freedom, 1 to 1000 (default 0: standard-normal base)")
	fl.BoolVar(&f.warm, "warm", true, "flows: fit a full-rank Gaussian first and start the flow at it (false: start at the Laplace approximation)")
	fl.DurationVar(&f.budget, "budget", 0, "auto: wall-time budget of the whole search, e.g. 5m (default none)")
	fl.Uint64Var(&f.seed, "seed", 1, "random seed; the same seed gives byte-identical draws.csv")
	fl.IntVar(&f.draws, "draws", 1000, "draws written to draws.csv (k̂ uses at least 1000)")
	fl.BoolVar(&f.psisResample, "psis-resample", false, "write draws resampled (with replacement) by their PSIS weights when k̂ is below its threshold, as Stan's Pathfinder does; the summary then describes the PSIS-corrected approximation")
	fl.StringVar(&f.out, "out", "vigo_out", "output directory")
	fl.StringVar(&f.reference, "reference", "", "reference draws (posteriordb draws .json.zip) to compare with")
	fl.IntVar(&f.iter, "iter", 0, "iteration cap (default 20000)")
	fl.IntVar(&f.samples, "samples", 0, fmt.Sprintf("Monte Carlo draws per gradient step (default 8; flows %d)", fit.FlowSamples))
	fl.Float64Var(&f.lr, "lr", 0, fmt.Sprintf("Adam step size in preconditioned coordinates (default 0.02; flows %g)", fit.FlowLR))
	fl.Float64Var(&f.tol, "tol", 0, fmt.Sprintf("plateau tolerance of the stopping rule in nats (default 0.02; flows %g)", fit.FlowTol))
	fl.IntVar(&f.workers, "workers", 0, "goroutines per step, at most 4 (default GOMAXPROCS); results do not depend on it")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress output")
	return cmd
}

// loadedModel is a zoo model with a note on where its data came from.
type loadedModel struct {
	*zoo.Model
	data string
}

// loadZooModel builds a zoo model from --data, the embedded eight-schools data, or the
// posteriordb directory, in that order.
func loadZooModel(name, dataPath, dir string) (*loadedModel, error) {
	info, err := zoo.Get(name)
	if err != nil {
		return nil, err
	}
	if dataPath != "" {
		d, err := loadDataFile(dataPath)
		if err != nil {
			return nil, fmt.Errorf("--data: %w", err)
		}
		m, err := zoo.New(info.Name, d)
		if err != nil {
			return nil, fmt.Errorf("--data %s: %w", dataPath, err)
		}
		return &loadedModel{m, dataPath}, nil
	}
	if info.Name == "eight_schools" {
		return &loadedModel{zoo.EightSchools(), "embedded"}, nil
	}
	if dir == "" {
		d, ok := zoo.DefaultDir()
		if !ok {
			return nil, fmt.Errorf("model %s: no data: pass --data FILE or --posteriordb DIR", info.Name)
		}
		dir = d
	}
	m, err := zoo.Load(info.Name, dir)
	if err != nil {
		return nil, err
	}
	return &loadedModel{m, info.DataPath(dir)}, nil
}

// loadDataFile reads CmdStan JSON (plain or zipped) or, for a .csv name, CSV with a header.
func loadDataFile(path string) (*model.Data, error) {
	if strings.HasSuffix(strings.ToLower(path), ".csv") || strings.HasSuffix(strings.ToLower(path), ".csv.zip") {
		return model.LoadCSV(path)
	}
	return model.LoadData(path)
}

// newFamily builds the family named by --family (not auto).
func newFamily(kind string, d, rank int, f fitFlags) (family.Family, error) {
	switch kind {
	case fit.KindMeanField:
		return family.NewMeanField(d), nil
	case fit.KindFullRank:
		return family.NewFullRank(d), nil
	case fit.KindLowRank:
		if rank == 0 {
			rank = int(math.Ceil(math.Sqrt(float64(d))))
		}
		if rank < 1 || rank > d {
			return nil, fmt.Errorf("--rank: %d, want 1 to %d (the model's dimension)", rank, d)
		}
		return family.NewLowRank(d, rank), nil
	}
	if isFlowKind(kind) {
		return newFlowFamily(kind, d, f)
	}
	return nil, fmt.Errorf("--family: unknown family %q (want %s)", kind, familyNames)
}

// flowOptions are the flow structure flags.
func flowOptions(f fitFlags) fit.FlowOptions {
	return fit.FlowOptions{Layers: f.layers, Hidden: f.hidden, Degree: f.degree, Activation: f.activation,
		Bounded: f.bounded, Affine: f.affine, Seed: f.seed, BaseDF: f.baseDF}
}

// newFlowFamily builds a flow family from the flags; errors name the flag.
func newFlowFamily(kind string, d int, f fitFlags) (family.Family, error) {
	q, err := fit.NewFlowFamily(kind, d, flowOptions(f))
	if err != nil {
		return nil, fmt.Errorf("--family %s: %w", kind, err)
	}
	return q, nil
}

func checkFitFlags(f fitFlags) error {
	flowish := isFlowKind(f.family) || f.family == familyAuto
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
		{"--warm=false", !f.warm, isFlowKind(f.family), "a flow family (auto always warm-starts its flows)"},
		{"--budget", f.budget != 0, f.family == familyAuto, "--family auto"},
	} {
		if c.set && !c.ok {
			return fmt.Errorf("%s: only for %s (family=%s)", c.flag, c.need, f.family)
		}
	}
	switch {
	case f.layers < 0:
		return fmt.Errorf("--layers: %d, want a positive value", f.layers)
	case f.degree < 0:
		return fmt.Errorf("--degree: %d, want a positive value", f.degree)
	case f.baseDF != 0 && !(f.baseDF >= family.MinBaseDF && f.baseDF <= family.MaxBaseDF):
		return fmt.Errorf("--base-df: %v, want %d to %d (0: standard-normal base)", f.baseDF, family.MinBaseDF, family.MaxBaseDF)
	case f.budget < 0:
		return fmt.Errorf("--budget: %v, want a positive duration", f.budget)
	case f.tol < 0 || math.IsNaN(f.tol):
		return fmt.Errorf("--tol: %v, want a positive value", f.tol)
	}
	for _, h := range f.hidden {
		if h < 1 {
			return fmt.Errorf("--hidden: %v, want positive sizes", f.hidden)
		}
	}
	bad := func(flag string, v any) error { return fmt.Errorf("%s: %v, want a positive value", flag, v) }
	switch {
	case f.rank < 0:
		return bad("--rank", f.rank)
	case f.draws < 1:
		return bad("--draws", f.draws)
	case f.iter < 0:
		return bad("--iter", f.iter)
	case f.samples < 0:
		return bad("--samples", f.samples)
	case f.lr < 0 || math.IsNaN(f.lr):
		return bad("--lr", f.lr)
	case f.workers < 0:
		return bad("--workers", f.workers)
	case f.out == "":
		return errors.New("--out: empty directory name")
	}
	return nil
}

func runFit(ctx context.Context, stdout, stderr io.Writer, name string, f fitFlags) error {
	if err := checkFitFlags(f); err != nil {
		return err
	}
	m, err := loadZooModel(name, f.data, f.posteriordb)
	if err != nil {
		return err
	}
	var fam family.Family
	if f.family != familyAuto {
		if fam, err = newFamily(f.family, m.Dim(), f.rank, f); err != nil {
			return err
		}
	}
	var ref *model.Draws
	if f.reference != "" {
		if ref, err = model.LoadDraws(f.reference); err != nil {
			return fmt.Errorf("--reference: %w", err)
		}
	}
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	cfg := fit.Config{Seed: f.seed, Samples: f.samples, LR: f.lr, Tol: f.tol, MaxIter: f.iter, Workers: f.workers,
		DiagDraws: max(f.draws, minDiagDraws)}
	if f.psisResample {
		// Resample from 4× as many draws as are written, so fewer rows repeat.
		cfg.DiagDraws = max(4*f.draws, minDiagDraws)
	}
	var opts []fit.Option
	prog := newProgress(stderr, f.quiet)
	if prog != nil {
		opts = append(opts, fit.WithObserver(prog.observe))
	}
	if ctx == nil {
		ctx = context.Background()
	}
	var (
		res  *fit.Result
		auto *fit.AutoResult
	)
	switch {
	case f.family == familyAuto:
		acfg := fit.AutoConfig{Config: cfg, Budget: f.budget, FlowOptions: flowOptions(f)}
		if prog != nil {
			acfg.Report = prog.line
		}
		auto, err = fit.Auto(ctx, m, acfg, opts...)
		if err == nil {
			res, cfg = auto.Best(), auto.Stages[auto.Chosen].Config
		}
	case isFlowKind(f.family):
		cfg = fit.FlowDefaults(cfg)
		if f.warm {
			res, _, err = fit.FitFlow(ctx, m, fam, fit.FlowObjective(f.family), cfg, opts...)
		} else {
			res, err = fit.Fit(ctx, m, fam, fit.FlowObjective(f.family), cfg, opts...)
		}
	default:
		res, err = fit.Fit(ctx, m, fam, objective.Options{}, cfg, opts...)
	}
	prog.finish()
	if err != nil {
		return fmt.Errorf("fit %s: %w", m.Name, err)
	}
	out, err := writeFitOutputs(m, f, cfg, res, ref, auto)
	if err != nil {
		return err
	}
	printFitReport(stdout, m, f, res, out, auto)
	switch {
	case ctx.Err() != nil || res.Status == fit.Cancelled:
		return fmt.Errorf("fit %s: %w after %d iterations (partial result written to %s)", m.Name, context.Canceled, res.Iterations, f.out)
	case res.Status == fit.Converged:
		return nil
	default:
		return fmt.Errorf("fit %s: %w: %s", m.Name, errNotConverged, res.Reason)
	}
}

// fitOutput is what writeFitOutputs computed for the report.
type fitOutput struct {
	summary  *diag.Summary
	dist     *diag.Distance
	files    []string
	resample string // what --psis-resample did; "" without it
}

// drawColumns returns the column names of a draws file for m — lp__, lp_approx__, then the
// model's columns (parameters, then derived quantities: model.Model.Columns) — and a function
// filling one row from the unconstrained draw z (model.Model.Row). vigo fit, draw and sample
// write these columns.
func drawColumns(m *zoo.Model) (names []string, fill func(row, z []float64)) {
	mm := m.Model()
	names = append([]string{"lp__", "lp_approx__"}, mm.Columns()...)
	return names, func(row, z []float64) { mm.Row(row[2:], z) }
}

// vigoVersion is the main module's version ("devel" for a source build).
func vigoVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "devel"
}

// lpNote documents the two method columns, in every draws file vigo writes.
const lpNote = `lp__ = log p(z): the model's log density at the unconstrained draw z, Jacobian of the
constraining transforms and all normalising constants included (CmdStan's ADVI writes 0
here; vigo writes the value, as Stan's Pathfinder does). lp_approx__ = log q(z), the
normalised log density of the approximation at z. lp__ - lp_approx__ are the PSIS log weights.`

func writeFitOutputs(m *loadedModel, f fitFlags, cfg fit.Config, res *fit.Result, ref *model.Draws, auto *fit.AutoResult) (*fitOutput, error) {
	d := m.Dim()
	names, fill := drawColumns(m.Model)
	k := len(names)
	n := f.draws
	pick, resampleNote, err := psisPick(res, n, f)
	if err != nil {
		return nil, err
	}
	vals := make([]float64, n*k)
	for i := range n {
		j := pick(i)
		row := vals[i*k : (i+1)*k]
		row[0], row[1] = res.LogP[j], res.LogQ[j]
		fill(row, res.Draws[j*d:(j+1)*d])
	}
	o := &fitOutput{resample: resampleNote}
	path := func(name string) string {
		p := filepath.Join(f.out, name)
		o.files = append(o.files, p)
		return p
	}
	header := fitHeader(m, f, cfg, res, auto)
	if resampleNote != "" {
		header = append(header, "psis_resample = "+resampleNote)
	}
	csvDoc := &model.StanCSV{Config: header, Names: names, Draws: vals}
	var buf bytes.Buffer
	if err := model.WriteStanCSV(&buf, csvDoc); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path("draws.csv"), buf.Bytes(), 0o644); err != nil {
		return nil, err
	}

	// Summary of the constrained columns (lp__ and lp_approx__ left out).
	pn := names[2:]
	pv := make([]float64, 0, n*len(pn))
	for i := range n {
		pv = append(pv, vals[i*k+2:(i+1)*k]...)
	}
	draws := &diag.Draws{Names: pn, Chains: [][]float64{pv}}
	sum, err := diag.Summarize(draws, nil)
	if err != nil {
		return nil, fmt.Errorf("summary: %w", err)
	}
	sum.Notes = append(sum.Notes, summaryNotes(res)...)
	if resampleNote != "" {
		sum.Notes = append(sum.Notes, "PSIS resampling: "+resampleNote)
	}
	if auto != nil {
		sum.Notes = append(sum.Notes, autoNotes(auto)...)
	}
	o.summary = sum
	if ref != nil {
		dist, note, err := compareReference(draws, ref, f.reference)
		if err != nil {
			return nil, err
		}
		o.dist = dist
		sum.Notes = append(sum.Notes, note)
	}
	for _, w := range []struct {
		name  string
		write func(io.Writer) error
	}{{"summary.txt", sum.WriteText}, {"summary.csv", sum.WriteCSV}, {"summary.json", sum.WriteJSON}} {
		buf.Reset()
		if err := w.write(&buf); err != nil {
			return nil, fmt.Errorf("%s: %w", w.name, err)
		}
		if err := os.WriteFile(path(w.name), buf.Bytes(), 0o644); err != nil {
			return nil, err
		}
	}

	// The approximation.
	reported := m.Names()
	if equalNames(reported, m.Layout().Names()) {
		reported = nil
	}
	saved, err := fit.NewSaved(res, fit.SaveInfo{Vigo: vigoVersion(), Model: m.Name, Posterior: m.Posterior,
		Data: m.data, Layout: m.Layout(), Reported: reported, Config: cfg})
	if err != nil {
		return nil, err
	}
	if err := saved.Save(path("fit.json")); err != nil {
		return nil, err
	}

	// Plots.
	title := fmt.Sprintf("%s, %s", m.Name, familyDesc(res.Family.Base))
	if len(res.Trace) > 0 {
		if err := fit.PlotELBO(path("elbo.png"), "ELBO: "+title, res.Trace, res.ELBO); err != nil {
			return nil, err
		}
	}
	margs := make([]fit.Marginal, len(pn))
	for j, nm := range pn {
		col := make([]float64, n)
		for i := range n {
			col[i] = pv[i*len(pn)+j]
		}
		margs[j] = fit.Marginal{Name: nm, Draws: col}
		if ref != nil && ref.Index(nm) >= 0 {
			margs[j].Ref, _ = ref.Column(nm)
		}
	}
	mt := "marginals: " + title
	if len(margs) > maxPanels {
		mt += fmt.Sprintf(" (first %d of %d)", maxPanels, len(margs))
	}
	if err := fit.PlotMarginals(path("marginals.png"), mt, margs, maxPanels); err != nil {
		return nil, err
	}
	return o, nil
}

func equalNames(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// fitHeader is the comment header of draws.csv: the configuration and the diagnostics. It
// holds nothing that changes between runs with the same seed (no time, no paths of --out).
func fitHeader(m *loadedModel, f fitFlags, cfg fit.Config, res *fit.Result, auto *fit.AutoResult) []string {
	_, flow := res.Family.Base.(*family.Flow)
	defS, defLR, defTol := "8 (default)", "0.02 (default)", "0.02 (default)"
	if flow {
		defS = fmt.Sprintf("%d (flow default)", fit.FlowSamples)
		defLR = fmt.Sprintf("%g (flow default)", fit.FlowLR)
		defTol = fmt.Sprintf("%g (flow default)", fit.FlowTol)
	}
	h := []string{
		"vigo = " + vigoVersion(),
		"method = variational",
		"model = " + m.Name,
		"posterior = " + m.Posterior,
		"data = " + m.data,
		"family = " + familyDesc(res.Family.Base),
		fmt.Sprintf("seed = %d", f.seed),
		fmt.Sprintf("draws = %d (k̂ on %d)", f.draws, len(res.LogQ)),
		fmt.Sprintf("iter = %s", orDefault(f.iter, "20000 (default)")),
		fmt.Sprintf("samples = %s", orDefault(f.samples, defS)),
		fmt.Sprintf("lr = %s", orDefaultF(f.lr, defLR)),
		fmt.Sprintf("tol = %s", orDefaultF(f.tol, defTol)),
		"init = " + res.InitNote,
		"status = " + res.Status.String(),
		"reason = " + res.Reason,
		fmt.Sprintf("iterations = %d", res.Iterations),
		fmt.Sprintf("grad_evals = %d", res.GradEvals),
		fmt.Sprintf("skipped_steps = %d", res.Skipped),
		fmt.Sprintf("elbo = %.6g", res.ELBO),
		fmt.Sprintf("elbo_mcse = %.3g", res.ELBOSE),
		"khat = " + diag.FormatKhat(res.KHat),
		fmt.Sprintf("khat_threshold = %.3g", res.KHatThreshold),
		fmt.Sprintf("khat_sd = %.2g", res.KHatSD),
		"verdict = " + res.Verdict,
	}
	if auto != nil {
		h = append(h, autoNotes(auto)...)
	}
	return append(h, strings.Split(lpNote, "\n")...)
}

// autoNotes are the stage lines of --family auto and its choice.
func autoNotes(a *fit.AutoResult) []string {
	var out []string
	for _, s := range a.Stages {
		out = append(out, "auto: "+s.Line)
	}
	return append(out, fmt.Sprintf("auto: chose %s: %s", a.Stages[a.Chosen].Family, a.Reason))
}

func orDefault(v int, def string) string {
	if v == 0 {
		return def
	}
	return fmt.Sprint(v)
}

func orDefaultF(v float64, def string) string {
	if v == 0 {
		return def
	}
	return fmt.Sprint(v)
}

// familyDesc names a family: "meanfield", "fullrank", "lowrank (rank 3)".
func familyDesc(f family.Family) string {
	switch b := f.(type) {
	case *family.MeanField:
		return fit.KindMeanField
	case *family.FullRank:
		return fit.KindFullRank
	case *family.LowRank:
		return fmt.Sprintf("%s (rank %d)", fit.KindLowRank, b.Rank())
	case *family.Flow:
		base := "normal base"
		if df := b.BaseDF(); !math.IsInf(df, 1) {
			base = fmt.Sprintf("Student-t base, ν = %g", df)
		}
		return fmt.Sprintf("%s (flow, %s, %d parameters)", fit.FlowName(b.Flow()), base, b.NumParams())
	}
	return fmt.Sprintf("%T", f)
}

// psisPick returns which diagnostic draw goes to row i of draws.csv: row i itself, or, with
// --psis-resample and k̂ below its threshold, draws picked with replacement by their PSIS
// weights (seeded by --seed, so the output stays reproducible). The note says what was done.
func psisPick(res *fit.Result, n int, f fitFlags) (func(int) int, string, error) {
	identity := func(i int) int { return i }
	if !f.psisResample {
		return identity, "", nil
	}
	lw := make([]float64, len(res.LogQ))
	for i := range lw {
		lw[i] = res.LogP[i] - res.LogQ[i]
	}
	ps, err := diag.PSIS(lw)
	if err != nil || !ps.Reliable() {
		return identity, fmt.Sprintf("not done: k̂ = %s is not below its threshold %.2f, so the weights cannot correct q; the draws are q's own", diag.FormatKhat(res.KHat), res.KHatThreshold), nil
	}
	r := rand.New(rand.NewPCG(f.seed, 0x7073697372)) // stream "psisr", apart from the fit's
	idx, err := ps.Resample(n, r.Float64)
	if err != nil {
		return nil, "", fmt.Errorf("--psis-resample: %w", err)
	}
	distinct := make(map[int]bool, n)
	for _, j := range idx {
		distinct[j] = true
	}
	return func(i int) int { return idx[i] }, fmt.Sprintf("%d draws picked with replacement from %d by their PSIS weights (k̂ = %s, PSIS ESS %.0f; %d distinct draws; the summary's ess columns count rows, not independent draws)", n, len(lw), diag.FormatKhat(ps.K), ps.ESS, len(distinct)), nil
}

func summaryNotes(res *fit.Result) []string {
	return []string{
		res.Verdict,
		fmt.Sprintf("k̂ = %s ± %.2f on %d draws (threshold %.2f), PSIS ESS %.0f", diag.FormatKhat(res.KHat), res.KHatSD, len(res.LogQ), res.KHatThreshold, res.PSISESS),
		fmt.Sprintf("ELBO = %.6g ± %.2g (MCSE, %d draws)", res.ELBO, res.ELBOSE, len(res.LogQ)),
		fmt.Sprintf("%s: %s", res.Status, res.Reason),
	}
}

// compareReference measures the draws against the reference draws on the variables both have.
func compareReference(draws *diag.Draws, ref *model.Draws, refPath string) (*diag.Distance, string, error) {
	var keep []int
	for j, n := range draws.Names {
		if ref.Index(n) >= 0 {
			keep = append(keep, j)
		}
	}
	if len(keep) == 0 {
		return nil, "", fmt.Errorf("--reference %s: no variable in common with the model (it has %s, …)", refPath, strings.Join(ref.Names[:min(3, len(ref.Names))], ", "))
	}
	D := draws.Dim()
	n := draws.Len()
	sel := &diag.Draws{Chains: [][]float64{make([]float64, 0, n*len(keep))}}
	for _, j := range keep {
		sel.Names = append(sel.Names, draws.Names[j])
	}
	for i := range n {
		for _, j := range keep {
			sel.Chains[0] = append(sel.Chains[0], draws.Chains[0][i*D+j])
		}
	}
	rd := &diag.Draws{Names: ref.Names}
	row := make([]float64, len(ref.Names))
	for c := range ref.NumChains() {
		ch := make([]float64, 0, ref.NumDraws()*len(ref.Names))
		for i := range ref.NumDraws() {
			ch = append(ch, ref.Draw(row, c, i)...)
		}
		rd.Chains = append(rd.Chains, ch)
	}
	dist, err := diag.Compare(sel, rd)
	if err != nil {
		return nil, "", fmt.Errorf("--reference %s: %w", refPath, err)
	}
	note := fmt.Sprintf("vs reference %s (%d variables): W1/sd %.3g (mean), sd ratio %.3g (mean), max |Δmean|/sd %.3g",
		filepath.Base(refPath), len(keep), dist.W1SD, dist.SDRatio, dist.MaxMeanDiffSD)
	return dist, note, nil
}

func printFitReport(w io.Writer, m *loadedModel, f fitFlags, res *fit.Result, o *fitOutput, auto *fit.AutoResult) {
	fmt.Fprintf(w, "%s (%s), %s family, %d unconstrained parameters, seed %d\n\n", m.Name, m.Posterior, familyDesc(res.Family.Base), m.Dim(), f.seed)
	table := *o.summary
	table.Notes = nil // the notes (k̂, ELBO, stop reason) close the report below, once
	table.WriteText(w)
	if o.dist != nil {
		fmt.Fprintf(w, "\ndistance to the reference draws (%s):\n", f.reference)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "variable\tW1/sd\tsd ratio\t|Δmean|/sd\t")
		for _, v := range o.dist.Vars {
			fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t\n", v.Variable, v.W1SD, v.SDRatio, v.MeanDiffSD)
		}
		fmt.Fprintf(tw, "mean / max\t%.3f\t%.3f\t%.3f\t\n", o.dist.W1SD, o.dist.SDRatio, o.dist.MaxMeanDiffSD)
		tw.Flush()
	}
	fmt.Fprintf(w, "\n%d iterations, %d gradient evaluations, %s\n", res.Iterations, res.GradEvals, res.Elapsed.Round(time.Millisecond))
	if res.Skipped > 0 {
		fmt.Fprintf(w, "skipped %d steps with a non-finite gradient\n", res.Skipped)
	}
	fmt.Fprintf(w, "ELBO = %.6g ± %.2g (MCSE, %d draws); k̂ = %s ± %.2f (bootstrap sd) on %d draws (threshold %.2f), PSIS ESS %.0f\n",
		res.ELBO, res.ELBOSE, len(res.LogP), diag.FormatKhat(res.KHat), res.KHatSD, len(res.LogP), res.KHatThreshold, res.PSISESS)
	fmt.Fprintf(w, "stopped: %s: %s\n", res.Status, res.Reason)
	fmt.Fprintf(w, "verdict: %s\n", res.Verdict)
	if o.resample != "" {
		fmt.Fprintf(w, "PSIS resampling: %s\n", o.resample)
	}
	if auto != nil {
		fmt.Fprintln(w, "\nfamily chosen automatically:")
		for _, s := range auto.Stages {
			fmt.Fprintf(w, "  %s\n", s.Line)
		}
		fmt.Fprintf(w, "chose %s: %s\n", auto.Stages[auto.Chosen].Family, auto.Reason)
	}
	fmt.Fprintf(w, "wrote %s\n", strings.Join(o.files, ", "))
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
	gain := "  (window filling)"
	if !math.IsNaN(pr.Gain) {
		gain = fmt.Sprintf("  gain over window %+.3g", pr.Gain)
	}
	line := fmt.Sprintf("iter %d/%d  ELBO %.6g%s  step %.3g  %s", pr.Iter, pr.MaxIter, pr.ELBO, gain, pr.LR, time.Since(p.start).Round(100*time.Millisecond))
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

func (p *progress) finish() {
	if p != nil && p.tty && p.printed {
		fmt.Fprintln(p.w)
	}
}
