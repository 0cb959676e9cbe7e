package bench

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/vigo-bayes/vigo/apovi"
	"github.com/vigo-bayes/vigo/imagecomp"
	"github.com/vigo-bayes/vigo/rng"
)

// E3Result is Table 2's APOVI and linear-interpolation rows rerun on one data set.
type E3Result struct {
	Dataset                 string // "MNIST-10k" or "Fashion-MNIST"
	Hidden, InferenceHidden []int
	Iters                   int
	LR                      float64
	ES                      apovi.EarlyStop
	// Stop is the stopping rule: "thesis" (ES on the training loss) or "validation" (held-out
	// squared error on ValImages pool images that are not trained on, every ValEvery
	// iterations, patience ValPatience, best parameters kept).
	Stop                             string
	ValImages, ValEvery, ValPatience int
	Pool                             int    // training images available
	Protocol                         string // the test images and the pool, in words
	// LinInterp[k] is linear interpolation's squared error on test digit k; LinNaN[k] its
	// pixels outside the context hull (each counted 1.0).
	LinInterp []float64
	LinNaN    []int
	Regimes   []E3Regime
	// Mean and Std (784 each) of APOVI's prediction of test digit 0 per regime, and the
	// masked digit, for the figure.
	Example     []float64
	ExampleMask imagecomp.Mask
}

// E3Regime is APOVI trained on one training set size.
type E3Regime struct {
	Name       string
	Images     int // |Ξ|
	Iters      int
	Early      bool
	BestIter   int // with the validation rule: the iteration count of the kept parameters
	Wall       time.Duration
	CPU        time.Duration // process CPU time of training and prediction
	FirstLoss  float64
	LastLoss   float64 // mean of the last 20 batch losses
	SqErr      []float64
	Mean, Std  []float64 // test digit 0
	ImagesSeen int
	ValBest    float64 // best held-out squared error (validation rule)
}

// e3Thesis is Table 2 (report p.22): APOVI 20.6 ± 1.3 (large) and 23.5 ± 4.0 (|Ξ| = 10); linear
// interpolation 51.5.
var e3Thesis = map[string]float64{"large": 20.6, "10": 23.5, "lin": 51.5}

// E3Stops are the stopping rules of E3: the thesis's rule on the training loss, or held-out
// validation (apovi.Validation).
var E3Stops = []string{"thesis", "validation"}

// e3Data is one image-completion data set: the ten test problems and the training pool.
type e3Data struct {
	name, protocol string
	test, pool     []imagecomp.Task
}

// e3MaskSeed is the mask seed of E3, as RunImageBaselines's default (ImageBaselinesConfig.MaskSeed):
// the same test images and masks as its ConvCNP and linear-interpolation runs.
const e3MaskSeed = 0

func loadE3Data(name, dir string) (*e3Data, error) { return loadImageData(name, dir, e3MaskSeed) }

// loadImageData loads MNIST-10k (imagecomp.TestTasks/TrainTasks) or Fashion-MNIST
// (imagecomp.SplitTasks) with the masks of maskSeed.
func loadImageData(name, dir string, maskSeed uint64) (*e3Data, error) {
	switch name {
	case "MNIST-10k":
		if dir == "" {
			return nil, fmt.Errorf("no MNIST directory (MNIST=\"\"; ../shared/data/mnist-10k)")
		}
		set, err := imagecomp.LoadMNIST(dir)
		if err != nil {
			return nil, err
		}
		tests, err := imagecomp.TestTasks(set, maskSeed)
		if err != nil {
			return nil, err
		}
		pool, err := imagecomp.TrainTasks(set, 0, maskSeed)
		if err != nil {
			return nil, err
		}
		return &e3Data{name: name, test: tests, pool: pool, protocol: fmt.Sprintf("ten fixed test digits (labels 7, 2, 1, 0, 4, 1, 4, 9, 5, 9 by occurrence in ../shared/data/mnist-10k) with the thesis's mask probabilities p_i (our pixel draws); training pool = the other %d images", len(pool))}, nil
	case "Fashion-MNIST":
		if dir == "" {
			return nil, fmt.Errorf("no Fashion-MNIST directory (FashionMNIST=\"\"; Debian's dataset-fashion-mnist)")
		}
		train, test, err := imagecomp.LoadFashionMNIST(dir)
		if err != nil {
			return nil, err
		}
		tests, pool, err := imagecomp.SplitTasks(train, test, 0, maskSeed)
		if err != nil {
			return nil, err
		}
		return &e3Data{name: name, test: tests, pool: pool, protocol: fmt.Sprintf("the first ten images of Fashion-MNIST's test split (labels 9, 2, 1, 1, 6, 1, 4, 6, 5, 7; the thesis's MNIST rule) with the thesis's mask probabilities p_i (our pixel draws); training pool = the %d images of the training split", len(pool))}, nil
	}
	return nil, fmt.Errorf("unknown image data set %q (known: MNIST-10k, Fashion-MNIST)", name)
}

