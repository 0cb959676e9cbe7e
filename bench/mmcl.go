package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vigo-bayes/vigo/bnn"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"github.com/vigo-bayes/vigo/optim"
	"github.com/vigo-bayes/vigo/rng"
)

// The MMCL vs MCEM experiment of Kingma & Welling (2014), "Efficient gradient-based inference
// through transformations between Bayes nets and neural nets", ICML, §6 and Fig. 5
// (papers.md §4.2; issue 18 item 1): the 4-layer model of dncpNet on binarised MNIST, its
// parameters learned on-line, one image per step, by
//
//   - MCEM (Wei & Tanner 1990): one static HMC transition (10 leapfrog steps, unit metric,
//     step size adapted to acceptance 0.9) on the image's persistent chain over ε, then an
//     Adagrad step along ∇_θ log p_θ(x | ε) at the chain's state (Fisher's identity: its
//     posterior mean is ∇_θ log p_θ(x));
//   - MMCL: an Adagrad step along ∇_θ log (1/L) Σ_l p_θ(x | ε_l), ε_l ~ N(0, I) fresh per step.
//
// Both get the same budget of training CPU time per training subset (the paper's axis is wall
// time; on a shared machine CPU time is the stable proxy); the curves are log p(x) of training
// and held-out images (logMarginal) against training time, evaluations excluded.

// MMCLConfig says what RunMMCL runs. Zero fields take the defaults in parentheses.
type MMCLConfig struct {
	// MNIST is the directory of the MNIST IDX files (images-idx3-ubyte.gz).
	MNIST string
	// Subsets are the training-set sizes, each the first n images (1000, 9000); Test the
	// held-out images, the last Test of the file (1000). Budgets are the training CPU seconds
	// of every method on each subset (25, 35), parallel to Subsets.
	Subsets []int
	Test    int
	Budgets []float64
	// Ls are MMCL's sample sizes (10, 100, 500); K1, K2, K3 the latent widths (3, 3, 100).
	Ls         []int
	K1, K2, K3 int
	// LR is Adagrad's step size for both methods (0.02); Leapfrog the leapfrog steps of MCEM's
	// HMC (10), Accept its target acceptance (0.9), StepGain the step-size adaptation gain (0.02).
	LR       float64
	Leapfrog int
	Accept   float64
	StepGain float64
	// Checkpoints is the number of evaluations along each run after the one at time 0 (4, at
	// 1/4, 1/2, 3/4 and 1 of the budget; the one at 0 is shared by the methods, which start
	// from the same θ); EvalImages the training and test images each evaluation uses (the
	// first EvalImages of each; 50), EvalDraws the importance draws per image (100);
	// FinalImages the images of the final evaluation of every run (200).
	Checkpoints int
	EvalImages  int
	EvalDraws   int
	FinalImages int
	// BruteImages (4) images get the brute-force check of the estimator at the end of the
	// first subset's runs: BruteDraws (20000) draws of the same proposal and of the prior.
	BruteImages, BruteDraws int
	// TimingReps (3) interleaved repeats of 100 steps of each method measure the cost per step.
	TimingReps int
	Seed       uint64
	// Quick shrinks everything to a smoke run of seconds.
	Quick bool
	// PlotDir, when not empty, receives the figures.
	PlotDir  string
	Progress io.Writer
}

func (c MMCLConfig) defaults() MMCLConfig {
	if c.Quick {
		setDefaultSlice(&c.Subsets, []int{200})
		setDefaultSlice(&c.Budgets, []float64{2})
		setDefault(&c.Test, 100)
		setDefault(&c.K3, 20)
		setDefault(&c.EvalImages, 20)
		setDefault(&c.EvalDraws, 50)
		setDefault(&c.FinalImages, 40)
		setDefault(&c.Checkpoints, 3)
		setDefault(&c.BruteImages, 2)
		setDefault(&c.BruteDraws, 5000)
		setDefault(&c.TimingReps, 1)
	}
	setDefaultSlice(&c.Subsets, []int{1000, 9000})
	setDefaultSlice(&c.Budgets, []float64{25, 35})
	setDefault(&c.Test, 1000)
	setDefaultSlice(&c.Ls, []int{10, 100, 500})
	setDefault(&c.K1, 3)
	setDefault(&c.K2, 3)
	setDefault(&c.K3, 100)
	setDefault(&c.LR, 0.02)
	setDefault(&c.Leapfrog, 10)
	setDefault(&c.Accept, 0.9)
	setDefault(&c.StepGain, 0.02)
	setDefault(&c.Checkpoints, 4)
	setDefault(&c.EvalImages, 50)
	setDefault(&c.EvalDraws, 100)
	setDefault(&c.FinalImages, 200)
	setDefault(&c.BruteImages, 4)
	setDefault(&c.BruteDraws, 20000)
	setDefault(&c.TimingReps, 3)
	setDefault(&c.Seed, 1)
	return c
}

