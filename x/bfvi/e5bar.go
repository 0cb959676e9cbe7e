package bfvi

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"github.com/vigo-bayes/vigo/model"
)

// E5 bar: the restated E5 bar for the proper target (BarConfig, RunBar). On the proper
// eight-schools posterior the bounded flow's support ends above τ = 0 while the posterior has
// mass down to τ → 0, and PSIS k̂ cannot see mass q does not cover (its weights are p/q on
// draws of q). So each row reports, next to k̂, what q misses: the reference draws' mass
// outside the range of q's draws, and the Wasserstein distance of q's marginals from them.
const (
	// BarW1SD is the bar's W1/sd: issue 4's posteriordb bar (k̂ < 0.7 and W1/sd ≤ 0.10).
	BarW1SD = 0.10
	// BarOutside is the bar's largest reference mass outside the range of q's draws (any of
	// the ten quantities, every restart). If q = p, the reference mass below the smallest of S
	// draws of q is ≈ 1/(S + 1) per side (2·10⁻⁵ at S = 50,000; one of posteriordb's 10,000
	// reference draws is 10⁻⁴), so 1% is two orders above that floor and far below the 16% of
	// τ the bounded flow missed in issue 4's runs.
	BarOutside = 0.01
	// BarMinDraws is the fewest draws of q per restart the bar accepts: k̂ of one fitted q
	// moves by 0.1–0.2 between 10,000 and 50,000 draws (bench/results/bfvi.md), and the
	// paper's NCP runs hold 50,000.
	BarMinDraws = 50000
	// eightSchoolsRef is posteriordb's eight-schools reference posterior.
	eightSchoolsRef = "eight_schools-eight_schools_noncentered"
)

// BarConfig configures RunBar. Zero fields take the defaults listed.
type BarConfig struct {
	Restarts int // independent fits per row (seeds FirstSeed..FirstSeed+Restarts−1); default 5
	// FirstSeed is the seed of the first restart; 0: 1. Two runs with disjoint seeds can then
	// share the restarts of one table (the report prints each restart's k̂ and bootstrap sd,
	// all that the Rubin combination needs).
	FirstSeed int
	// Draws are q's draws per fit for k̂, W1 and the ranges; default BarMinDraws. Fewer draws
	// are allowed (tests), but the bar column then says the bar cannot be judged.
	Draws int
	Boot  int // bootstrap resamples per fit for k̂'s variance; default 200
	// PaperSteps overrides the paper recipe's step count (fit.PaperSteps; tests); 0: the paper's.
	PaperSteps int
	// DefaultMaxIter overrides the iteration cap of vigo's default recipe (tests); 0: its own.
	DefaultMaxIter int
	// Dir is the posteriordb directory with the eight-schools reference draws (required).
	Dir string
	// Targets are "ncp" and/or "cp"; default both.
	Targets []string
	// SkipDefault leaves out vigo's default rows.
	SkipDefault bool
	Workers     int // fits run at a time, each single-threaded; default GOMAXPROCS
	Progress    func(string)
}

// BarRun is one fit of a BarRow: its diagnostics on Draws draws of q.
type BarRun struct {
	Seed       uint64
	K, V       float64 // PSIS k̂ on the row's target and its bootstrap variance
	KProper    float64 // k̂ against the proper target (the same as K on the proper target)
	ELBO       float64 // on the row's target
	W1SD       float64 // mean over the ten quantities of W1(q, ref)/sd(ref)
	TauMin     float64 // smallest τ among q's draws
	TauMax     float64
	RefBelow   float64 // reference mass of τ below TauMin
	RefOutside float64 // largest reference mass outside the range of q's draws, over the quantities
	OutsideVar string  // the quantity of RefOutside
	Steps      int
	GradEvals  int
	Wall       time.Duration
}

// BarRow is one recipe on one target over the restarts.
type BarRow struct {
	Target, Recipe string
	Proper         bool    // the proper target (the Jacobian of τ′ ↦ τ included)
	PaperK         float64 // the paper's k̄
	Runs           []BarRun
	Mean, Lo, Hi   float64 // Rubin-combined k̄ and 90% interval on the row's target
}