// apoviTask is an image problem as an APOVI task: the fixed mask's observed pixels are the
// context, the others the targets (ok false when either is empty).
func apoviTask(tk imagecomp.Task) (apovi.Task, bool) {
	cx, cy := tk.Context()
	tx, ty := tk.Targets()
	if len(cy) == 0 || len(ty) == 0 {
		return apovi.Task{}, false // a mask with every pixel observed or none (probability < 1e-17)
	}
	return apovi.Task{Context: apovi.Dataset{X: cx, Y: cy, N: len(cy), DX: 2, DY: 1},
		Target: apovi.Dataset{X: tx, Y: ty, N: len(ty), DX: 2, DY: 1}}, true
}

// apoviSqErr is the mean over tasks of the thesis's squared error of m's predictive mean (S = 10
// draws from r) given each task's binarised context.
func apoviSqErr(m *apovi.APOVI, tasks []imagecomp.Task, r *rng.Stream, perImage func(k int, pr *apovi.Prediction, e float64)) (float64, error) {
	coords := imagecomp.Coords()
	sum := 0.0
	for k, tk := range tasks {
		cx, cy := tk.Context()
		pr, err := m.Predict(apovi.Dataset{X: cx, Y: cy, N: len(cy), DX: 2, DY: 1}, coords, 10, r.Rand)
		if err != nil {
			return 0, err
		}
		e, err := imagecomp.SquaredError(tk.Image, pr.Mean)
		if err != nil {
			return 0, err
		}
		if perImage != nil {
			perImage(k, pr, e)
		}
		sum += e
	}
	return sum / float64(len(tasks)), nil
}

