package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vigo-bayes/vigo/apovi"
	"github.com/vigo-bayes/vigo/internal/resultmd"
	"github.com/vigo-bayes/vigo/rng"
)

// SpeedResult holds the timing comparisons of the speed part, each measured interleaved in
// one run (median of the rounds).
type SpeedResult struct {
	Rounds  int
	N, Grid int // the dataset's size and the number of test inputs
	// Predict[S] is Load + Predict of a saved APOVI model (what vigo predict does between
	// reading the CSV and writing the outputs) with S samples; POVIStep one POVI training
	// iteration (loss with S = 5, gradient, Adam step) on the same dataset.
	Predict map[int]time.Duration
	// PredictOnly[S] is Predict on the grid alone, the model already in memory.
	PredictOnly map[int]time.Duration
	// PredictData[S] is the same at the dataset's own N inputs instead of the grid.
	PredictData map[int]time.Duration
	Load        time.Duration // apovi.Load of the saved JSON alone
	JSONBytes   int
	POVIStep    time.Duration
	Samples     []int
	// Layer: vigo's BenchmarkGipLayer50 (go test -bench, GOMAXPROCS=1) against
	// bench/peers/apovi_layer.py at N = 392, D_in = D = 50 (""/0 when skipped).
	LayerGo, LayerTorch []time.Duration
	LayerNote           string
	// PredictFast and PredictTape: BenchmarkPredictELBOExp and BenchmarkPredictTapeELBOExp
	// (apovi/bench_test.go, GOMAXPROCS=1), Predict's forward-only path against the tape path it
	// replaced, S = 100, per round.
	PredictFast, PredictTape []time.Duration
	LoadStart, LoadEnd       string
}

// runAPOVISpeed measures vigo predict's forward pass against one POVI step on the same dataset
// (E1's architecture; the first E1 test set), and one APOVI layer against the PyTorch peer.
func runAPOVISpeed(ctx context.Context, cfg APOVIConfig, say func(string, ...any)) (*SpeedResult, error) {
	res := &SpeedResult{Rounds: 15, Grid: 500, Predict: map[int]time.Duration{}, PredictData: map[int]time.Duration{}, PredictOnly: map[int]time.Duration{}, Samples: []int{5, 100}, LoadStart: resultmd.LoadAvg()}
	if cfg.Quick {
		res.Rounds = 2
	}
	tests, err := apovi.GPDatasets(apovi.GPConfig{}, 1, rng.Derive(cfg.Seed, 100))
	if err != nil {
		return nil, err
	}
	d := tests[0]
	res.N = d.N
	grid := make([]float64, res.Grid)
	for i := range grid {
		grid[i] = -2 + 4*float64(i)/float64(res.Grid-1)
	}
	m, err := e1APOVI(rng.Derive(cfg.Seed, 400))
	if err != nil {
		return nil, err
	}
	var saved bytes.Buffer
	if err := apovi.Save(&saved, m); err != nil {
		return nil, err
	}
	res.JSONBytes = saved.Len()
	pred, predData, predOnly := map[int][]time.Duration{}, map[int][]time.Duration{}, map[int][]time.Duration{}
	var povi, load []time.Duration
	for round := range res.Rounds {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, S := range res.Samples {
			start := time.Now()
			lm, err := apovi.Load(bytes.NewReader(saved.Bytes()))
			if err != nil {
				return nil, err
			}
			if _, err := lm.Predict(d, grid, S, rng.New(cfg.Seed, 401).Rand); err != nil {
				return nil, err
			}
			pred[S] = append(pred[S], time.Since(start))
			start = time.Now()
			lm, err = apovi.Load(bytes.NewReader(saved.Bytes()))
			if err != nil {
				return nil, err
			}
			if _, err := lm.Predict(d, d.X, S, rng.New(cfg.Seed, 401).Rand); err != nil {
				return nil, err
			}
			predData[S] = append(predData[S], time.Since(start))
			start = time.Now()
			if _, err := lm.Predict(d, grid, S, rng.New(cfg.Seed, 401).Rand); err != nil {
				return nil, err
			}
			predOnly[S] = append(predOnly[S], time.Since(start))
		}
		start := time.Now()
		if _, err := apovi.Load(bytes.NewReader(saved.Bytes())); err != nil {
			return nil, err
		}
		load = append(load, time.Since(start))
		pm, err := e1POVI(d, rng.Derive(cfg.Seed, 402))
		if err != nil {
			return nil, err
		}
		tr, err := apovi.Train(ctx, pm, []apovi.Task{{Context: d}}, apovi.TrainConfig{LR: 5e-3, Samples: 5, MaxIter: 1, Seed: uint64(round)})
		if err != nil {
			return nil, err
		}
		povi = append(povi, tr.Wall)
	}
	for S, v := range pred {
		res.Predict[S] = median(v)
		res.PredictData[S] = median(predData[S])
		res.PredictOnly[S] = median(predOnly[S])
	}
	res.POVIStep = median(povi)
	res.Load = median(load)
	say("apovi speed: predict S=5 %v, S=100 %v; POVI step %v", res.Predict[5], res.Predict[100], res.POVIStep)
	if cfg.Torch == "" || cfg.RepoDir == "" {
		res.LayerNote = "skipped: no --torch peer or repository directory given"
	} else {
		if err := layerRace(ctx, cfg, res, say); err != nil {
			res.LayerNote = "skipped: " + err.Error()
		}
		if err := predictPathRace(ctx, cfg, res, say); err != nil {
			say("apovi speed: predict paths skipped: %v", err)
		}
	}
	res.LoadEnd = resultmd.LoadAvg()
	return res, nil
}

