package apovi

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/rng"
)

// quadModel is a Model whose per-dataset loss is (θ − ȳ)² + 1 (the + 1 keeps the minimum
// away from 0, where the relative early-stopping rule cannot fire), ȳ the mean output of the data the
// loss sees; it records every call, so the tests can check what Train fed it.
type quadModel struct {
	theta []float64
	calls []quadCall
}

type quadCall struct {
	obj      Objective
	ctx, tgt Dataset
	S        int
}

func (m *quadModel) Dims() (int, int)  { return 1, 1 }
func (m *quadModel) Params() []float64 { return m.theta }
func (m *quadModel) SetParams(p []float64) error {
	copy(m.theta, p)
	return nil
}

func (m *quadModel) Loss(t *ad.Tape, p ad.Var, obj Objective, ctx, tgt Dataset, S int, _ *rand.Rand) (ad.Var, error) {
	m.calls = append(m.calls, quadCall{obj, ctx, tgt, S})
	ybar := 0.0
	for _, y := range ctx.Y {
		ybar += y
	}
	for _, y := range tgt.Y {
		ybar += y
	}
	ybar /= float64(ctx.N + tgt.N)
	return t.AddC(t.Sum(t.Square(t.AddC(p, -ybar))), 1), nil
}

func (m *quadModel) Predict(Dataset, []float64, int, *rand.Rand) (*Prediction, error) {
	return nil, errors.New("not used")
}

// constTasks returns n tasks of N points each whose outputs all equal task i's index i.
func constTasks(n, N int) []Task {
	tasks := make([]Task, n)
	for i := range tasks {
		d := Dataset{N: N, DX: 1, DY: 1, X: make([]float64, N), Y: make([]float64, N)}
		for j := range N {
			d.X[j] = float64(j)
			d.Y[j] = float64(i)
		}
		tasks[i] = Task{Context: d}
	}
	return tasks
}