// runE3 is Table 2's APOVI part on one data set: a Bernoulli APOVI trained with NPML on fixed
// masked training images (|Ξ| = 10 and the large regime), evaluated on the protocol's ten test
// images by the thesis's squared error against the grey-scale image; linear interpolation on
// the same images and masks.
func runE3(ctx context.Context, cfg APOVIConfig, say func(string, ...any), dataset string) (*E3Result, error) {
	dir := cfg.MNIST
	if dataset == "Fashion-MNIST" {
		dir = cfg.FashionMNIST
	}
	data, err := loadE3Data(dataset, dir)
	if err != nil {
		return nil, err
	}
	tests, pool := data.test, data.pool
	res := &E3Result{Dataset: dataset, Hidden: cfg.E3Hidden, InferenceHidden: cfg.E3InferenceHidden, Iters: cfg.E3Iters, LR: 1e-3,
		ES: apovi.EarlyStop{Min: 500, Ref: 100, Smooth: 100}, Stop: cfg.E3Stop, Pool: len(pool), Protocol: data.protocol, ExampleMask: tests[0].Mask}
	if cfg.Quick {
		res.ES = apovi.EarlyStop{}
	}
	// The validation rule holds out the last ValImages pool images (never trained on) with
	// test-like masks: the thesis's p_i, pixel draws from the next mask seed.
	var valTasks []imagecomp.Task
	if res.Stop == "validation" {
		res.ES = apovi.EarlyStop{}
		res.ValImages, res.ValEvery, res.ValPatience = 10, 25, 8
		if cfg.Quick {
			res.ValEvery, res.ValPatience = 2, 2
		}
		masks := imagecomp.TestMasks(e3MaskSeed + 1)
		for k, tk := range pool[len(pool)-res.ValImages:] {
			tk.Mask = masks[k]
			valTasks = append(valTasks, tk)
		}
		pool = pool[:len(pool)-res.ValImages]
	}
	for _, tk := range tests {
		li, err := imagecomp.LinearInterpolate(tk.Image, tk.Mask)
		if err != nil {
			return nil, err
		}
		e, err := imagecomp.SquaredError(tk.Image, li)
		if err != nil {
			return nil, err
		}
		nan := 0
		for _, v := range li {
			if v != v {
				nan++
			}
		}
		res.LinInterp = append(res.LinInterp, e)
		res.LinNaN = append(res.LinNaN, nan)
	}
	res.Example = tests[0].Image
	say("apovi e3 %s: linear interpolation mean squared error %.2f over %d test images", dataset, meanOf(res.LinInterp), len(tests))
	large := len(pool)
	if cfg.E3Large > 0 {
		large = cfg.E3Large
	}
	if large > len(pool) {
		return nil, fmt.Errorf("E3Large=%d exceeds the training pool (%d images)", large, len(pool))
	}
	// Seeds: MNIST-10k keeps the streams of the runs before Fashion-MNIST was added.
	base := uint64(500)
	if dataset == "Fashion-MNIST" {
		base = 600
	}
	for ri, rg := range []struct {
		name string
		n    int
	}{{"10", 10}, {"large", large}} {
		if !slices.Contains(cfg.E3Regimes, rg.name) {
			continue
		}
		cpu0, _ := processCPU()
		tasks := make([]apovi.Task, 0, rg.n)
		for _, tk := range pool[:rg.n] {
			if at, ok := apoviTask(tk); ok {
				tasks = append(tasks, at)
			}
		}
		m, err := apovi.NewAPOVI(apovi.Config{DX: 2, DY: 1, Hidden: cfg.E3Hidden, InferenceHidden: cfg.E3InferenceHidden,
			Likelihood: apovi.Likelihood{Kind: apovi.Bernoulli}}, rng.Derive(cfg.Seed, base+1, uint64(ri)))
		if err != nil {
			return nil, err
		}
		lastSay := time.Now()
		tc := apovi.TrainConfig{Objective: apovi.NPML, LR: res.LR, Batch: 4, Samples: 1,
			MaxIter: cfg.E3Iters, EarlyStop: res.ES, Seed: rng.Derive(cfg.Seed, base+2, uint64(ri)),
			Progress: func(p apovi.TrainProgress) {
				if time.Since(lastSay) > time.Minute {
					say("apovi e3 %s: |Ξ| = %s: iteration %d/%d, loss %.4f", dataset, rg.name, p.Iter, p.MaxIter, p.Loss)
					lastSay = time.Now()
				}
			}}
		if valTasks != nil {
			valSeed := rng.Derive(cfg.Seed, base+4, uint64(ri))
			tc.Validation = apovi.Validation{Every: res.ValEvery, Patience: res.ValPatience, Loss: func() (float64, error) {
				// The same draws at every evaluation (common random numbers).
				return apoviSqErr(m, valTasks, rng.New(valSeed, 0), nil)
			}}
		}
		tr, err := apovi.Train(ctx, m, tasks, tc)
		if err != nil {
			return nil, err
		}
		reg := E3Regime{Name: rg.name, Images: len(tasks), Iters: tr.Iters, Early: tr.EarlyStopped, BestIter: tr.BestIter, Wall: tr.Wall,
			FirstLoss: tr.Losses[0], LastLoss: meanOf(tr.Losses[max(0, len(tr.Losses)-20):]), ImagesSeen: tr.Iters * min(4, len(tasks))}
		if len(tr.ValLosses) > 0 {
			reg.ValBest = slices.Min(tr.ValLosses)
		}
		if _, err := apoviSqErr(m, tests, rng.New(cfg.Seed, base+3), func(k int, pr *apovi.Prediction, e float64) {
			reg.SqErr = append(reg.SqErr, e)
			if k == 0 {
				reg.Mean, reg.Std = pr.Mean, pr.Std
			}
		}); err != nil {
			return nil, err
		}
		cpu1, _ := processCPU()
		reg.CPU = cpu1 - cpu0
		res.Regimes = append(res.Regimes, reg)
		say("apovi e3 %s: |Ξ| = %s (%d images): %d iterations, %v, loss %.4f → %.4f, squared error %.2f (linear interpolation %.2f)",
			dataset, rg.name, len(tasks), tr.Iters, tr.Wall.Round(time.Second), reg.FirstLoss, reg.LastLoss, meanOf(reg.SqErr), meanOf(res.LinInterp))
	}
	return res, nil
}