func median(v []time.Duration) time.Duration {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

var (
	nsPerOp     = regexp.MustCompile(`BenchmarkGipLayer50\S*\s+\d+\s+([0-9.]+) ns/op`)
	predictNsOp = regexp.MustCompile(`BenchmarkPredict(Tape)?ELBOExp\S*\s+\d+\s+([0-9.]+) ns/op`)
)

// predictPathRace times Predict's forward-only path against the tape path (both benchmarks in
// one go test process per round, alternating within it).
func predictPathRace(ctx context.Context, cfg APOVIConfig, res *SpeedResult, say func(string, ...any)) error {
	rounds := 3
	if cfg.Quick {
		rounds = 1
	}
	for range rounds {
		gocmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", "^BenchmarkPredict(Tape)?ELBOExp$", "-benchtime", "5x", "./apovi")
		gocmd.Dir = cfg.RepoDir
		gocmd.Env = append(os.Environ(), "GOMAXPROCS=1")
		out, err := gocmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("go test -bench: %v: %s", err, lastLine(out))
		}
		ms := predictNsOp.FindAllSubmatch(out, -1)
		if len(ms) != 2 {
			return fmt.Errorf("go test -bench: want two Predict benchmarks in %q", lastLine(out))
		}
		for _, m := range ms {
			ns, _ := strconv.ParseFloat(string(m[2]), 64)
			if len(m[1]) > 0 {
				res.PredictTape = append(res.PredictTape, time.Duration(ns))
			} else {
				res.PredictFast = append(res.PredictFast, time.Duration(ns))
			}
		}
		say("apovi speed: predict S = 100: forward-only %v, tape %v", res.PredictFast[len(res.PredictFast)-1], res.PredictTape[len(res.PredictTape)-1])
	}
	return nil
}

// layerRace alternates vigo's layer benchmark and the PyTorch peer, each on one thread.
func layerRace(ctx context.Context, cfg APOVIConfig, res *SpeedResult, say func(string, ...any)) error {
	if _, err := os.Stat(filepath.Join(cfg.RepoDir, "apovi", "bench_test.go")); err != nil {
		return fmt.Errorf("no apovi/bench_test.go under %s", cfg.RepoDir)
	}
	rounds := 3
	if cfg.Quick {
		rounds = 1
	}
	for range rounds {
		gocmd := exec.CommandContext(ctx, "go", "test", "-run", "^$", "-bench", "^BenchmarkGipLayer50$", "-benchtime", "10x", "./apovi")
		gocmd.Dir = cfg.RepoDir
		gocmd.Env = append(os.Environ(), "GOMAXPROCS=1")
		out, err := gocmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("go test -bench: %v: %s", err, lastLine(out))
		}
		mm := nsPerOp.FindSubmatch(out)
		if mm == nil {
			return fmt.Errorf("go test -bench: no ns/op in %q", lastLine(out))
		}
		ns, _ := strconv.ParseFloat(string(mm[1]), 64)
		res.LayerGo = append(res.LayerGo, time.Duration(ns))
		py := exec.CommandContext(ctx, "/usr/bin/python3", cfg.Torch, "--n", "392", "--din", "50", "--dout", "50", "--batches", "5")
		py.Dir = cfg.RepoDir
		pout, err := py.Output()
		if err != nil {
			return fmt.Errorf("%s: %v", cfg.Torch, err)
		}
		var pr struct {
			MedianSec float64 `json:"median_sec"`
		}
		if err := json.Unmarshal(bytes.TrimSpace(pout), &pr); err != nil {
			return fmt.Errorf("%s: output %q: %v", cfg.Torch, pout, err)
		}
		res.LayerTorch = append(res.LayerTorch, time.Duration(pr.MedianSec*1e9))
		say("apovi speed: layer 392×50×50: vigo %v, PyTorch %v", res.LayerGo[len(res.LayerGo)-1], res.LayerTorch[len(res.LayerTorch)-1])
	}
	return nil
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