func (c MMCLConfig) validate() error {
	fail := func(f string, a ...any) error { return fmt.Errorf("bench: RunMMCL: "+f, a...) }
	if len(c.Budgets) != len(c.Subsets) {
		return fail("Budgets must have one entry per subset (Budgets=%v, Subsets=%v)", c.Budgets, c.Subsets)
	}
	for i, n := range c.Subsets {
		if n < 1 {
			return fail("Subsets[%d] must be at least 1 (Subsets[%d]=%d)", i, i, n)
		}
		if !(c.Budgets[i] > 0) || math.IsInf(c.Budgets[i], 1) {
			return fail("Budgets[%d] must be positive and finite (Budgets[%d]=%v)", i, i, c.Budgets[i])
		}
	}
	for i, L := range c.Ls {
		if L < 1 {
			return fail("Ls[%d] must be at least 1 (Ls[%d]=%d)", i, i, L)
		}
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"Test", c.Test}, {"Leapfrog", c.Leapfrog}, {"Checkpoints", c.Checkpoints}, {"EvalImages", c.EvalImages},
		{"EvalDraws", c.EvalDraws}, {"FinalImages", c.FinalImages}, {"BruteImages", c.BruteImages},
		{"BruteDraws", c.BruteDraws}, {"TimingReps", c.TimingReps}} {
		if f.v < 1 {
			return fail("%s must be at least 1 (%s=%d)", f.name, f.name, f.v)
		}
	}
	if !(c.LR > 0) || !(c.StepGain > 0) || !(c.Accept > 0 && c.Accept < 1) {
		return fail("LR and StepGain must be positive and Accept in (0, 1) (LR=%v, StepGain=%v, Accept=%v)", c.LR, c.StepGain, c.Accept)
	}
	return nil
}

// mnistBinary is the binarised image set: N images of D pixels, 1 where byte/255 ≥ 0.5.
type mnistBinary struct {
	N, D int
	X    []int
}

func (m *mnistBinary) image(i int) []int { return m.X[i*m.D : (i+1)*m.D] }

// binarise thresholds images in [0, 1] (n rows of d pixels) at 0.5. It fails on no images or
// a slice whose length is not n·d.
func binarise(X []float64, n, d int) (*mnistBinary, error) {
	if n < 1 || d < 1 {
		return nil, fmt.Errorf("bench: binarise: no images (n=%d, pixels=%d)", n, d)
	}
	if len(X) != n*d {
		return nil, fmt.Errorf("bench: binarise: %d values are not %d images of %d pixels (len=%d)", len(X), n, d, len(X))
	}
	b := &mnistBinary{N: n, D: d, X: make([]int, n*d)}
	for i, v := range X {
		if v >= 0.5 {
			b.X[i] = 1
		}
	}
	return b, nil
}

// subset returns images [lo, hi) as their own set (sharing the pixels).
func (m *mnistBinary) subset(lo, hi int) *mnistBinary {
	return &mnistBinary{N: hi - lo, D: m.D, X: m.X[lo*m.D : hi*m.D]}
}

func (m *mnistBinary) pixelMean() []float64 {
	mu := make([]float64, m.D)
	for i := range m.N {
		for j, v := range m.image(i) {
			mu[j] += float64(v)
		}
	}
	for j := range mu {
		mu[j] /= float64(m.N)
	}
	return mu
}

// mmclMethod names a learner: L = 0 is MCEM, L ≥ 1 MMCL with L samples.
func mmclMethod(L int) string {
	if L == 0 {
		return "MCEM"
	}
	return fmt.Sprintf("MMCL L=%d", L)
}