// BarReport is RunBar's result.
type BarReport struct {
	Config BarConfig
	Rows   []BarRow
	// RefDraws is the number of reference draws.
	RefDraws int
	// Partial says why some fits are missing ("" when every fit ended): RunBar was cancelled,
	// and returned the rows of the fits that had ended together with the context's error.
	Partial string
}

func (c BarConfig) withDefaults() BarConfig {
	if c.Restarts == 0 {
		c.Restarts = 5
	}
	if c.Draws == 0 {
		c.Draws = BarMinDraws
	}
	if c.Boot == 0 {
		c.Boot = 200
	}
	if len(c.Targets) == 0 {
		c.Targets = []string{"ncp", "cp"}
	}
	if c.Workers == 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.FirstSeed == 0 {
		c.FirstSeed = 1
	}
	return c
}

// barRecipe is one row's recipe: the paper's (fit.BFVIPaperRecipe) or vigo's default for the
// bernstein kind (fit.DefaultRecipe), with the seed and the draw count of the run.
func (c BarConfig) barRecipe(paper bool, seed uint64) fit.Recipe {
	r := fit.DefaultRecipe(fit.KindBernstein)
	if paper {
		r = fit.BFVIPaperRecipe()
		if c.PaperSteps > 0 {
			r.MaxIter = c.PaperSteps
			r.Stop.EvalEvery = min(r.Stop.EvalEvery, r.MaxIter)
			r.Stop.Window = r.MaxIter/r.Stop.EvalEvery + 1
		}
	} else if c.DefaultMaxIter > 0 {
		r.MaxIter = c.DefaultMaxIter
	}
	r.Seed, r.DiagDraws = seed, c.Draws
	return r
}

