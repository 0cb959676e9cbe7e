package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/objective"
	"github.com/vigo-bayes/vigo/rng"
	"github.com/vigo-bayes/vigo/zoo"
)

// Where a flow fit's time goes (vigo bench flowcost): for each flow kind and posterior that
// needs a flow, the cost of one draw of a gradient step split into the family's part (the
// flow's forward and backward passes and the estimator's tape work, timed on a free target)
// and the model's part (one log density and gradient), and, for FitKinds, the number of
// gradient evaluations the default fit of that kind takes (FitKinds), so that evaluations × cost per
// draw can be set against the fit's wall time.

// FlowCostConfig configures RunFlowCost.
type FlowCostConfig struct {
	Dir    string        // posteriordb directory (garch and gp_pois_regr data)
	Kinds  []string      // flow kinds (fit.IsFlowKind); default bernstein, maf, realnvp
	Budget time.Duration // timing per measurement (best of 3 runs of Budget/3); default 0.6 s
	// FitKinds are the kinds whose default fit (fit.DefaultRecipe(kind), seed 1, one worker)
	// also runs on each posterior, to count its gradient evaluations; empty: none.
	FitKinds []string
}

// FlowCostRow is one (posterior, kind): costs per draw of a step (thread CPU time), the
// step's S and estimator, and for FitKinds the default fit's totals.
type FlowCostRow struct {
	Posterior, Kind  string
	Dim, Params, S   int
	Estimator        string
	Batched          bool          // the real target's step took the batched path (model.BatchTarget)
	Family, Model    time.Duration // per draw: family on a free target; model gradient
	Step             time.Duration // per draw: the step on the real target
	Iters, GradEvals int           // the default fit (FitKinds)
	FitWall, FitCPU  time.Duration // the default fit's wall time and the process's CPU time during it
	Err              string
}

// FlowCostReport holds the rows of RunFlowCost.
type FlowCostReport struct {
	Config FlowCostConfig
	Rows   []FlowCostRow
}

// flowCostPosteriors are the public posteriors that need a flow (issue 17), as targets.
type namedTarget struct {
	name string
	t    model.Target
}

func flowCostPosteriors(dir string) ([]namedTarget, error) {
	out := []namedTarget{
		{"eight_schools-eight_schools_noncentered", zoo.EightSchools()},
		{"eight_schools-eight_schools_centered", EightSchoolsCentered().Target},
	}
	for _, n := range []string{"garch", "gp_pois_regr"} {
		m, err := zoo.Load(n, dir)
		if err != nil {
			return nil, fmt.Errorf("bench: RunFlowCost: %w", err)
		}
		out = append(out, namedTarget{m.Posterior, m})
	}
	return out, nil
}

// freeTarget is log p(z) = −½‖z‖²: a step on it costs the family alone (and ≈ 2·Dim flops).
type freeTarget int

func (f freeTarget) Dim() int { return int(f) }

func (freeTarget) LogDensity(t *ad.Tape, z ad.Var) ad.Var { return t.MulC(t.Dot(z, z), -0.5) }

// freeBatch is freeTarget with a batched form (its rows one by one, model.LogDensityRows), so
// that the family's cost is timed on the batched path when the posterior's step takes it.
type freeBatch struct{ freeTarget }

func (f freeBatch) LogDensityBatch(t *ad.Tape, Z ad.Var) (ad.Var, bool) {
	return model.LogDensityRows(t, f.freeTarget, Z), true
}

// hasBatch reports whether tg's batched form exists (model.BatchTarget with ok = true).
func hasBatch(tg model.Target) bool {
	b, ok := tg.(model.BatchTarget)
	if !ok {
		return false
	}
	var t ad.Tape
	_, ok = b.LogDensityBatch(&t, t.ConstRef(make([]float64, tg.Dim())))
	return ok
}

// threadCPU returns the calling thread's CPU time (Linux RUSAGE_THREAD; 0 elsewhere).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuPer returns the least thread CPU time per call of f over 3 runs of budget/3 each.
func cpuPer(f func(), budget time.Duration) time.Duration {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	f()
	best := time.Duration(math.MaxInt64)
	for range 3 {
		n, t0, w0 := 0, threadCPU(), time.Now()
		for time.Since(w0) < budget/3 || n < 3 {
			f()
			n++
		}
		if c := (threadCPU() - t0) / time.Duration(n); c < best {
			best = c
		}
	}
	return best
}

// RunFlowCost measures every (posterior, kind) in one run. On cancellation it returns the
// rows measured so far with the context's error.
func RunFlowCost(ctx context.Context, cfg FlowCostConfig) (*FlowCostReport, error) {
	if len(cfg.Kinds) == 0 {
		cfg.Kinds = []string{"bernstein", "maf", "realnvp"}
	}
	for _, k := range cfg.Kinds {
		if !fit.IsFlowKind(k) {
			return nil, fmt.Errorf("bench: RunFlowCost: Kinds: %q is not a flow kind", k)
		}
	}
	if cfg.Budget <= 0 {
		cfg.Budget = 600 * time.Millisecond
	}
	ps, err := flowCostPosteriors(cfg.Dir)
	if err != nil {
		return nil, err
	}
	rep := &FlowCostReport{Config: cfg}
	for _, p := range ps {
		d := p.t.Dim()
		z := ParamPoint(d)
		g := make([]float64, d)
		var tp ad.Tape
		mc := cpuPer(func() { model.Gradient(&tp, p.t, z, g) }, cfg.Budget)
		for _, kind := range cfg.Kinds {
			if err := ctx.Err(); err != nil {
				return rep, err
			}
			rep.Rows = append(rep.Rows, flowCostRow(ctx, cfg, p.name, p.t, kind, mc))
		}
	}
	return rep, nil
}