// curvePoint is one evaluation of a run.
type curvePoint struct {
	Train      float64 // training CPU seconds so far (evaluations excluded)
	Steps      int     // images processed
	Epochs     float64 // Steps / subset size
	TrainLL    float64 // mean log p̂(x) over the evaluated training images (nats)
	TrainMCSE  float64 // its Monte Carlo standard error √(Σ SE²)/n
	TestLL     float64
	TestMCSE   float64
	MaxK       float64 // largest PSIS k̂ of the evaluation's images
	HighK      int     // images with k̂ > 0.7
	Images     int     // images per set in this evaluation
	EvalSecond float64 // CPU seconds of the evaluation
}

// MMCLRun is one method on one training subset.
type MMCLRun struct {
	Method   string
	L        int
	Subset   int
	Budget   float64
	Points   []curvePoint
	Final    curvePoint // on FinalImages training and test images
	StepSize float64    // MCEM: final adapted step size
	Accept   float64    // MCEM: mean acceptance probability over the run
	Used     float64    // MMCL: mean number of draws with weight ≥ mmclWeightFloor
	Sigma    float64    // learned σ₂
	net      *dncpNet
}

// bruteRow checks the estimator on one image of a trained model.
type bruteRow struct {
	Model, Set        string
	Image             int
	Est               isEstimate // EvalDraws, as the curves
	Big, Prior        isEstimate // BruteDraws of the same proposal / of the prior
	EstRep            []float64  // 10 repeats at EvalDraws
	EstRepMean, EstSD float64
}

// toyRow checks the estimator on a net with a 2-D latent against the grid value.
type toyRow struct {
	Image      int
	Exact      float64
	Est        isEstimate
	RepMean    float64
	RepSD      float64
	PriorEst   isEstimate
	PriorDraws int
}

// timingRow is the measured cost per step of one method.
type timingRow struct {
	Method      string
	MedianMicro float64 // median over repeats of µs per image step
	Ratio       float64 // against MCEM's median
}

// MMCLReport holds the experiment's results.
type MMCLReport struct {
	Config  MMCLConfig
	Runs    []MMCLRun
	Brute   []bruteRow
	Toy     []toyRow
	Timing  []timingRow
	Plots   []string
	Latent  int
	NParams int
}

// RunMMCL runs the experiment: for each training subset, MCEM and MMCL at each L for the
// subset's budget, evaluated along the way; then the estimator checks and the per-step
// timing. The configuration is checked first; the error names the field.
func RunMMCL(ctx context.Context, cfg MMCLConfig) (*MMCLReport, error) {
	cfg = cfg.defaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if cfg.MNIST == "" {
		return nil, fmt.Errorf("bench: RunMMCL: no MNIST directory (MNIST=%q)", cfg.MNIST)
	}
	X, rows, h, w, err := bnn.ReadIDXImages(filepath.Join(cfg.MNIST, "images-idx3-ubyte.gz"), 0)
	if err != nil {
		return nil, fmt.Errorf("bench: RunMMCL: %w", err)
	}
	all, err := binarise(X, rows, h*w)
	if err != nil {
		return nil, fmt.Errorf("bench: RunMMCL: %w", err)
	}
	return runMMCLOn(ctx, cfg, all)
}

func runMMCLOn(ctx context.Context, cfg MMCLConfig, all *mnistBinary) (*MMCLReport, error) {
	maxSub := slices.Max(cfg.Subsets)
	if maxSub+cfg.Test > all.N {
		return nil, fmt.Errorf("bench: RunMMCL: %d training + %d test images exceed the %d in the file (Subsets max=%d, Test=%d)",
			maxSub, cfg.Test, all.N, maxSub, cfg.Test)
	}
	if cfg.EvalImages > slices.Min(cfg.Subsets) || cfg.EvalImages > cfg.Test {
		return nil, fmt.Errorf("bench: RunMMCL: EvalImages exceeds the smallest training subset or the test set (EvalImages=%d)", cfg.EvalImages)
	}
	test := all.subset(all.N-cfg.Test, all.N)
	rep := &MMCLReport{Config: cfg}
	methods := append([]int{0}, cfg.Ls...)
	for si, n := range cfg.Subsets {
		train := all.subset(0, n)
		var start *curvePoint
		for _, L := range methods {
			run, err := trainMMCL(ctx, cfg, train, test, L, cfg.Budgets[si], &start)
			if err != nil {
				return rep, err
			}
			rep.Latent, rep.NParams = run.net.Dim(), len(run.net.theta)
			rep.Runs = append(rep.Runs, *run)
			if si == 0 && (L == 0 || L == slices.Max(cfg.Ls)) {
				rep.Brute = append(rep.Brute, bruteCheck(cfg, run, train, test)...)
			}
		}
	}
	toy, err := toyCheck(cfg)
	if err != nil {
		return rep, err
	}
	rep.Toy = toy
	rep.Timing = timeSteps(cfg, all.subset(0, cfg.Subsets[0]), methods)
	if cfg.PlotDir != "" {
		plots, err := rep.plot(cfg.PlotDir)
		if err != nil {
			return rep, err
		}
		rep.Plots = plots
	}
	return rep, nil
}

