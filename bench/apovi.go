package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/apovi"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"github.com/vigo-bayes/vigo/rng"
)

// APOVIParts are the experiments RunAPOVI knows: e1 (Table 1, ELBO against |Ξ|), e2
// (Figures 4–6, 1-D predictions), e3 (Table 2, MNIST-10k image completion), e3-fashion (the
// same on Fashion-MNIST, the true 60,000-image regime) and speed (vigo predict against a POVI
// training step; one APOVI layer against a PyTorch peer).
var APOVIParts = []string{"e1", "e2", "e3", "e3-fashion", "speed"}

// APOVIConfig says what RunAPOVI runs: the experiments of Rochussen (2023), "Amortised
// Inference in Bayesian Neural Networks", arXiv:2309.03018 (../shared/docs/apovi.md §5). A
// zero size field takes the default of RunAPOVI.
type APOVIConfig struct {
	Parts []string
	// Quick shrinks every part to a smoke run.
	Quick bool
	// MNIST is the directory of the 10,000-digit MNIST IDX files (for e3); FashionMNIST that of
	// Fashion-MNIST's four IDX files (for e3-fashion).
	MNIST, FashionMNIST string
	// Torch is the path of bench/peers/apovi_layer.py (run with /usr/bin/python3, one thread);
	// RepoDir the repository root, where `go test -bench` times vigo's layer (both for speed;
	// "" skips the comparison).
	Torch, RepoDir string
	// PlotDir, when not empty, receives the figures (PNG).
	PlotDir string
	Seed    uint64
	// E1Reps repetitions (meta-datasets per |Ξ| and seeds), E1Iters the iteration cap of
	// every E1 training run; E2Iters that of E2's; E3Iters that of E3's.
	E1Reps, E1Iters, E2Iters, E3Iters int
	// E3Hidden and E3InferenceHidden are the widths of E3's BNN and inference networks.
	E3Hidden, E3InferenceHidden []int
	// E3Large is the number of training images of E3's "large" regime (0: the whole pool).
	E3Large int
	// E3Regimes are the regimes E3 trains, a subset of {"10", "large"} (default both).
	E3Regimes []string
	// E3Stop is E3's stopping rule, one of E3Stops: "thesis" (default: the thesis's rule on
	// the training loss) or "validation" (held-out squared error, apovi.Validation).
	E3Stop string
	// SkipConvCNP leaves the ConvCNP out of e2.
	SkipConvCNP bool
	// Progress receives one line per training run (nil: none).
	Progress io.Writer
}

// APOVIReport is the result of RunAPOVI.
type APOVIReport struct {
	Cfg     APOVIConfig
	E1      *E1Result
	E2      *E2Result
	E3      *E3Result
	E3F     *E3Result // Fashion-MNIST
	Speed   *SpeedResult
	Plots   []string
	Elapsed map[string]time.Duration
}

// Thesis's Table 1 (report p.18): total test-set ELBO (nats), mean ± sd over 5 repetitions.
var thesisTable1 = map[string][2]float64{
	"POVI": {3.13, 0.37}, "0": {5.38, 0.59}, "1": {-0.24, 6.12}, "2": {3.22, 4.05}, "5": {4.81, 0.49}, "10": {4.48, 0.88},
}

// e1Sizes are Table 1's |Ξ|.
var e1Sizes = []int{0, 1, 2, 5, 10}

// E1Result is Table 1 rerun.
type E1Result struct {
	Reps, Iters, TestSets int
	ES                    apovi.EarlyStop
	// ELBO[col][rep] is the mean over the test sets of the total test-set ELBO (S = 100);
	// columns "POVI", "0", "1", "2", "5", "10".
	ELBO map[string][]float64
	// PerSet[col][rep][k] is the ELBO on test set k.
	PerSet map[string][][]float64
	// Iters[col] are the iterations run by each training run of that column.
	RunIters map[string][]int
	TestN    []int
	Wall     map[string]time.Duration
}

// e1Cols is the order of Table 1's columns.
var e1Cols = []string{"POVI", "0", "1", "2", "5", "10"}