// RunBar fits eight schools (PaperEightSchools: the reference code's parameterisation, τ′
// first) with the BF-VI paper's recipe (fit.BFVIPaperRecipe, through fit.Run) on the paper's
// Jacobian-free target and on the proper one, and vigo's default Bernstein recipe
// (fit.DefaultRecipe("bernstein"): warm-started from its full-rank stage) on the proper one
// (the default cannot run on the improper target: its Laplace and Gaussian stages run off
// towards τ → 0), for the non-centred and the centred model, Restarts seeds each. Per fit it
// reports PSIS k̂ on Draws fresh draws of q (with Boot bootstrap resamples; on the paper's
// target also k̂ against the proper target), the ELBO, W1/sd of the ten quantities (θ, μ, τ)
// against posteriordb's reference draws, q's range of τ and the reference mass outside q's
// range. Fits run on Workers goroutines, each single-threaded; the results do not depend on
// Workers. Cost: per paper fit fit.PaperSteps × fit.PaperSamples draws; per default fit its
// full-rank and flow stages; plus Boot PSIS fits on Draws draws per fit.
func RunBar(ctx context.Context, cfg BarConfig) (*BarReport, error) {
	cfg = cfg.withDefaults()
	if cfg.Restarts < 1 || cfg.FirstSeed < 1 || cfg.Draws < 100 || cfg.Boot < 0 || cfg.PaperSteps < 0 || cfg.DefaultMaxIter < 0 {
		return nil, fmt.Errorf("bfvi: RunBar: restarts %d, first seed %d, draws %d, boot %d, paper steps %d, default cap %d: want ≥ 1, ≥ 1, ≥ 100, ≥ 0, ≥ 0, ≥ 0",
			cfg.Restarts, cfg.FirstSeed, cfg.Draws, cfg.Boot, cfg.PaperSteps, cfg.DefaultMaxIter)
	}
	for _, t := range cfg.Targets {
		if t != "ncp" && t != "cp" {
			return nil, fmt.Errorf("bfvi: RunBar: target %q, want ncp or cp", t)
		}
	}
	if cfg.Dir == "" {
		return nil, fmt.Errorf("bfvi: RunBar: no posteriordb directory (BarConfig.Dir) for the reference draws")
	}
	refAll, err := model.LoadDraws(filepath.Join(cfg.Dir, "draws", eightSchoolsRef+".json.zip"))
	if err != nil {
		return nil, fmt.Errorf("bfvi: RunBar: reference draws: %w", err)
	}
	ref, err := refAll.Select(referenceNames...)
	if err != nil {
		return nil, fmt.Errorf("bfvi: RunBar: reference draws: %w", err)
	}
	rep := &BarReport{Config: cfg, RefDraws: ref.Len()}
	type rowSpec struct {
		row    BarRow
		target PaperEightSchools
		paper  bool
	}
	var specs []rowSpec
	for _, t := range cfg.Targets {
		cp := t == "cp"
		name, paperK := "eight schools NCP", 0.363
		if cp {
			name, paperK = "eight schools CP", 0.534
		}
		specs = append(specs,
			rowSpec{BarRow{Target: name + ", the paper's target (no τ Jacobian)", Recipe: "paper (fit.BFVIPaperRecipe)", PaperK: paperK}, PaperEightSchools{Centred: cp}, true},
			rowSpec{BarRow{Target: name + ", proper", Recipe: "paper (fit.BFVIPaperRecipe)", Proper: true, PaperK: paperK}, PaperEightSchools{Centred: cp, Jacobian: true}, true})
		if !cfg.SkipDefault {
			specs = append(specs, rowSpec{BarRow{Target: name + ", proper", Recipe: "vigo default (fit.DefaultRecipe(\"bernstein\"))", Proper: true, PaperK: paperK},
				PaperEightSchools{Centred: cp, Jacobian: true}, false})
		}
	}
	runs := make([][]BarRun, len(specs))
	errs := make([][]error, len(specs))
	for i := range specs {
		runs[i] = make([]BarRun, cfg.Restarts)
		errs[i] = make([]error, cfg.Restarts)
	}
	// Restart-major order: a cancelled run has the same restarts done on every row (give or
	// take the jobs running), and its partial report compares like with like.
	var jobs []func()
	for r := range cfg.Restarts {
		for i, s := range specs {
			jobs = append(jobs, func() {
				if ctx.Err() != nil {
					return // cancelled: the fits not yet started are skipped
				}
				seed := uint64(cfg.FirstSeed + r)
				run, err := barFit(ctx, cfg, s.target, cfg.barRecipe(s.paper, seed), ref)
				if err != nil {
					errs[i][r] = fmt.Errorf("bfvi: RunBar: %s, %s, seed %d: %w", s.row.Target, s.row.Recipe, seed, err)
					return
				}
				runs[i][r] = run
				if cfg.Progress != nil {
					cfg.Progress(fmt.Sprintf("%s, %s, seed %d: k̂ %.3f (proper %.3f), ELBO %.3f, W1/sd %.3f, τ ≥ %.3g, ref. mass below %.4f, %d steps, %.0fs",
						s.row.Target, s.row.Recipe, seed, run.K, run.KProper, run.ELBO, run.W1SD, run.TauMin, run.RefBelow, run.Steps, run.Wall.Seconds()))
				}
			})
		}
	}
	runJobs(jobs, cfg.Workers)
	cancelled := ctx.Err()
	for i, s := range specs {
		row := s.row
		for r, err := range errs[i] {
			switch {
			case err != nil && cancelled == nil:
				return nil, err
			case err == nil && runs[i][r].Steps > 0:
				row.Runs = append(row.Runs, runs[i][r])
			}
		}
		if len(row.Runs) == 0 {
			continue
		}
		k, v := make([]float64, len(row.Runs)), make([]float64, len(row.Runs))
		for j, r := range row.Runs {
			k[j], v[j] = r.K, r.V
		}
		row.Mean, row.Lo, row.Hi = Rubin(k, v)
		rep.Rows = append(rep.Rows, row)
	}
	if cancelled != nil {
		rep.Partial = fmt.Sprintf("cancelled (%v) before every fit ended: each row holds the restarts that ended (\"seeds\"), of %d", cancelled, cfg.Restarts)
		return rep, cancelled
	}
	return rep, nil
}