func flowCostRow(ctx context.Context, cfg FlowCostConfig, name string, tg model.Target, kind string, mc time.Duration) FlowCostRow {
	r := fit.DefaultRecipe(kind)
	d := tg.Dim()
	row := FlowCostRow{Posterior: name, Kind: kind, Dim: d, S: r.Objective.Samples, Estimator: r.Objective.Estimator, Model: mc}
	fam, err := r.Family.NewFamily(d, r.Seed)
	if err != nil {
		row.Err = err.Error()
		return row
	}
	row.Params = fam.NumParams()
	o := objective.Options{K: r.Objective.K, STL: r.Objective.Estimator == fit.EstSTL || r.Objective.Estimator == fit.EstDReG}
	params := make([]float64, fam.NumParams())
	fam.Init(params, nil, 0.5)
	st := rng.New(1, 7)
	eps := make([]float64, row.S*fam.NoiseDim()*max(o.K, 1))
	for i := range eps {
		eps[i] = st.NormFloat64()
	}
	grad := make([]float64, len(params))
	per := func(t model.Target) time.Duration {
		e, err := objective.New(t, fam, o)
		if err != nil {
			row.Err = err.Error()
			return 0
		}
		return cpuPer(func() { e.Evaluate(params, eps, grad) }, cfg.Budget) / time.Duration(row.S)
	}
	row.Batched = hasBatch(tg) && !o.STL && o.K <= 1
	var free model.Target = freeTarget(d)
	if row.Batched {
		free = freeBatch{freeTarget(d)}
	}
	row.Family = per(free)
	row.Step = per(tg)
	if slices.Contains(cfg.FitKinds, kind) && row.Err == "" {
		t0 := time.Now()
		c0, _ := processCPU()
		res, err := fit.Run(ctx, tg, r, fit.WithWorkers(1))
		c1, _ := processCPU()
		row.FitWall, row.FitCPU = time.Since(t0), c1-c0
		if err != nil {
			row.Err = err.Error()
			return row
		}
		row.Iters, row.GradEvals = res.Iterations, res.GradEvals
	}
	return row
}

// Markdown writes the report: per posterior and kind the costs per draw, the model's share,
// and for FitKinds the default fit's evaluations and its wall time against evaluations × step.
func (rep *FlowCostReport) Markdown(w io.Writer, h resultmd.Header) error {
	var b strings.Builder
	h.Machine = "one goroutine (fits: one worker)"
	resultmd.Write(&b, "Where a flow fit's time goes: steps × draws × (family + model)", h)
	b.WriteString(`
Per draw of a gradient step of fit.DefaultRecipe(kind) (its S and estimator; parameters at the
family's Init): **family** = thread CPU time of objective.Estimator.Evaluate on the free target
−½‖z‖² divided by S (the flow's forward and backward passes, its log-determinant and the
estimator's tape work; on the batched path when the posterior's step takes it); **model** = one log density and gradient of the posterior
(model.Gradient at a fixed point); **step** = Evaluate on the posterior divided by S (≈ family +
model; "batched" when the step took objective's batched path, model.BatchTarget). Each the
least of 3 timing runs. With --fit KINDS: the default fit of that kind with seed 1 and one worker
(warm-start stage included), its gradient evaluations × step per draw as the predicted cost,
against the process's CPU time during the fit (the rest: tracking estimates, k̂ checks, the
optimiser, the warm start's own steps at a full-rank cost, the garbage collector) and its wall
time (which also counts the waits for a core on a loaded machine).

| posterior | kind | dim | params | S | estimator | family µs/draw | model µs/draw | step µs/draw | model share | fit iters | grad evals | evals × step s | fit CPU s | fit wall s |
|---|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|
`)
	for _, x := range rep.Rows {
		if x.Err != "" {
			fmt.Fprintf(&b, "| %s | %s | %d | | | | | | | | | | | | error: %s |\n", x.Posterior, x.Kind, x.Dim, strings.ReplaceAll(x.Err, "|", "\\|"))
			continue
		}
		est := x.Estimator
		if x.Batched {
			est += ", batched"
		}
		us := func(t time.Duration) float64 { return float64(t.Nanoseconds()) / 1e3 }
		share := us(x.Model) / us(x.Step)
		fitCells := "— | — | — | — | —"
		if x.GradEvals > 0 {
			fitCells = fmt.Sprintf("%d | %d | %.1f | %.1f | %.1f", x.Iters, x.GradEvals, float64(x.GradEvals)*x.Step.Seconds(), x.FitCPU.Seconds(), x.FitWall.Seconds())
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %s | %.2f | %.2f | %.2f | %.0f%% | %s |\n",
			x.Posterior, x.Kind, x.Dim, x.Params, x.S, est, us(x.Family), us(x.Model), us(x.Step), 100*share, fitCells)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