// learner is one method's state: the net, its Adagrad, and MCEM's persistent chains.
type learner struct {
	cfg   MMCLConfig
	L     int
	net   *dncpNet
	opt   *optim.Adagrad
	w     *netWork
	grad  []float64
	r     *rng.Stream
	mw    *mmclWork
	chain []float64 // MCEM: N × Dim persistent states
	g     []float64
	hw    *hmcWork
	tgt   imageTarget
	adapt stepAdapter
	// running sums
	accSum float64
	used   int64
	steps  int64
}

func newLearner(cfg MMCLConfig, train *mnistBinary, L int) (*learner, error) {
	net, err := newDNCPNet(cfg.K1, cfg.K2, cfg.K3, train.D)
	if err != nil {
		return nil, err
	}
	net.init(rng.New(cfg.Seed, 0), train.pixelMean()) // the same start for every method
	lr := &learner{cfg: cfg, L: L, net: net, opt: optim.NewAdagrad(len(net.theta), optim.AdagradConfig{LR: cfg.LR}),
		w: net.newWork(), grad: make([]float64, len(net.theta)), r: rng.New(cfg.Seed, uint64(1+L))}
	d := net.Dim()
	if L > 0 {
		lr.mw = &mmclWork{eps: make([]float64, L*d), ll: make([]float64, L)}
	} else {
		lr.chain = make([]float64, train.N*d)
		for i := range lr.chain {
			lr.chain[i] = lr.r.NormFloat64()
		}
		lr.g = make([]float64, d)
		lr.hw = newHMCWork(d)
		lr.tgt = imageTarget{net: net, w: lr.w}
		lr.adapt = stepAdapter{logH: math.Log(0.1), target: cfg.Accept, gain: cfg.StepGain}
	}
	return lr, nil
}

// step is one on-line update on image i. It does not allocate.
func (lr *learner) step(train *mnistBinary, i int) {
	x := train.image(i)
	clear(lr.grad)
	if lr.L > 0 {
		_, used := lr.net.mmclStep(lr.w, lr.mw, x, lr.r, lr.grad)
		lr.used += int64(used)
	} else {
		d := lr.net.Dim()
		q := lr.chain[i*d : (i+1)*d]
		lr.tgt.x = x
		lp := lr.tgt.logDensity(q, lr.g)
		_, acc := hmcTransition(&lr.tgt, q, lr.g, lp, lr.adapt.h(), lr.cfg.Leapfrog, lr.r, lr.hw)
		lr.adapt.update(acc)
		lr.accSum += acc
		lr.net.logLik(lr.w, q, x)
		lr.net.backward(lr.w, q, 1, nil, lr.grad)
	}
	for k := range lr.grad {
		lr.grad[k] = -lr.grad[k] // Adagrad minimises
	}
	lr.opt.Step(lr.net.theta, lr.grad)
	lr.steps++
}

// checkpointFractions are the budget fractions of the k evaluations after the one at 0:
// …, 1/8, 1/4, 1/2, 3/4, 1 (the last k of them).
func checkpointFractions(k int) []float64 {
	f := []float64{1}
	if k >= 2 {
		f = []float64{0.75, 1}
		for h := 0.5; len(f) < k; h /= 2 {
			f = append([]float64{h}, f...)
		}
	}
	return f
}