// barFit runs one fit of recipe r on target tg and measures it against the reference draws.
func barFit(ctx context.Context, cfg BarConfig, tg PaperEightSchools, r fit.Recipe, ref *diag.Draws) (BarRun, error) {
	res, err := fit.Run(ctx, tg, r, fit.WithWorkers(1))
	if err != nil {
		return BarRun{}, err
	}
	n, d := len(res.LogP), tg.Dim()
	out := BarRun{Seed: r.Seed, ELBO: res.ELBO, Steps: res.Iterations, GradEvals: res.GradEvals, Wall: res.Elapsed}
	lr, lrProper := make([]float64, n), make([]float64, n)
	cons := make([]float64, n*len(referenceNames))
	for i := range n {
		z := res.Draws[i*d : (i+1)*d]
		lr[i] = res.LogP[i] - res.LogQ[i]
		lrProper[i] = lr[i]
		if !tg.Jacobian {
			lrProper[i] += tg.logJacobian(z)
		}
		tg.Constrain(z, cons[i*len(referenceNames):(i+1)*len(referenceNames)])
	}
	if out.K, out.V, err = BootstrapKHat(lr, cfg.Boot, r.Seed); err != nil {
		return BarRun{}, err
	}
	out.KProper = out.K
	if !tg.Jacobian {
		p, err := diag.PSIS(lrProper)
		if err != nil {
			return BarRun{}, fmt.Errorf("k̂ against the proper target: %w", err)
		}
		out.KProper = p.K
	}
	q := &diag.Draws{Names: referenceNames, Chains: [][]float64{cons}}
	dist, err := diag.Compare(q, ref)
	if err != nil {
		return BarRun{}, err
	}
	out.W1SD = dist.W1SD
	out.RefOutside = -1
	for j, name := range referenceNames {
		x := slices.Concat(q.Var(j)...)
		lo, hi := slices.Min(x), slices.Max(x)
		rv := slices.Concat(ref.Var(ref.Index(name))...)
		below, above := 0, 0
		for _, v := range rv {
			if v < lo {
				below++
			} else if v > hi {
				above++
			}
		}
		m := float64(below+above) / float64(len(rv))
		if m > out.RefOutside {
			out.RefOutside, out.OutsideVar = m, name
		}
		if name == "tau" {
			out.TauMin, out.TauMax = lo, hi
			out.RefBelow = float64(below) / float64(len(rv))
		}
	}
	return out, nil
}

