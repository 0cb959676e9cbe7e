package bench

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"github.com/vigo-bayes/vigo/zoo"
)

// vigo bench flows (issue 17): in one run per posterior, each flow kind's default recipe
// ("after"), the flow recipe vigo used before issue 17 (fit.PreviousFlowRecipe, "before"),
// the full-rank Gaussian, vigo's NUTS and, when rstan is installed, Stan's NUTS, each on wall
// time, target gradient evaluations and W1/sd against the posteriordb reference draws. The
// runs are interleaved — for each seed every method once, in a fixed order — so that the
// machine's load drifts over all methods alike, and the wall-time ratios (flow / NUTS) are
// ratios of medians over seeds from the same run.
//
// "Same answer within noise" (the bar): the after recipe's median W1/sd over seeds is
// at most the before recipe's median plus twice the pooled seed-to-seed standard deviation of
// W1/sd, √((s²_before + s²_after)/2) (the one that exists when the other recipe ran one seed).
// A smaller W1/sd always passes: the bar guards against a worse fit, not a better one. "≤ 1/10 of the gradient evaluations" compares the medians.

// FlowsDefaultPosteriors are the posteriors of vigo bench flows when none are given: the
// public posteriordb posteriors on which a Gaussian is not enough (posteriordb_flows_trend.md).
var FlowsDefaultPosteriors = []string{"eight_schools", "garch", "gp_pois_regr"}

// FlowsConfig says what RunFlows runs.
type FlowsConfig struct {
	// Posteriors are zoo short names or posteriordb names (the zoo's hand-written model), or
	// names of posteriordb-full posteriors with reference draws (their Stan program compiled
	// by package stan; needs Full); nil: FlowsDefaultPosteriors.
	Posteriors []string
	// Kinds are the flow kinds; nil: maf, realnvp, bernstein.
	Kinds []string
	Seeds int // seeds 1..Seeds; 0: 3
	// Before adds each kind's fit.PreviousFlowRecipe as method "KIND-before", run with seeds
	// 1..BeforeSeeds only (0: all seeds): it costs ten times the rest.
	Before      bool
	BeforeSeeds int
	// NoNUTS leaves out vigo's NUTS (4 chains × (1000 + 1000), one core).
	NoNUTS bool
	// StanNUTS is the path of bench/stan/flows_nuts.R: Stan's NUTS on the posteriors of its
	// table ("": not run); Rscript the R interpreter ("": "Rscript").
	StanNUTS, Rscript string
	// Patch, when not "", is a JSON object merged into each kind's default recipe (the
	// "after" runs; PatchRecipe), e.g. {"stop":{"window":7}}: ablations of the defaults.
	Patch     string
	Dir, Full string // posteriordb and posteriordb-full directories
	RunOptions
	Progress func(SeedResult)
}

// FlowsReport is every run of RunFlows.
type FlowsReport struct {
	Posteriors []string
	Methods    []Method
	Kinds      []string
	Seeds      int
	Before     bool
	Results    []SeedResult
}

// flowsMethods returns the methods of cfg in run order: fullrank, each kind (after, with
// cfg.Patch), each kind's before recipe, NUTS, Stan's NUTS.
func flowsMethods(cfg FlowsConfig) ([]Method, error) {
	out := []Method{RecipeMethod(fit.KindFullRank, "full-rank Gaussian (Cholesky)", StanFullRank, fit.DefaultRecipe(fit.KindFullRank))}
	for _, k := range cfg.Kinds {
		r, about := fit.DefaultRecipe(k), "today's fit.DefaultRecipe"
		if cfg.Patch != "" {
			var err error
			if r, err = PatchRecipe(r, cfg.Patch); err != nil {
				return nil, fmt.Errorf("bench: RunFlows: Patch (kind %s): %w", k, err)
			}
			about += " patched with " + cfg.Patch
		}
		out = append(out, RecipeMethod(k, fmt.Sprintf("%s flow, %s (noise rule over %d estimates)", k, about, r.Stop.Window), StanNone, r))
	}
	if cfg.Before {
		for _, k := range cfg.Kinds {
			out = append(out, RecipeMethod(k+"-before", k+" flow, fit.PreviousFlowRecipe (the default before issue 17)", StanNone, fit.PreviousFlowRecipe(k)))
		}
	}
	if !cfg.NoNUTS {
		out = append(out, nutsMethod())
	}
	if cfg.StanNUTS != "" {
		out = append(out, stanNUTSMethod(cfg))
	}
	return out, nil
}