func (s *SpeedResult) markdown(b *bytes.Buffer) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("\n## Speed\n\n")
	p("Measured in this run, interleaved, median of %d rounds; load average at the start %s, at the end %s (2 shared cores: absolute times are inflated, ratios are what to read).\n\n", s.Rounds, s.LoadStart, s.LoadEnd)
	p("### vigo predict against one POVI training step (issue 16 Done-when)\n\n")
	p("Dataset: the first E1 test set (N = %d); %d test inputs on linspace(−2, 2). APOVI: E1's architecture, saved to JSON; timed = apovi.Load of the JSON + Predict (inference nets on the N points, S weight samples, the test inputs pushed through) — the work of `vigo predict` between reading the CSV and writing its files. POVI: E1's POVI on the same dataset (M = max(N, 20)); timed = one training iteration (ELBO loss with S = 5, gradient, Adam step; apovi.Train with MaxIter 1).\n\n", s.N, s.Grid)
	p("| what | time | ratio to one POVI step |\n|---|---:|---:|\n")
	p("| one POVI training step (S = 5) | %v | 1 |\n", s.POVIStep.Round(time.Microsecond))
	p("| apovi.Load of the saved model alone (%d KB of JSON) | %v | %.2f |\n", s.JSONBytes/1000, s.Load.Round(time.Microsecond), float64(s.Load)/float64(s.POVIStep))
	for _, S := range s.Samples {
		p("| vigo predict: Load + forward pass, S = %d, %d grid inputs | %v | %.2f |\n", S, s.Grid, s.Predict[S].Round(time.Microsecond), float64(s.Predict[S])/float64(s.POVIStep))
		p("| vigo predict: Load + forward pass, S = %d, at the N = %d data inputs | %v | %.2f |\n", S, s.N, s.PredictData[S].Round(time.Microsecond), float64(s.PredictData[S])/float64(s.POVIStep))
		p("| forward pass alone (model in memory), S = %d, %d grid inputs | %v | %.2f |\n", S, s.Grid, s.PredictOnly[S].Round(time.Microsecond), float64(s.PredictOnly[S])/float64(s.POVIStep))
	}
	p("\nAt S = 5 (as many weight samples as the POVI step draws) predict on the grid is %s than one POVI step, at the data inputs %s; at the CLI's default S = 100 on the grid it is %s. Training POVI from scratch takes hundreds to thousands of such steps (E1 ran 600 per test set).\n",
		fasterSlower(s.Predict[5], s.POVIStep), fasterSlower(s.PredictData[5], s.POVIStep), fasterSlower(s.Predict[100], s.POVIStep))
	if len(s.PredictFast) > 0 {
		p("\n### Predict's forward-only path against the tape path it replaced\n\n")
		p("Predict at S = 100 on the same setting (E1's architecture, N = 24, 500 test inputs; untrained weights): `GOMAXPROCS=1 go test -run '^$' -bench '^BenchmarkPredict(Tape)?ELBOExp$' -benchtime 5x ./apovi`, both benchmarks in one process per round, %d rounds. The tape path is the per-sample training forward (inference nets, KL and adjoint caches on the tape); the forward-only path (apovi/predict_fast.go) draws the same weights without the tape, factorises layer 0 once for all samples and shares UUᵀ across the units of an N-space layer.\n\n", len(s.PredictFast))
		p("| round | forward-only | tape | tape / forward-only |\n|---:|---:|---:|---:|\n")
		for i := range s.PredictFast {
			p("| %d | %v | %v | %.2f |\n", i+1, s.PredictFast[i].Round(time.Microsecond), s.PredictTape[i].Round(time.Microsecond), float64(s.PredictTape[i])/float64(s.PredictFast[i]))
		}
		f, t := median(s.PredictFast), median(s.PredictTape)
		p("| median | %v | %v | %.2f |\n", f.Round(time.Microsecond), t.Round(time.Microsecond), float64(t)/float64(f))
	}
	p("\n### One APOVI layer: vigo against PyTorch (float64, one thread)\n\n")
	if len(s.LayerGo) == 0 {
		p("%s\n", s.LayerNote)
		return
	}
	p("One hidden amortised layer, N = 392 inducing points (the data), D_in = D = 50 (K = 51): D separate K×K conditionals — weighted Gram matrices, Cholesky factors, the reparameterised draw and the KL — forward and backward to the layer input and the pseudo-likelihood; loss Σ weights + KL. vigo: `GOMAXPROCS=1 go test -run '^$' -bench '^BenchmarkGipLayer50$' -benchtime 10x ./apovi` (apovi/bench_test.go, h16-model); PyTorch 1.13 eager, batched over the units: `/usr/bin/python3 bench/peers/apovi_layer.py --n 392 --din 50 --dout 50 --batches 5`. Alternated %d times.\n\n", len(s.LayerGo))
	p("| round | vigo | PyTorch | PyTorch / vigo |\n|---:|---:|---:|---:|\n")
	for i := range s.LayerGo {
		p("| %d | %v | %v | %.2f |\n", i+1, s.LayerGo[i].Round(time.Microsecond), s.LayerTorch[i].Round(time.Microsecond), float64(s.LayerTorch[i])/float64(s.LayerGo[i]))
	}
	g, t := median(s.LayerGo), median(s.LayerTorch)
	p("| median | %v | %v | %.2f |\n", g.Round(time.Microsecond), t.Round(time.Microsecond), float64(t)/float64(g))
}

func fasterSlower(a, b time.Duration) string {
	if a < b {
		return fmt.Sprintf("**faster** (%.2f×)", float64(a)/float64(b))
	}
	return fmt.Sprintf("**slower** (%.2f×)", float64(a)/float64(b))
}