func (e *E3Result) markdown(b *bytes.Buffer) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## E3 (Table 2): image completion on %s, APOVI and linear interpolation\n\n", e.Dataset)
	p("Protocol (package imagecomp; apovi.md §4.3, §5 E3): %s, each with a fixed mask p ~ U[0.05, 0.95]; inputs are pixel coordinates in [−1, 1]², targets and the context binarised at 0.5. Metric per test image: Σ over all 784 pixels of (grey-scale original − predicted mean)², a NaN prediction counting 1.0; the table gives the mean over the ten images. APOVI predicts the mean of sigmoid(f) over S = 10 samples given the binarised context; linear interpolation sees the grey-scale context (as the thesis; not like for like, apovi.md §5 E3).\n\n", e.Protocol)
	stop := esText(e.ES)
	if e.Stop == "validation" {
		stop = fmt.Sprintf("held-out early stopping (not the thesis's rule): every %d iterations the mean squared error on %d pool images that are not trained on (the last %d of the pool, masks with the thesis's test p_i from mask seed %d), patience %d evaluations, the best parameters kept", e.ValEvery, e.ValImages, e.ValImages, e3MaskSeed+1, e.ValPatience)
	}
	p("**APOVI budget (weaker than the thesis):** Bernoulli APOVI with NPML, BNN [2, %s, 1] with inference networks [3, %s, 2D^ℓ] on every layer (thesis [2, 150, 150, 150, 1] and [3, 200, 200, 200, ·]); lr %g (thesis 1e-4: raised because of the ≈ 10× shorter run), B = 4, S = 1; at most %d iterations (thesis 10,000) with %s; one training repetition per regime (thesis 3), so no ± is given.\n\n",
		joinInts(e.Hidden), joinInts(e.InferenceHidden), e.LR, e.Iters, stop)
	lin := meanOf(e.LinInterp)
	p("| model | \\|Ξ\\| | images seen | iterations | loss first → last 20 | squared error (ours) | ratio to linear interpolation (ours) | thesis | thesis ratio | CPU |\n|---|---|---:|---:|---|---:|---:|---:|---:|---:|\n")
	for _, r := range e.Regimes {
		name := "10"
		if r.Name == "large" {
			what := "the whole pool"
			if r.Images < e.Pool-e.ValImages {
				what = "the first images of the pool"
			}
			if e.Dataset == "MNIST-10k" {
				what = "stand-in for the large regime: " + what
			}
			name = fmt.Sprintf("%d (%s)", r.Images, what)
		}
		it := fmt.Sprint(r.Iters)
		switch {
		case e.Stop == "validation":
			it = fmt.Sprintf("%d (best at %d%s)", r.Iters, r.BestIter, map[bool]string{true: ", stopped", false: ""}[r.Early])
		case r.Early:
			it += " (early stop)"
		}
		p("| APOVI | %s | %d | %s | %.4f → %.4f | %.2f | %.2f | %.1f | %.2f | %s |\n", name, r.ImagesSeen, it,
			r.FirstLoss, r.LastLoss, meanOf(r.SqErr), meanOf(r.SqErr)/lin, e3Thesis[r.Name], e3Thesis[r.Name]/e3Thesis["lin"], r.CPU.Round(time.Second))
	}
	nan := 0
	for _, v := range e.LinNaN {
		nan += v
	}
	p("| linear interpolation | – | – | – | – | %.2f | 1 | 51.5 | 1 | |\n", lin)
	if e.Stop == "validation" {
		p("\nHeld-out squared error at the kept parameters:")
		for _, r := range e.Regimes {
			p(" |Ξ| = %s: %.2f;", r.Name, r.ValBest)
		}
		p(" (on the validation images, not the test images).\n")
	}
	p("\nThe thesis's numbers are on MNIST (60,000 training images, the first ten test images); ")
	if e.Dataset == "Fashion-MNIST" {
		p("there is no Fashion-MNIST entry in the thesis, so its column is a reference for the ratio only.\n")
	} else {
		p("ours are on MNIST-10k.\n")
	}
	p("\nThe ConvCNP (on the grid) is trained by `vigo bench apovi-baselines` on the same protocol (mask seed 0: the same test images and masks, so its linear-interpolation number equals ours).\n")
	p("\nLinear interpolation leaves %.1f pixels per test image outside the context's convex hull on average (each adds 1.0; the sheet's simulation expects ≈ 30.4 for MNIST).\n\n", float64(nan)/float64(len(e.LinNaN)))
	p("Per test image (squared error):\n\n| image | linear interpolation |")
	for _, r := range e.Regimes {
		p(" APOVI \\|Ξ\\| = %s |", r.Name)
	}
	p("\n|---:|---:|%s\n", repeatStr("---:|", len(e.Regimes)))
	for k := range e.LinInterp {
		p("| %d | %.2f |", k, e.LinInterp[k])
		for _, r := range e.Regimes {
			p(" %.2f |", r.SqErr[k])
		}
		p("\n")
	}
	for _, r := range e.Regimes {
		if r.Name == "large" {
			p("\nThe \"large\" regime: the thesis's |Ξ| = 60,000 run saw at most 40,000 images once each; ours had %d images available and saw %d image draws in %d iterations.\n", r.Images, r.ImagesSeen, r.Iters)
		}
	}
}

func joinInts(v []int) string {
	s := ""
	for i, a := range v {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprint(a)
	}
	return s
}

func repeatStr(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

func esText(e apovi.EarlyStop) string {
	if !e.Enabled() {
		return "no early stopping"
	}
	return fmt.Sprintf("the thesis's early-stopping rule %d/%d/%d (it cannot fire before iteration %d)", e.Min, e.Ref, e.Smooth, e.Min+1)
}