// PatchRecipe returns r with the JSON object patch merged into its JSON form — an object
// merges key by key (recursively), any other value replaces — and validated; a key the
// Recipe does not have is an error. Example: {"stop":{"window":7},"objective":{"samples":16}}.
func PatchRecipe(r fit.Recipe, patch string) (fit.Recipe, error) {
	var p map[string]any
	if err := json.Unmarshal([]byte(patch), &p); err != nil {
		return fit.Recipe{}, fmt.Errorf("bench: PatchRecipe: patch is not a JSON object (patch=%s): %w", patch, err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fit.Recipe{}, fmt.Errorf("bench: PatchRecipe: %w", err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return fit.Recipe{}, fmt.Errorf("bench: PatchRecipe: %w", err)
	}
	mergeJSON(doc, p)
	if b, err = json.Marshal(doc); err != nil {
		return fit.Recipe{}, fmt.Errorf("bench: PatchRecipe: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var out fit.Recipe
	if err := dec.Decode(&out); err != nil {
		return fit.Recipe{}, fmt.Errorf("bench: PatchRecipe: patch=%s: %w", patch, err)
	}
	if err := out.Validate(); err != nil {
		return fit.Recipe{}, fmt.Errorf("bench: PatchRecipe: patch=%s: %w", patch, err)
	}
	return out, nil
}

// mergeJSON merges src into dst: objects key by key, other values replace.
func mergeJSON(dst, src map[string]any) {
	for k, v := range src {
		sv, ok := v.(map[string]any)
		dv, ok2 := dst[k].(map[string]any)
		if ok && ok2 {
			mergeJSON(dv, sv)
			continue
		}
		dst[k] = v
	}
}

// RunFlows runs cfg: for each posterior, for each seed, every method once. A run that fails
// is an abort row; a cancelled context returns the partial report with its error.
func RunFlows(ctx context.Context, cfg FlowsConfig) (*FlowsReport, error) {
	if cfg.Seeds == 0 {
		cfg.Seeds = 3
	}
	if cfg.Seeds < 0 {
		return nil, fmt.Errorf("bench: RunFlows: Seeds must be positive (Seeds=%d)", cfg.Seeds)
	}
	if err := cfg.RunOptions.validate("RunFlows"); err != nil {
		return nil, err
	}
	if cfg.Kinds == nil {
		cfg.Kinds = []string{fit.KindMAF, fit.KindRealNVP, fit.KindBernstein}
	}
	for _, k := range cfg.Kinds {
		if !fit.IsFlowKind(k) {
			return nil, fmt.Errorf("bench: RunFlows: Kinds: %q is not a flow kind (want %s, %s or %s)", k, fit.KindMAF, fit.KindRealNVP, fit.KindBernstein)
		}
	}
	if cfg.Posteriors == nil {
		cfg.Posteriors = FlowsDefaultPosteriors
	}
	if cfg.Dir == "" {
		return nil, errors.New("bench: RunFlows: Config.Dir is empty: give the posteriordb directory")
	}
	methods, err := flowsMethods(cfg)
	if err != nil {
		return nil, err
	}
	rep := &FlowsReport{Methods: methods, Kinds: cfg.Kinds, Seeds: cfg.Seeds, Before: cfg.Before}
	for _, name := range cfg.Posteriors {
		m, ref, err := flowsPosterior(cfg, name)
		if err != nil {
			return rep, err
		}
		rep.Posteriors = append(rep.Posteriors, m.Posterior)
		for s := 1; s <= cfg.Seeds; s++ {
			for _, meth := range rep.Methods {
				if strings.HasSuffix(meth.Name, "-before") && cfg.BeforeSeeds > 0 && s > cfg.BeforeSeeds {
					continue
				}
				r := runOne(ctx, m, ref, meth, uint64(s), cfg.RunOptions)
				if err := ctx.Err(); err != nil {
					return rep, err
				}
				rep.Results = append(rep.Results, r)
				if cfg.Progress != nil {
					cfg.Progress(r)
				}
			}
		}
	}
	return rep, nil
}

// flowsPosterior loads a zoo model (name known to the zoo) or a posteriordb-full posterior's
// compiled Stan program, with its reference draws.
func flowsPosterior(cfg FlowsConfig, name string) (*zoo.Model, *diag.Draws, error) {
	if info, err := zoo.Get(name); err == nil {
		m, err := zoo.Load(info.Name, cfg.Dir)
		if err != nil {
			return nil, nil, fmt.Errorf("bench: RunFlows: %w", err)
		}
		ref, err := referenceDraws(m, cfg.Dir)
		return m, ref, err
	}
	if cfg.Full == "" {
		return nil, nil, fmt.Errorf("bench: RunFlows: posterior %q is not a zoo model and no posteriordb-full directory was given", name)
	}
	m, dir, err := stanPosterior(cfg.Dir, cfg.Full, name)
	if err != nil {
		return nil, nil, err
	}
	ref, err := referenceDraws(m, dir)
	return m, ref, err
}

// stanNUTSMethod is Stan's NUTS through cfg.StanNUTS (bench/stan/flows_nuts.R): 4 chains ×
// (1000 + 1000) on one core, its draws read back and measured like every other method's. The
// wall time is the script's own sampling time (R's start-up and the compilation, cached in
// ~/.cache/vigo-stan, are not counted); the gradient count is the sum of n_leapfrog__.
func stanNUTSMethod(cfg FlowsConfig) Method {
	rscript := cfg.Rscript
	if rscript == "" {
		rscript = "Rscript"
	}
	return Method{Name: "stan-nuts", About: "Stan's NUTS (rstan), 4 chains × (1000 warmup + 1000 draws), adapt_delta 0.8, one core; wall = sampling only (R's own clock)",
		Run: func(ctx context.Context, m *zoo.Model, seed uint64, _ RunOptions) (*Outcome, error) {
			tmp, err := os.MkdirTemp("", "vigo-flows-nuts")
			if err != nil {
				return nil, fmt.Errorf("bench: stan-nuts: %w", err)
			}
			defer os.RemoveAll(tmp)
			csvPath := filepath.Join(tmp, "draws.csv")
			cmd := exec.CommandContext(ctx, rscript, cfg.StanNUTS, m.Posterior, strconv.FormatUint(seed, 10), csvPath)
			cmd.Env = append(os.Environ(), "POSTERIORDB="+cfg.Dir)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				msg := strings.TrimSpace(stderr.String())
				if i := strings.LastIndex(msg, "\n"); i >= 0 {
					msg = msg[i+1:]
				}
				return nil, fmt.Errorf("bench: stan-nuts: %s %s %s: %v: %s", rscript, cfg.StanNUTS, m.Posterior, err, msg)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			f := strings.Split(lines[len(lines)-1], "\t")
			if len(f) != 2 {
				return nil, fmt.Errorf("bench: stan-nuts: unexpected output %q", lines[len(lines)-1])
			}
			wall, err1 := strconv.ParseFloat(f[0], 64)
			grads, err2 := strconv.Atoi(f[1])
			if err := errors.Join(err1, err2); err != nil {
				return nil, fmt.Errorf("bench: stan-nuts: output %q: %w", lines[len(lines)-1], err)
			}
			draws, err := readChainCSV(csvPath)
			if err != nil {
				return nil, fmt.Errorf("bench: stan-nuts: %w", err)
			}
			return &Outcome{Draws: draws, KHat: math.NaN(), GradEvals: grads, Converged: true,
				Status: fmt.Sprintf("Stan sampling %.2fs (R's clock)", wall), wall: time.Duration(wall * float64(time.Second))}, nil
		}}
}

// readChainCSV reads a CSV whose first column is the chain number (1, 2, …, in blocks) and
// the others named variables, as diag.Draws.
func readChainCSV(path string) (*diag.Draws, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	head, err := r.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(head) < 2 || head[0] != "chain" {
		return nil, fmt.Errorf("%s: first column %q, want chain", path, head[0])
	}
	d := &diag.Draws{Names: head[1:]}
	last := ""
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if rec[0] != last {
			d.Chains = append(d.Chains, nil)
			last = rec[0]
		}
		c := len(d.Chains) - 1
		for _, s := range rec[1:] {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			d.Chains[c] = append(d.Chains[c], v)
		}
	}
	return d, d.Check()
}

// FlowsRow is one posterior × method of the report: medians over seeds and the seed-to-seed
// standard deviation of W1/sd.
type FlowsRow struct {
	Summary
	W1SDs  []float64 // W1/sd of each seed that ran
	W1SDSD float64   // their standard deviation (NaN with fewer than 2)
}

func (r *FlowsReport) rows() []FlowsRow {
	rep := Report{Posteriors: r.Posteriors, Methods: r.Methods, Seeds: r.Seeds, Results: r.Results}
	var out []FlowsRow
	for _, s := range rep.Summaries() {
		row := FlowsRow{Summary: s}
		for _, res := range r.Results {
			if res.Posterior == s.Posterior && res.Method == s.Method.Name && res.Err == nil {
				row.W1SDs = append(row.W1SDs, res.W1SD)
			}
		}
		row.W1SDSD = seedSD(row.W1SDs)
		out = append(out, row)
	}
	return out
}

func seedSD(x []float64) float64 {
	if len(x) < 2 {
		return math.NaN()
	}
	m := 0.0
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	ss := 0.0
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	return math.Sqrt(ss / float64(len(x)-1))
}

// FlowsGoal is one posterior × flow kind against the bar.
type FlowsGoal struct {
	Posterior, Kind             string
	BeforeEvals, AfterEvals     float64 // medians
	BeforeW1SD, AfterW1SD       float64 // medians
	Noise                       float64 // pooled seed-to-seed sd of W1/sd
	SameAnswer, TenthEvals      bool
	AfterWall, NUTSWall, FRWall float64 // medians, seconds
	StanNUTSWall                float64 // median, seconds (NaN without --stan-nuts)
}

// Reached reports whether g meets the bar: the same answer with at most a tenth of
// the gradient evaluations.
func (g FlowsGoal) Reached() bool { return g.SameAnswer && g.TenthEvals }

// Goals compares each kind's after and before rows (Before runs only).
func (r *FlowsReport) Goals() []FlowsGoal {
	rows := r.rows()
	find := func(p, m string) *FlowsRow {
		i := slices.IndexFunc(rows, func(x FlowsRow) bool { return x.Posterior == p && x.Method.Name == m && x.Runs > 0 })
		if i < 0 {
			return nil
		}
		return &rows[i]
	}
	var out []FlowsGoal
	for _, p := range r.Posteriors {
		for _, k := range r.Kinds {
			a, b := find(p, k), find(p, k+"-before")
			if a == nil {
				continue
			}
			g := FlowsGoal{Posterior: p, Kind: k, AfterEvals: a.GradEvals, AfterW1SD: a.W1SD, AfterWall: a.Wall,
				BeforeEvals: math.NaN(), BeforeW1SD: math.NaN(), Noise: math.NaN(), NUTSWall: math.NaN(), FRWall: math.NaN(),
				StanNUTSWall: math.NaN()}
			if n := find(p, "nuts"); n != nil {
				g.NUTSWall = n.Wall
			}
			if n := find(p, "stan-nuts"); n != nil {
				g.StanNUTSWall = n.Wall
			}
			if f := find(p, fit.KindFullRank); f != nil {
				g.FRWall = f.Wall
			}
			if b != nil {
				g.BeforeEvals, g.BeforeW1SD = b.GradEvals, b.W1SD
				g.Noise = pooledSD(a.W1SDSD, b.W1SDSD)
				// With one seed on each side the noise is unknown (NaN): then only an after at or
				// below the before counts as the same answer.
				g.SameAnswer = a.W1SD <= b.W1SD || a.W1SD <= b.W1SD+2*g.Noise
				g.TenthEvals = a.GradEvals <= b.GradEvals/10
			}
			out = append(out, g)
		}
	}
	return out
}

// pooledSD is √((a² + b²)/2), or the one of a and b that is not NaN (a single seed has no
// sd), or NaN.
func pooledSD(a, b float64) float64 {
	switch {
	case math.IsNaN(a):
		return b
	case math.IsNaN(b):
		return a
	}
	return math.Sqrt((a*a + b*b) / 2)
}

// Markdown writes the report: header, the goal table (with Before), the table of medians with
// the flow/NUTS wall-time ratio, and every run.
func (r *FlowsReport) Markdown(w io.Writer, h resultmd.Header) error {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	resultmd.Write(&b, "vigo bench flows: flow fits against full rank and NUTS, before and after issue 17", h)
	p("- seeds 1..%d, interleaved (for each seed every method once, in the order below); one fit or chain at a time\n", r.Seeds)
	p("- methods:\n")
	for _, m := range r.Methods {
		p("  - `%s`: %s\n", m.Name, m.About)
	}
	p("\nW1/sd: mean over the reported quantities of W1(draws, reference)/sd(reference) on the constrained scale against the 10,000 posteriordb reference draws (1,000 draws per fit, 4,000 per NUTS run). ")
	p("Gradient evaluations include the mode search, a warm-start stage and the diagnostic draws. ")
	p("Values are medians over seeds; \"± sd\" is the seed-to-seed standard deviation.\n\n")
	if r.Before {
		p("## The bar: same W1/sd within noise with ≤ 1/10 of the gradient evaluations\n\n")
		p("Noise = pooled seed-to-seed sd of W1/sd of before and after, √((s²_b + s²_a)/2) (s_a alone when before ran one seed; unknown, —, with one seed on each side); same answer: median W1/sd after ≤ median before + 2·noise (with the noise unknown: ≤ median before). ")
		p("Goal: both. Wall ratios: the after recipe's median wall time over that of vigo's NUTS and of Stan's NUTS in this run.\n\n")
		p("| posterior | flow | grad evals before | after | after/before | W1/sd before | after | noise | same answer | ≤ 1/10 evals | goal | flow / NUTS wall | flow / Stan NUTS wall |\n")
		p("|---|---|---:|---:|---:|---:|---:|---:|---|---|---|---:|---:|\n")
		goals := r.Goals()
		reached := 0
		for _, g := range goals {
			goal := "not reached"
			if g.Reached() {
				goal, reached = "**reached**", reached+1
			}
			p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", g.Posterior, g.Kind, gradNum(g.BeforeEvals), gradNum(g.AfterEvals),
				num(g.AfterEvals/g.BeforeEvals), num(g.BeforeW1SD), num(g.AfterW1SD), num(g.Noise), yesNo(g.SameAnswer), yesNo(g.TenthEvals),
				goal, num(g.AfterWall/g.NUTSWall), num(g.AfterWall/g.StanNUTSWall))
		}
		p("\nGoal reached on %d of %d posterior × flow pairs.\n\n", reached, len(goals))
	}
	p("## Medians over seeds\n\n")
	p("| posterior | method | runs | conv | wall s | wall / NUTS wall | grad evals | k̂ | W1/sd | ± sd | sd ratio | max\\|Δmean\\|/sd |\n")
	p("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	rows := r.rows()
	for _, row := range rows {
		nuts := math.NaN()
		for _, x := range rows {
			if x.Posterior == row.Posterior && x.Method.Name == "nuts" && x.Runs > 0 {
				nuts = x.Wall
			}
		}
		p("| %s | %s | %d | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", row.Posterior, row.Method.Name, row.Runs, row.Converged,
			num(row.Wall), num(row.Wall/nuts), gradNum(row.GradEvals), num(row.KHat), num(row.W1SD), num(row.W1SDSD), num(row.SDRatio), num(row.MaxMeanDiffSD))
	}
	p("\n## Every run\n\n")
	p("| posterior | method | seed | wall s | grad evals | k̂ | W1/sd | sd ratio | stopped |\n")
	p("|---|---|---:|---:|---:|---:|---:|---:|---|\n")
	for _, res := range r.Results {
		if res.Err != nil {
			p("| %s | %s | %d | %s | — | — | — | — | aborted: %s |\n", res.Posterior, res.Method, res.Seed, num(res.Wall.Seconds()), oneLine(res.Err.Error()))
			continue
		}
		p("| %s | %s | %d | %s | %d | %s | %s | %s | %s |\n", res.Posterior, res.Method, res.Seed, num(res.Wall.Seconds()), res.GradEvals,
			num(res.KHat), num(res.W1SD), num(res.SDRatio), oneLine(res.Status))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func yesNo(b bool) string {
	if b {
		return "**yes**"
	}
	return "no"
}