// TestTrainBatchAndLoader: each iteration sees min(B, |Ξ|) tasks, every pass of the loader
// visits each task exactly once, and the recorded loss is Σ loss_b / B even when |Ξ| < B.
func TestTrainBatchAndLoader(t *testing.T) {
	m := &quadModel{theta: []float64{0.5}}
	tasks := constTasks(3, 5)
	res, err := Train(context.Background(), m, tasks, TrainConfig{Batch: 2, MaxIter: 6, Samples: 4, LR: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	if res.Iters != 6 || len(res.Losses) != 6 || res.EarlyStopped {
		t.Fatalf("iters %d, losses %d, early %v", res.Iters, len(res.Losses), res.EarlyStopped)
	}
	if len(m.calls) != 12 {
		t.Fatalf("%d loss calls, want 12", len(m.calls))
	}
	for pass := range 4 { // 12 draws = 4 passes over 3 tasks
		seen := map[float64]bool{}
		for _, c := range m.calls[3*pass : 3*pass+3] {
			seen[c.ctx.Y[0]] = true
			if c.S != 4 || c.obj != ELBO || c.tgt.N != 0 || c.ctx.N != 5 {
				t.Fatalf("call %+v", c)
			}
		}
		if len(seen) != 3 {
			t.Errorf("pass %d visited %v, want each of the 3 tasks once", pass, seen)
		}
	}
	// With LR ≈ 0, θ stays 0.5: loss of iteration 0 = ((0.5−y₀)² + 1 + (0.5−y₁)² + 1)/2.
	y0, y1 := m.calls[0].ctx.Y[0], m.calls[1].ctx.Y[0]
	if want := ((0.5-y0)*(0.5-y0) + (0.5-y1)*(0.5-y1) + 2) / 2; math.Abs(res.Losses[0]-want) > 1e-8 {
		t.Errorf("loss %v, want %v", res.Losses[0], want)
	}
	// |Ξ| = 1 < B = 5: one task per iteration, loss divided by 5.
	m = &quadModel{theta: []float64{0.5}}
	res, err = Train(context.Background(), m, tasks[2:], TrainConfig{Batch: 5, MaxIter: 1, LR: 1e-9})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.calls) != 1 || math.Abs(res.Losses[0]-3.25/5) > 1e-8 {
		t.Errorf("|Ξ| < B: %d calls, loss %v, want 1 and %v", len(m.calls), res.Losses[0], 3.25/5)
	}
}

// TestTrainConverges: Adam on Σ((θ − yᵢ)² + 1)/B reaches the mean of the tasks' outputs, and early
// stopping fires once the loss is flat, well before MaxIter.
func TestTrainConverges(t *testing.T) {
	m := &quadModel{theta: []float64{5}}
	tasks := constTasks(1, 4)
	res, err := Train(context.Background(), m, tasks, TrainConfig{LR: 0.05, MaxIter: 5000,
		EarlyStop: EarlyStop{Min: 100, Ref: 50, Smooth: 20}})
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(m.theta[0]) > 0.05 {
		t.Errorf("θ = %v, want ≈ 0", m.theta[0])
	}
	if !res.EarlyStopped || res.Iters >= 5000 || res.Iters <= 101 {
		t.Errorf("iters %d, early %v", res.Iters, res.EarlyStopped)
	}
}

// TestTrainRandomSplit: NPML tasks without a fixed target are split afresh each draw with
// n_c ∈ {3, …, min(20, N−1)−1}, disjoint and covering the dataset; fixed splits pass through.
func TestTrainRandomSplit(t *testing.T) {
	m := &quadModel{theta: []float64{0}}
	tasks := constTasks(2, 12)
	if _, err := Train(context.Background(), m, tasks, TrainConfig{Objective: NPML, MaxIter: 300, LR: 1e-9}); err != nil {
		t.Fatal(err)
	}
	sizes := map[int]bool{}
	for _, c := range m.calls {
		if c.obj != NPML || c.ctx.N+c.tgt.N != 12 {
			t.Fatalf("split %d + %d", c.ctx.N, c.tgt.N)
		}
		seen := map[float64]bool{}
		for _, x := range append(append([]float64{}, c.ctx.X...), c.tgt.X...) {
			seen[x] = true
		}
		if len(seen) != 12 {
			t.Fatalf("split is not a partition: %v / %v", c.ctx.X, c.tgt.X)
		}
		sizes[c.ctx.N] = true
	}
	// N = 12: n_c ∈ {3, …, 10}; 300 draws miss one of the 8 sizes with probability < 8·(7/8)^300.
	for nc := 3; nc <= 10; nc++ {
		if !sizes[nc] {
			t.Errorf("context size %d never drawn", nc)
		}
	}
	if sizes[2] || sizes[11] {
		t.Errorf("context sizes out of range: %v", sizes)
	}
	fixed := []Task{{Context: tasks[0].Context, Target: tasks[1].Context}}
	m = &quadModel{theta: []float64{0}}
	if _, err := Train(context.Background(), m, fixed, TrainConfig{Objective: NPML, MaxIter: 2}); err != nil {
		t.Fatal(err)
	}
	if c := m.calls[1]; c.ctx.Y[0] != 0 || c.tgt.Y[0] != 1 || c.tgt.N != 12 {
		t.Errorf("fixed split changed: %+v", c)
	}
}

func TestSplitContextTarget(t *testing.T) {
	d := constTasks(1, 4)[0].Context
	r := rng.New(1, 0)
	c, tg, err := SplitContextTarget(d, 1, 20, r) // n_c ∈ {1, 2}
	if err != nil || c.N < 1 || c.N > 2 || c.N+tg.N != 4 {
		t.Errorf("N=4: %d + %d, %v", c.N, tg.N, err)
	}
	if _, _, err := SplitContextTarget(d, 3, 20, r); err == nil || !strings.Contains(err.Error(), "N=4") {
		t.Errorf("N=4, min 3: %v", err)
	}
}

func TestTrainCancel(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	m := &quadModel{theta: []float64{1}}
	cause := errors.New("user stop")
	res, err := Train(ctx, m, constTasks(1, 3), TrainConfig{MaxIter: 1000, Progress: func(p TrainProgress) {
		if p.Iter == 7 {
			cancel(cause)
		}
	}})
	if !errors.Is(err, cause) || res == nil || res.Iters != 7 {
		t.Fatalf("err %v, res %+v", err, res)
	}
}

func TestTrainBadInput(t *testing.T) {
	bg := context.Background()
	m := &quadModel{theta: []float64{1}}
	ok := constTasks(1, 12)
	wrong := Dataset{N: 2, DX: 2, DY: 1, X: []float64{1, 2, 3, 4}, Y: []float64{1, 2}}
	nan := Dataset{N: 1, DX: 1, DY: 1, X: []float64{math.NaN()}, Y: []float64{1}}
	for _, c := range []struct {
		tasks []Task
		cfg   TrainConfig
		want  string
	}{
		{nil, TrainConfig{}, "len(tasks)=0"},
		{ok, TrainConfig{Batch: -1}, "Batch"},
		{ok, TrainConfig{LR: math.Inf(1)}, "LR"},
		{ok, TrainConfig{Samples: -2}, "Samples"},
		{ok, TrainConfig{MaxIter: -1}, "MaxIter"},
		{ok, TrainConfig{MinContext: 5, MaxContext: 4}, "MaxContext"},
		{ok, TrainConfig{EarlyStop: EarlyStop{Min: 10, Ref: 10, Smooth: 1}}, "Ref"},
		{[]Task{{Context: wrong}}, TrainConfig{}, "tasks[0]: Context has DX=2"},
		{[]Task{{Context: nan}}, TrainConfig{}, "X[0]"},
		{[]Task{{Context: Dataset{DX: 1, DY: 1}}}, TrainConfig{}, "N=0"},
		{[]Task{{Context: ok[0].Context}, {Context: ok[0].Context, Target: wrong}}, TrainConfig{}, "tasks[1]: Target"},
		{constTasks(1, 4), TrainConfig{Objective: NPML}, "MinContext+2"},
	} {
		_, err := Train(bg, m, c.tasks, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v", c.want, err)
		}
	}
}

// TestTrainValidation: held-out early stopping. Training pulls θ from 0 towards the task's
// mean 1 (Adam, lr 0.01: about 0.01 per step), the held-out loss (θ − 0.3)² is smallest near
// θ = 0.3, so it falls and then rises: training stops Patience evaluations after the best
// one, and θ is reset to its value at the best evaluation.
func TestTrainValidation(t *testing.T) {
	m := &quadModel{theta: []float64{0}}
	tasks := constTasks(2, 5)[1:]
	seen := map[int]float64{} // θ at each evaluation, by iteration count
	iters := 0
	cfg := TrainConfig{LR: 0.01, MaxIter: 1000, Validation: Validation{Every: 5, Patience: 3, Loss: func() (float64, error) {
		seen[iters] = m.theta[0]
		return (m.theta[0] - 0.3) * (m.theta[0] - 0.3), nil
	}}, Progress: func(p TrainProgress) { iters = p.Iter }}
	res, err := Train(context.Background(), m, tasks, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !res.EarlyStopped || res.Iters != res.BestIter+15 || res.Iters >= 1000 {
		t.Fatalf("stopped %v after %d iterations, best at %d: want a stop 3 evaluations (15 iterations) after the best", res.EarlyStopped, res.Iters, res.BestIter)
	}
	if got, want := m.theta[0], seen[res.BestIter]; got != want {
		t.Fatalf("θ = %v after training, want the best evaluation's %v", got, want)
	}
	// Adam moves θ by at most ≈ lr per step, so the best evaluation (every 5 steps) is within
	// 5·0.01 of 0.3.
	if math.Abs(m.theta[0]-0.3) > 0.05 {
		t.Fatalf("θ = %v, want within 0.05 of 0.3", m.theta[0])
	}
	for k, v := range res.ValLosses {
		if v < res.ValLosses[slices.Index(res.ValIters, res.BestIter)] {
			t.Fatalf("evaluation %d (%v) is below the best", k, v)
		}
	}

	// Reaching MaxIter: the last iteration is evaluated and the best restored.
	m = &quadModel{theta: []float64{0}}
	cfg.MaxIter = 22
	res, err = Train(context.Background(), m, tasks, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if res.EarlyStopped || res.Iters != 22 || res.ValIters[len(res.ValIters)-1] != 22 || res.BestIter != 22 {
		t.Fatalf("at the cap: stopped %v, %d iterations, evaluations at %v, best %d", res.EarlyStopped, res.Iters, res.ValIters, res.BestIter)
	}

	// A non-finite held-out loss is an error, and so is a bad field.
	cfg.Validation.Loss = func() (float64, error) { return math.NaN(), nil }
	if _, err := Train(context.Background(), &quadModel{theta: []float64{0}}, tasks, cfg); err == nil || !strings.Contains(err.Error(), "validation") {
		t.Fatalf("NaN validation loss: err %v", err)
	}
	cfg.Validation.Every = -1
	if _, err := Train(context.Background(), &quadModel{theta: []float64{0}}, tasks, cfg); err == nil || !strings.Contains(err.Error(), "Every=-1") {
		t.Fatalf("Every = −1: err %v", err)
	}
}