// trainMMCL runs method L on train for budget CPU seconds. *start is the evaluation at time 0,
// made by the first call and reused by the others (every method starts from the same θ).
func trainMMCL(ctx context.Context, cfg MMCLConfig, train, test *mnistBinary, L int, budget float64, start **curvePoint) (*MMCLRun, error) {
	lr, err := newLearner(cfg, train, L)
	if err != nil {
		return nil, err
	}
	run := &MMCLRun{Method: mmclMethod(L), L: L, Subset: train.N, Budget: budget, net: lr.net}
	evalR := rng.New(cfg.Seed, 1000) // evaluations of every run use the same streams
	ev := func(trainSec float64, images int) curvePoint {
		t0 := newStopwatch()
		p := evaluate(lr.net, train, test, images, cfg.EvalDraws, rng.New(cfg.Seed, 1000+uint64(evalR.Uint32())))
		p.Train, p.Steps, p.Epochs = trainSec, int(lr.steps), float64(lr.steps)/float64(train.N)
		p.EvalSecond = t0.elapsed().Seconds()
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "mmcl: n=%d %s t=%.1fs epochs=%.2f train %.2f test %.2f (eval %.1fs)\n",
				train.N, run.Method, trainSec, p.Epochs, p.TrainLL, p.TestLL, p.EvalSecond)
		}
		return p
	}
	if *start == nil {
		p := ev(0, cfg.EvalImages)
		*start = &p
	}
	run.Points = append(run.Points, **start)
	perm := make([]int, train.N)
	for i := range perm {
		perm[i] = i
	}
	pos := train.N
	var trained time.Duration
	for _, f := range checkpointFractions(cfg.Checkpoints) {
		until := time.Duration(f * budget * float64(time.Second))
		c0 := newStopwatch()
		for trained+c0.elapsed() < until {
			if err := ctx.Err(); err != nil {
				return run, fmt.Errorf("bench: RunMMCL: %s on %d images: %w", run.Method, train.N, err)
			}
			for range 8 {
				if pos == train.N {
					lr.r.Shuffle(len(perm), func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
					pos = 0
				}
				lr.step(train, perm[pos])
				pos++
			}
		}
		trained += c0.elapsed()
		run.Points = append(run.Points, ev(trained.Seconds(), cfg.EvalImages))
	}
	run.Final = ev(trained.Seconds(), min(cfg.FinalImages, train.N, test.N))
	if L == 0 {
		run.StepSize = lr.adapt.h()
		run.Accept = lr.accSum / float64(max(1, lr.steps))
	} else {
		run.Used = float64(lr.used) / float64(max(1, lr.steps))
	}
	run.Sigma = lr.net.sigma()
	return run, nil
}

// stopwatch measures the process's CPU time (processCPU) where the system reports it, else
// wall time: the budgets and the curves' time axis are CPU seconds of this single-goroutine
// run, so that other processes on a shared machine do not stretch them.
type stopwatch struct {
	cpu  time.Duration
	wall time.Time
	ok   bool
}

func newStopwatch() stopwatch {
	c, ok := processCPU()
	return stopwatch{cpu: c, wall: time.Now(), ok: ok}
}

func (s stopwatch) elapsed() time.Duration {
	if s.ok {
		if c, ok := processCPU(); ok {
			return c - s.cpu
		}
	}
	return time.Since(s.wall)
}

// evaluate estimates the mean log p(x) of the first images training and test images.
func evaluate(net *dncpNet, train, test *mnistBinary, images, draws int, r *rng.Stream) curvePoint {
	w, iw := net.newWork(), newISWork(net.Dim())
	p := curvePoint{Images: images, MaxK: math.Inf(-1)}
	one := func(set *mnistBinary) (mean, mcse float64) {
		var s, v float64
		for i := range images {
			e := net.logMarginal(w, iw, set.image(i), draws, r)
			s += e.LogP
			v += e.SE * e.SE
			p.MaxK = math.Max(p.MaxK, e.K)
			if e.K > 0.7 {
				p.HighK++
			}
		}
		return s / float64(images), math.Sqrt(v) / float64(images)
	}
	p.TrainLL, p.TrainMCSE = one(train)
	p.TestLL, p.TestMCSE = one(test)
	return p
}