// RunAPOVI runs the configured parts of the thesis's experiments.
//
// Defaults (full run; Quick in parentheses). E1: 2 (1) repetitions, every training capped at
// 600 (30) iterations with the thesis's early-stopping rule 1000/500/500 (10/5/5), 5 (2)
// test sets. E2: 300 (20) iterations with the thesis's early-stopping rule 2000/300/500 (inactive
// within the cap). E3: 400 (5) iterations; BNN [2, 20, 20, 20, 1] with inference networks
// [3, 40, 40, 40, 2D] ([2, 8, 1], [16]); the large regime takes the whole training pool (quick:
// 40 images).
func RunAPOVI(ctx context.Context, cfg APOVIConfig) (*APOVIReport, error) {
	if len(cfg.Parts) == 0 {
		cfg.Parts = APOVIParts
	}
	for _, p := range cfg.Parts {
		if !slices.Contains(APOVIParts, p) {
			return nil, fmt.Errorf("bench: RunAPOVI: unknown part (part=%q; known: %s)", p, strings.Join(APOVIParts, ", "))
		}
	}
	def := func(v *int, full, quick int) {
		if *v == 0 {
			*v = full
			if cfg.Quick {
				*v = quick
			}
		}
	}
	def(&cfg.E1Reps, 2, 1)
	def(&cfg.E1Iters, 600, 30)
	def(&cfg.E2Iters, 300, 20)
	def(&cfg.E3Iters, 400, 5)
	if cfg.E3Hidden == nil {
		cfg.E3Hidden = []int{20, 20, 20}
		if cfg.Quick {
			cfg.E3Hidden = []int{8}
		}
	}
	if cfg.E3InferenceHidden == nil {
		cfg.E3InferenceHidden = []int{40, 40, 40}
		if cfg.Quick {
			cfg.E3InferenceHidden = []int{16}
		}
	}
	if cfg.Quick && cfg.E3Large == 0 {
		cfg.E3Large = 40
	}
	for name, v := range map[string]int{"E1Reps": cfg.E1Reps, "E1Iters": cfg.E1Iters, "E2Iters": cfg.E2Iters, "E3Iters": cfg.E3Iters} {
		if v < 1 {
			return nil, fmt.Errorf("bench: RunAPOVI: %s must be ≥ 1 (%s=%d)", name, name, v)
		}
	}
	if len(cfg.E3Regimes) == 0 {
		cfg.E3Regimes = []string{"10", "large"}
	}
	for _, rg := range cfg.E3Regimes {
		if rg != "10" && rg != "large" {
			return nil, fmt.Errorf("bench: RunAPOVI: unknown E3 regime (E3Regimes=%q; known: 10, large)", rg)
		}
	}
	if cfg.E3Stop == "" {
		cfg.E3Stop = "thesis"
	}
	if !slices.Contains(E3Stops, cfg.E3Stop) {
		return nil, fmt.Errorf("bench: RunAPOVI: unknown E3Stop (E3Stop=%q; known: %s)", cfg.E3Stop, strings.Join(E3Stops, ", "))
	}
	if cfg.E3Large < 0 {
		return nil, fmt.Errorf("bench: RunAPOVI: E3Large must be ≥ 0 (E3Large=%d)", cfg.E3Large)
	}
	rep := &APOVIReport{Cfg: cfg, Elapsed: map[string]time.Duration{}}
	say := func(format string, a ...any) {
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, format+"\n", a...)
		}
	}
	var err error
	for _, part := range cfg.Parts {
		start := time.Now()
		switch part {
		case "e1":
			rep.E1, err = runE1(ctx, cfg, say)
		case "e2":
			rep.E2, err = runE2(ctx, cfg, say)
		case "e3":
			rep.E3, err = runE3(ctx, cfg, say, "MNIST-10k")
		case "e3-fashion":
			rep.E3F, err = runE3(ctx, cfg, say, "Fashion-MNIST")
		case "speed":
			rep.Speed, err = runAPOVISpeed(ctx, cfg, say)
		}
		rep.Elapsed[part] = time.Since(start)
		if err != nil {
			return nil, fmt.Errorf("bench: RunAPOVI: %s: %w", part, err)
		}
	}
	if cfg.PlotDir != "" {
		if rep.Plots, err = rep.plot(cfg.PlotDir); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// e1Likelihood is Table 1's fixed noise: Gaussian, σ = 0.05, not trained.
var e1Likelihood = apovi.Likelihood{Kind: apovi.Gaussian, NoiseStd: 0.05}

// e1APOVI is Table 1's APOVI: BNN [1, 32, 32, 1], inference networks [2, 50, 50, 64].
func e1APOVI(seed uint64) (*apovi.APOVI, error) {
	return apovi.NewAPOVI(apovi.Config{DX: 1, DY: 1, Hidden: []int{32, 32}, InferenceHidden: []int{50, 50}, Likelihood: e1Likelihood}, seed)
}

// e1POVI is Table 1's POVI for the test set d: the same BNN, inducing inputs the test x plus
// linspace(−2, 2, 20 − N) when N < 20 (M = max(N, 20)), last-layer pseudo-precision 1.
func e1POVI(d apovi.Dataset, seed uint64) (*apovi.POVI, error) {
	z := append([]float64{}, d.X...)
	if k := 20 - d.N; k > 0 {
		for i := range k {
			v := -2.0
			if k > 1 {
				v = -2 + 4*float64(i)/float64(k-1)
			}
			z = append(z, v)
		}
	}
	return apovi.NewPOVI(apovi.POVIConfig{DX: 1, DY: 1, Hidden: []int{32, 32}, M: len(z), Inducing: z, FinalPrec: 1, Likelihood: e1Likelihood}, seed)
}

// totalELBO is the thesis's test metric: −loss × N with the ELBO loss on all of d and S
// samples, i.e. the total ELBO in nats (Table 1).
func totalELBO(m apovi.Model, d apovi.Dataset, S int, r *rng.Stream) (float64, error) {
	var t ad.Tape
	p := t.Input(m.Params())
	l, err := m.Loss(&t, p, apovi.ELBO, d, apovi.Dataset{}, S, r.Rand)
	if err != nil {
		return 0, err
	}
	return -t.Float(l) * float64(d.N), nil
}

func tasksOf(ds []apovi.Dataset) []apovi.Task {
	out := make([]apovi.Task, len(ds))
	for i, d := range ds {
		out[i] = apovi.Task{Context: d}
	}
	return out
}

// runE1 is Table 1: for each repetition, APOVI meta-trained on a fresh SE-GP meta-dataset of
// each size |Ξ| ∈ {1, 2, 5, 10} (ELBO, lr 1e-3, B = 5, S = 1), APOVI trained on each test set
// alone (|Ξ| = 0: B = 1, S = 5, lr 1e-3) and POVI trained on each test set (lr 5e-3, S = 5, full
// batch), all evaluated by the total ELBO with S = 100 on the 5 fixed test sets.
func runE1(ctx context.Context, cfg APOVIConfig, say func(string, ...any)) (*E1Result, error) {
	nTest := 5
	es := apovi.EarlyStop{Min: 1000, Ref: 500, Smooth: 500}
	if cfg.Quick {
		nTest, es = 2, apovi.EarlyStop{Min: 10, Ref: 5, Smooth: 5}
	}
	tests, err := apovi.GPDatasets(apovi.GPConfig{}, nTest, rng.Derive(cfg.Seed, 100))
	if err != nil {
		return nil, err
	}
	res := &E1Result{Reps: cfg.E1Reps, Iters: cfg.E1Iters, TestSets: nTest, ES: es,
		ELBO: map[string][]float64{}, PerSet: map[string][][]float64{}, RunIters: map[string][]int{}, Wall: map[string]time.Duration{}}
	for _, d := range tests {
		res.TestN = append(res.TestN, d.N)
	}
	evalR := rng.New(cfg.Seed, 101)
	record := func(col string, per []float64) {
		res.PerSet[col] = append(res.PerSet[col], per)
		res.ELBO[col] = append(res.ELBO[col], meanOf(per))
	}
	for rep := range cfg.E1Reps {
		seed := rng.Derive(cfg.Seed, 200, uint64(rep))
		// POVI and APOVI at |Ξ| = 0: one run per test set.
		for _, col := range []string{"POVI", "0"} {
			start := time.Now()
			per := make([]float64, nTest)
			for k, d := range tests {
				var m apovi.Model
				tc := apovi.TrainConfig{Samples: 5, MaxIter: cfg.E1Iters, EarlyStop: es, Seed: rng.Derive(seed, 1, uint64(k))}
				if col == "POVI" {
					m, err = e1POVI(d, rng.Derive(seed, 2, uint64(k)))
					tc.LR = 5e-3
				} else {
					m, err = e1APOVI(rng.Derive(seed, 2, uint64(k)))
					tc.LR = 1e-3
				}
				if err != nil {
					return nil, err
				}
				tr, err := apovi.Train(ctx, m, []apovi.Task{{Context: d}}, tc)
				if err != nil {
					return nil, err
				}
				res.RunIters[col] = append(res.RunIters[col], tr.Iters)
				if per[k], err = totalELBO(m, d, 100, evalR); err != nil {
					return nil, err
				}
			}
			record(col, per)
			res.Wall[col] += time.Since(start)
			say("apovi e1: rep %d %s: mean test ELBO %.3f (%v)", rep, col, meanOf(per), time.Since(start).Round(time.Second))
		}
		for _, size := range e1Sizes[1:] {
			start := time.Now()
			col := fmt.Sprint(size)
			meta, err := apovi.GPDatasets(apovi.GPConfig{}, size, rng.Derive(seed, 3, uint64(size)))
			if err != nil {
				return nil, err
			}
			m, err := e1APOVI(rng.Derive(seed, 4, uint64(size)))
			if err != nil {
				return nil, err
			}
			tr, err := apovi.Train(ctx, m, tasksOf(meta), apovi.TrainConfig{LR: 1e-3, Batch: 5, Samples: 1, MaxIter: cfg.E1Iters, EarlyStop: es, Seed: rng.Derive(seed, 5, uint64(size))})
			if err != nil {
				return nil, err
			}
			res.RunIters[col] = append(res.RunIters[col], tr.Iters)
			per := make([]float64, nTest)
			for k, d := range tests {
				if per[k], err = totalELBO(m, d, 100, evalR); err != nil {
					return nil, err
				}
			}
			record(col, per)
			res.Wall[col] += time.Since(start)
			say("apovi e1: rep %d |Ξ| = %d: mean test ELBO %.3f (%d iterations, %v)", rep, size, meanOf(per), tr.Iters, time.Since(start).Round(time.Second))
		}
	}
	return res, nil
}

// meanOf and sdOf (the sample sd, n − 1) live in apovi_baselines.go.

func pmString(v []float64) string {
	if len(v) < 2 {
		return fmt.Sprintf("%.2f (one run)", meanOf(v))
	}
	return fmt.Sprintf("%.2f ± %.2f", meanOf(v), sdOf(v))
}

// Markdown writes the report under the common header.
func (r *APOVIReport) Markdown(w io.Writer, h resultmd.Header) error {
	var b bytes.Buffer
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	h.Machine = "one goroutine, nice -n 10"
	if err := resultmd.Write(&b, "APOVI: amortised inference in Bayesian neural networks (Rochussen 2023)", h); err != nil {
		return err
	}
	p("- thesis: Rochussen (2023), \"Amortised Inference in Bayesian Neural Networks\", MSc thesis, Cambridge, arXiv:2309.03018; setups and numbers from ../shared/docs/apovi.md §3–§5\n")
	for _, part := range r.Cfg.Parts {
		p("- %s: %s wall\n", part, r.Elapsed[part].Round(time.Second))
	}
	if r.Cfg.Quick {
		p("- **quick run** (--quick): smoke-test sizes, not the numbers of the full run\n")
	}
	for _, pl := range r.Plots {
		p("- figure: %s\n", pl)
	}
	if e := r.E1; e != nil {
		e.markdown(&b)
	}
	if e := r.E2; e != nil {
		e.markdown(&b)
	}
	if e := r.E3; e != nil {
		e.markdown(&b)
	}
	if e := r.E3F; e != nil {
		e.markdown(&b)
	}
	if s := r.Speed; s != nil {
		s.markdown(&b)
	}
	_, err := w.Write(b.Bytes())
	return err
}

func (e *E1Result) markdown(b *bytes.Buffer) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## E1 (Table 1): test-set ELBO against |Ξ|\n\n")
	p("Setup as the thesis (apovi.md §5 E1) except the budget: SE-GP data (ℓ = σ_f² = ln 2, N ∈ 10..49, x ∈ (−2, 2], noise 0.05), %d fixed test sets (N = %v); BNN [1, 32, 32, 1] with fixed noise 0.05; APOVI inference nets [2, 50, 50, 64], lr 1e-3, B = 5, S = 1 (|Ξ| = 0: trained on each test set alone, B = 1, S = 5); POVI trained on each test set, lr 5e-3, S = 5, M = max(N, 20) learned inducing inputs, last-layer pseudo-precision 1. Metric: total ELBO in nats with S = 100 on each test set, averaged over the test sets; ± is the sample sd (n − 1) over repetitions.\n\n",
		e.TestSets, e.TestN)
	p("**Budget (weaker than the thesis):** %d repetition(s) (thesis 5) — each a fresh meta-dataset and seed; every training run capped at %d iterations (thesis 15,000) with the early-stopping rule m/R/s = %d/%d/%d (the thesis's; it cannot fire before iteration %d).\n\n",
		e.Reps, e.Iters, e.ES.Min, e.ES.Ref, e.ES.Smooth, e.ES.Min+1)
	p("| | POVI | APOVI \\|Ξ\\|=0 | APOVI \\|Ξ\\|=1 | APOVI \\|Ξ\\|=2 | APOVI \\|Ξ\\|=5 | APOVI \\|Ξ\\|=10 |\n|---|---:|---:|---:|---:|---:|---:|\n")
	p("| ours |")
	for _, c := range e1Cols {
		p(" %s |", pmString(e.ELBO[c]))
	}
	p("\n| thesis |")
	for _, c := range e1Cols {
		p(" %.2f ± %.2f |", thesisTable1[c][0], thesisTable1[c][1])
	}
	p("\n| iterations run |")
	for _, c := range e1Cols {
		p(" %v |", e.RunIters[c])
	}
	p("\n| wall (all reps) |")
	for _, c := range e1Cols {
		p(" %v |", e.Wall[c].Round(time.Second))
	}
	p("\n\nPer test set (mean over repetitions):\n\n| test set (N) |")
	for _, c := range e1Cols {
		p(" %s |", c)
	}
	p("\n|---|%s\n", strings.Repeat("---:|", len(e1Cols)))
	for k := range e.TestSets {
		p("| %d (%d) |", k, e.TestN[k])
		for _, c := range e1Cols {
			var v []float64
			for _, per := range e.PerSet[c] {
				v = append(v, per[k])
			}
			p(" %.2f |", meanOf(v))
		}
		p("\n")
	}
	// The Done-when claims.
	m := func(c string) float64 { return meanOf(e.ELBO[c]) }
	p("\nClaims (issue 16 Done-when):\n\n")
	p("- APOVI at |Ξ| = 0 beats POVI: %.2f vs %.2f → %s\n", m("0"), m("POVI"), holdsOrNot(m("0") > m("POVI")))
	rising := m("1") <= m("2") && m("2") <= m("5") && m("5") <= m("10")
	p("- the ELBO rises with |Ξ| (1 → 2 → 5 → 10): %.2f, %.2f, %.2f, %.2f → %s (the thesis's own means dip from 5 to 10)\n", m("1"), m("2"), m("5"), m("10"), holdsOrNot(rising))
	p("- APOVI at |Ξ| = 5 against POVI (the thesis's \"after just three datasets\", D9): %.2f vs %.2f → %s\n", m("5"), m("POVI"), holdsOrNot(m("5") > m("POVI")))
}

func holdsOrNot(ok bool) string {
	if ok {
		return "**holds**"
	}
	return "**does not hold**"
}