// Markdown writes the report: the header, how the rows were made, the table and the bar.
func (r *BarReport) Markdown(w io.Writer, h resultmd.Header) error {
	var b strings.Builder
	c := r.Config
	if err := resultmd.Write(&b, "BF-VI E5 through fit: the paper's recipe on both targets, and the restated bar", h); err != nil {
		return err
	}
	b.WriteString("\n")
	paperSteps := fit.PaperSteps
	if c.PaperSteps > 0 {
		paperSteps = c.PaperSteps
	}
	fmt.Fprintf(&b, "Eight schools in the reference code's parameterisation (`bfvi.PaperEightSchools`: z = (τ′, μ, θ or θ̃), "+
		"τ = exp(0.1·τ′), all normalising constants, so the ELBOs compare with the paper's ≈ −28.7 NCP / ≈ −30.3 CP on its target). "+
		"\"paper\" is `fit.BFVIPaperRecipe()` run by `fit.Run` (examples/recipes/bfvi_paper.json): bounded map, degree 49 "+
		"(50 coefficients), linear MADE 2 × 10 without direct connections, frozen input affine map, the paper's Φ "+
		"coefficient initialisation, cold start, RMSprop lr 1e-3, T = 10 draws per step, %d steps. \"vigo default\" is "+
		"`fit.DefaultRecipe(\"bernstein\")`: full-rank stage, then M = 20, linear tails, tanh MADE 2 × 10 warm-started "+
		"in its whitened coordinates, Adam, S = 32, the trend stopping rule. %d restarts (seeds %d..%d) per row, each fit "+
		"single-threaded, %d at a time. Per restart, on %d fresh draws of q: PSIS k̂ (%d bootstrap resamples, "+
		"Rubin-combined 90%% interval over restarts as the paper does), on the paper's target also k̂ against the proper "+
		"target (log weights + log 0.1 + 0.1·τ′); the ELBO of the row's target; W1/sd = mean over θ_1..θ_8, μ, τ of "+
		"W1(q, ref)/sd(ref) against posteriordb's %d reference draws (%s); q's smallest τ; the reference mass of τ below "+
		"it; and the largest reference mass outside the range of q's draws over the ten quantities.\n\n",
		paperSteps, c.Restarts, c.FirstSeed, c.FirstSeed+c.Restarts-1, c.Workers, c.Draws, c.Boot, r.RefDraws, eightSchoolsRef)
	fmt.Fprintf(&b, "**The restated bar (proper target).** k̄ at or below the paper's on ≥ %d draws per restart, **and** "+
		"W1/sd ≤ %.2f, **and** reference mass outside q's range ≤ %g%% (every restart, every quantity), with the ELBO "+
		"reported beside them. k̂ alone cannot fail a q that misses part of the posterior: its weights p/q are computed on "+
		"draws of q only.\n\n", BarMinDraws, BarW1SD, 100*BarOutside)
	if r.Partial != "" {
		fmt.Fprintf(&b, "**Partial run:** %s.\n\n", r.Partial)
	}
	b.WriteString("| target | recipe | seeds | paper k̄ | ours k̄ (90% CI) | per-restart k̂ | its bootstrap sd | k̂ vs proper target | ELBO (per restart) | W1/sd (per restart) | q's min τ (per restart) | ref. mass τ < q's min | max ref. mass outside q's range | steps | grad. evals | time | restated bar |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|---|---:|---:|---:|---|\n")
	for _, row := range r.Rows {
		col := func(f func(BarRun) string) string {
			s := make([]string, len(row.Runs))
			for i, run := range row.Runs {
				s[i] = f(run)
			}
			return strings.Join(s, " ")
		}
		var wall time.Duration
		steps, evals := make([]int, len(row.Runs)), make([]int, len(row.Runs))
		for i, run := range row.Runs {
			wall += run.Wall
			steps[i], evals[i] = run.Steps, run.GradEvals
		}
		slices.Sort(steps)
		slices.Sort(evals)
		fmt.Fprintf(&b, "| %s | %s | %s | %.3f | %.3f (%.3f, %.3f) | %s | %s | %s | %s | %s | %s | %s | %s | %d | %d | %.0fs | %s |\n",
			row.Target, row.Recipe, col(func(r BarRun) string { return fmt.Sprint(r.Seed) }), row.PaperK, row.Mean, row.Lo, row.Hi,
			col(func(r BarRun) string { return fmt.Sprintf("%.2f", r.K) }),
			col(func(r BarRun) string { return fmt.Sprintf("%.3f", math.Sqrt(r.V)) }),
			col(func(r BarRun) string { return fmt.Sprintf("%.2f", r.KProper) }),
			col(func(r BarRun) string { return fmt.Sprintf("%.2f", r.ELBO) }),
			col(func(r BarRun) string { return fmt.Sprintf("%.3f", r.W1SD) }),
			col(func(r BarRun) string { return fmt.Sprintf("%.2f", r.TauMin) }),
			col(func(r BarRun) string { return fmt.Sprintf("%.3f", r.RefBelow) }),
			col(func(r BarRun) string { return fmt.Sprintf("%.3f (%s)", r.RefOutside, r.OutsideVar) }),
			steps[len(steps)/2], evals[len(evals)/2], wall.Seconds(), row.verdict(c.Draws))
	}
	b.WriteString("\n\"steps\" and \"grad. evals\" are medians over the restarts (grad. evals include the default's full-rank stage and mode searches); \"time\" the summed wall time of the restarts' fits on a shared machine.\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// verdict judges a row by the restated bar (proper target) or by the paper's own comparison (the
// paper's target: k̄ at or below its k̄).
func (row BarRow) verdict(draws int) string {
	if !row.Proper {
		if row.Mean <= row.PaperK {
			return "— (paper's target: k̄ at or below the paper's)"
		}
		return "— (paper's target: k̄ above the paper's)"
	}
	var fails []string
	if draws < BarMinDraws {
		return fmt.Sprintf("not judged: %d draws < %d", draws, BarMinDraws)
	}
	if row.Mean > row.PaperK {
		fails = append(fails, fmt.Sprintf("k̄ %.3f > %.3f", row.Mean, row.PaperK))
	}
	w1, out := 0.0, 0.0
	for _, r := range row.Runs {
		w1, out = math.Max(w1, r.W1SD), math.Max(out, r.RefOutside)
	}
	if w1 > BarW1SD {
		fails = append(fails, fmt.Sprintf("W1/sd up to %.3f > %.2f", w1, BarW1SD))
	}
	if out > BarOutside {
		fails = append(fails, fmt.Sprintf("ref. mass outside q up to %.3f > %g", out, BarOutside))
	}
	if len(fails) == 0 {
		return "**met**"
	}
	return "not met: " + strings.Join(fails, "; ")
}