// bruteCheck compares, on BruteImages images (half training, half test), the curves'
// estimate with BruteDraws draws of the same proposal and of the prior, and with 10 repeats.
func bruteCheck(cfg MMCLConfig, run *MMCLRun, train, test *mnistBinary) []bruteRow {
	net := run.net
	w, iw := net.newWork(), newISWork(net.Dim())
	r := rng.New(cfg.Seed, 2000)
	lw := make([]float64, cfg.BruteDraws)
	var rows []bruteRow
	for k := range cfg.BruteImages {
		set, name, i := train, "train", k/2
		if k%2 == 1 {
			set, name = test, "test"
		}
		x := set.image(i)
		row := bruteRow{Model: fmt.Sprintf("%s, n=%d", run.Method, run.Subset), Set: name, Image: i}
		row.Est = net.logMarginal(w, iw, x, cfg.EvalDraws, r)
		for range 10 {
			row.EstRep = append(row.EstRep, net.logMarginal(w, iw, x, cfg.EvalDraws, r).LogP)
		}
		row.EstRepMean, row.EstSD = meanSD(row.EstRep)
		row.Big = net.logMarginal(w, iw, x, cfg.BruteDraws, r)
		row.Prior = net.logMarginalPrior(w, x, cfg.BruteDraws, r, lw)
		rows = append(rows, row)
	}
	return rows
}

func meanSD(x []float64) (float64, float64) {
	var s, s2 float64
	for _, v := range x {
		s += v
	}
	m := s / float64(len(x))
	for _, v := range x {
		s2 += (v - m) * (v - m)
	}
	return m, math.Sqrt(s2 / float64(max(1, len(x)-1)))
}

// toyNet is a net with a 2-D latent (K1 = K2 = 1, K3 = 4, D = 40 pixels, weights ×3) whose
// posterior is concentrated like the MNIST model's, and three images drawn from it.
func toyNet(seed uint64) (*dncpNet, *mnistBinary) {
	net, _ := newDNCPNet(1, 1, 4, 40)
	r := rng.New(seed, 3000)
	for i := range net.theta[:len(net.theta)-1] {
		net.theta[i] = 3 * r.NormFloat64()
	}
	net.theta[len(net.theta)-1] = math.Log(0.5)
	imgs := &mnistBinary{N: 3, D: 40, X: make([]int, 3*40)}
	w := net.newWork()
	e := make([]float64, 2)
	for i := range 3 {
		e[0], e[1] = r.NormFloat64(), r.NormFloat64()
		net.logLik(w, e, make([]int, 40)) // w.eta = −sigmoid(η)
		for j := range 40 {
			if r.Float64() < -w.eta[j] {
				imgs.X[i*40+j] = 1
			}
		}
	}
	return net, imgs
}

// toyCheck runs the estimator on toyNet's images against the grid value.
func toyCheck(cfg MMCLConfig) ([]toyRow, error) {
	net, imgs := toyNet(cfg.Seed)
	w, iw := net.newWork(), newISWork(2)
	r := rng.New(cfg.Seed, 3001)
	lw := make([]float64, cfg.BruteDraws)
	var rows []toyRow
	for i := range imgs.N {
		x := imgs.image(i)
		row := toyRow{Image: i, Exact: net.logMarginalGrid(w, x, 600, 8), PriorDraws: cfg.BruteDraws}
		row.Est = net.logMarginal(w, iw, x, cfg.EvalDraws, r)
		var reps []float64
		for range 50 {
			reps = append(reps, net.logMarginal(w, iw, x, cfg.EvalDraws, r).LogP)
		}
		row.RepMean, row.RepSD = meanSD(reps)
		row.PriorEst = net.logMarginalPrior(w, x, cfg.BruteDraws, r, lw)
		rows = append(rows, row)
	}
	return rows, nil
}

// timeSteps measures CPU µs per image step of every method, interleaved: TimingReps rounds,
// each 100 steps of every method in turn on the same images, from the same starting net.
func timeSteps(cfg MMCLConfig, train *mnistBinary, methods []int) []timingRow {
	const n = 100
	ls := make([]*learner, len(methods))
	for k, L := range methods {
		ls[k], _ = newLearner(cfg, train, L)
	}
	times := make([][]float64, len(methods))
	for rep := range cfg.TimingReps {
		for k, lr := range ls {
			c0 := newStopwatch()
			for i := range n {
				lr.step(train, (rep*n+i)%train.N)
			}
			times[k] = append(times[k], c0.elapsed().Seconds()*1e6/n)
		}
	}
	rows := make([]timingRow, len(methods))
	for k, L := range methods {
		slices.Sort(times[k])
		rows[k] = timingRow{Method: mmclMethod(L), MedianMicro: times[k][len(times[k])/2]}
	}
	for k := range rows {
		rows[k].Ratio = rows[k].MedianMicro / rows[0].MedianMicro
	}
	return rows
}

// Markdown writes the report.
func (r *MMCLReport) Markdown(w io.Writer, h resultmd.Header) error {
	var b strings.Builder
	p := func(f string, a ...any) { fmt.Fprintf(&b, f, a...) }
	resultmd.Write(&b, "MMCL vs MCEM on binarised MNIST (Kingma & Welling 2014, §6, Fig. 5)", h)
	c := r.Config
	p("\n\n## Setup\n\n")
	p("- model (dncpNet, DNCP form): z₁ = ε₁ ∈ ℝ^%d, z₂ = tanh(W₁z₁ + b₁) + σ₂ε₂ ∈ ℝ^%d, z₃ = tanh(W₂z₂ + b₂) ∈ ℝ^%d (noiseless), x | z₃ ~ Bernoulli(sigmoid(W_x z₃ + b_x)); ε ~ N(0, I_%d) is the sampled latent; %d parameters (σ₂ learned as log σ₂); ML, no prior on θ\n",
		c.K1, c.K2, c.K3, r.Latent, r.NParams)
	p("- data: ../shared/data/mnist-10k (10,000 class-interleaved MNIST digits), binarised x = 1 where byte/255 ≥ 0.5; training subsets = the first %v images; test = the last %d images (disjoint from every training subset)\n", c.Subsets, c.Test)
	p("- learning: on-line, one image per step, images in a fresh random order each epoch, Adagrad (optim.Adagrad, PyTorch semantics, η = %g, ε = 1e-10) on both methods, the same initial θ (seed %d) for all runs\n", c.LR, c.Seed)
	p("- MCEM: per image one static HMC transition (%d leapfrog steps, unit metric) on its persistent chain over ε (chains start at prior draws and persist across epochs), one step size for all chains adapted by log h += %g·(a − %g); then an Adagrad step along ∇_θ log p_θ(x | ε) at the chain's state\n", c.Leapfrog, c.StepGain, c.Accept)
	p("- MMCL: an Adagrad step along ∇_θ log (1/L) Σ_l p_θ(x | ε_l), L fresh prior draws per step, L ∈ %v (draws with normalised weight < %g are left out of the backward pass)\n", c.Ls, mmclWeightFloor)
	p("- budget: every method gets the same training time per subset, %v CPU seconds for subsets %v: the clock is this process's CPU time (getrusage user + system; wall time where unavailable), so that the other processes of a shared machine do not stretch it, evaluations excluded; single goroutine, runs one after another\n", c.Budgets, c.Subsets)
	p("- estimator of log p(x) (both curves): importance sampling over ε with the defensive mixture q = %.1f·N(0, I) + %.1f·(1/J) Σ_j t_%g(m_j, Σ_j), J ≤ %d: the Laplace fits Σ_j = (−H)⁻¹ at the modes m_j reached by damped Newton from each of the %d best of %d prior draws (Hessian by central differences of the analytic gradient, curvatures capped at ≤ −%g), plus one t with the self-normalised weighted mean and covariance of a first round of S draws (one population-Monte-Carlo adaptation, skipped when that round's ESS < 2·dim); the estimate uses the second round's S = %d draws per image, on the first %d training and first %d test images at each checkpoint, and on %d of each at the end; MCSE = √(Σ SE_i²)/n with SE_i the delta-method error of image i; k̂ = PSIS shape of each image's log weights (the second round's)\n\n",
		isDefensive, 1-isDefensive, isNu, isStarts+1, isStarts, isInit, isMinCurv, c.EvalDraws, c.EvalImages, c.EvalImages, c.FinalImages)

	for _, n := range c.Subsets {
		p("## Curves, %d training images\n\n", n)
		p("Mean log p̂(x) in nats per image (± MCSE), %d training / %d test images per point.\n\n", c.EvalImages, c.EvalImages)
		p("| method | train CPU s | steps | epochs | train log p(x) | test log p(x) | max k̂ | k̂ > 0.7 |\n|---|---|---|---|---|---|---|---|\n")
		for _, run := range r.Runs {
			if run.Subset != n {
				continue
			}
			for _, q := range run.Points {
				p("| %s | %.1f | %d | %.2f | %.2f ± %.2f | %.2f ± %.2f | %.2f | %d of %d |\n", run.Method, q.Train, q.Steps, q.Epochs,
					q.TrainLL, q.TrainMCSE, q.TestLL, q.TestMCSE, q.MaxK, q.HighK, 2*q.Images)
			}
		}
		p("\nFinal models, %d training and %d test images:\n\n", min(c.FinalImages, n), min(c.FinalImages, c.Test))
		p("| method | budget CPU s | epochs | train log p(x) | test log p(x) | train − test | σ₂ | HMC h / accept | MMCL draws in backward |\n|---|---|---|---|---|---|---|---|---|\n")
		for _, run := range r.Runs {
			if run.Subset != n {
				continue
			}
			q := run.Final
			hmc, used := "–", "–"
			if run.L == 0 {
				hmc = fmt.Sprintf("%.3f / %.2f", run.StepSize, run.Accept)
			} else {
				used = fmt.Sprintf("%.1f of %d", run.Used, run.L)
			}
			p("| %s | %.0f | %.2f | %.2f ± %.2f | %.2f ± %.2f | %.2f | %.3f | %s | %s |\n", run.Method, run.Budget, q.Epochs,
				q.TrainLL, q.TrainMCSE, q.TestLL, q.TestMCSE, q.TrainLL-q.TestLL, run.Sigma, hmc, used)
		}
		p("\n")
	}
	if len(r.Plots) > 0 {
		p("Figures: ")
		for i, pl := range r.Plots {
			if i > 0 {
				p(", ")
			}
			p("`%s`", filepath.ToSlash(pl))
		}
		p(".\n\n")
	}
	p("## Cost per step (interleaved, same images, same start)\n\n")
	p("%d rounds of 100 steps of each method in turn; median CPU µs per image step.\n\n| method | µs / step | × MCEM |\n|---|---|---|\n", c.TimingReps)
	for _, t := range r.Timing {
		p("| %s | %.0f | %.2f |\n", t.Method, t.MedianMicro, t.Ratio)
	}
	p("\n## Checks of the log p(x) estimator\n\n")
	p("Toy with exact log p(x): a net with a 2-D ε (K1 = K2 = 1, K3 = 4, D = 40, weights 3·N(0, 1), σ₂ = 0.5), three images drawn from it; exact value by the midpoint rule on a 600² grid over [−8, 8]²; the estimator at %d draws (one run, and 50 repeats: mean and sd), and prior importance sampling with %d draws.\n\n", c.EvalDraws, c.BruteDraws)
	p("| image | exact | estimate ± SE (k̂) | 50 repeats: mean − exact, sd | prior IS %d ± SE |\n|---|---|---|---|---|\n", c.BruteDraws)
	for _, t := range r.Toy {
		p("| %d | %.4f | %.4f ± %.4f (%.2f) | %+.4f, %.4f | %.4f ± %.4f |\n", t.Image, t.Exact, t.Est.LogP, t.Est.SE, t.Est.K,
			t.RepMean-t.Exact, t.RepSD, t.PriorEst.LogP, t.PriorEst.SE)
	}
	p("\nTrained MNIST models (the first subset's MCEM and largest-L MMCL), images alternately from the training and test sets: the curves' estimate (%d draws; 10 repeats: mean and sd) against %d draws of the same proposal and %d prior draws.\n\n", c.EvalDraws, c.BruteDraws, c.BruteDraws)
	p("| model | set | image | %d draws ± SE (k̂) | 10 repeats mean, sd | %d draws ± SE (k̂) | prior %d ± SE (k̂) |\n|---|---|---|---|---|---|---|\n", c.EvalDraws, c.BruteDraws, c.BruteDraws)
	for _, t := range r.Brute {
		p("| %s | %s | %d | %.2f ± %.2f (%.2f) | %.2f, %.2f | %.2f ± %.2f (%.2f) | %.2f ± %.2f (%.2f) |\n", t.Model, t.Set, t.Image,
			t.Est.LogP, t.Est.SE, t.Est.K, t.EstRepMean, t.EstSD, t.Big.LogP, t.Big.SE, t.Big.K, t.Prior.LogP, t.Prior.SE, t.Prior.K)
	}
	p("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
