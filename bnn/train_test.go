package bnn

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/flow"
)

// fitCase is one of the three fits run through the shared loop, reduced to what the loop
// tests compare: the parameters, the stored loss and a prediction from the fitted model.
type fitCase struct {
	name  string
	steps int // minibatches per epoch
	fit   func(ctx context.Context, epochs int, progress func(Progress)) (params []float64, loss float64, predict []float64, err error)
}

func fitCases() []fitCase {
	X, y := randomData(90, 3, 1, 7)
	imgs := randomImages(60, 64, 3)
	lab := make([]int, 60)
	for i := range lab {
		lab[i] = i % 3
	}
	r := rand.New(rand.NewPCG(3, 4))
	Xnn, Xlin, ys := make([]float64, 70), make([]float64, 2*70), make([]float64, 70)
	for i := range 70 {
		Xnn[i], Xlin[2*i], Xlin[2*i+1] = r.NormFloat64(), r.NormFloat64(), r.NormFloat64()
		ys[i] = math.Sin(Xnn[i]) + Xlin[2*i] + 0.1*r.NormFloat64()
	}
	return []fitCase{
		{"regression", 3, func(ctx context.Context, epochs int, pr func(Progress)) ([]float64, float64, []float64, error) {
			m, err := FitRegression(ctx, Net{Sizes: []int{3, 8, 1}, Method: MonteCarlo}, X, y, 90,
				FitConfig{Epochs: epochs, BatchSize: 32, Seed: 2, Progress: pr})
			if m == nil {
				return nil, 0, nil, err
			}
			mu, v := m.Predict(X[:15], 5, 4, 1)
			return m.Params, m.Loss, append(append(mu, v...), m.Beta), err
		}},
		{"classifier", 2, func(ctx context.Context, epochs int, pr func(Progress)) ([]float64, float64, []float64, error) {
			net := ConvNet{Height: 8, Width: 8, Channels: 1, Method: VBP, Conv: []ConvSpec{{Out: 2, Kernel: 3, Stride: 2}}, Dense: []int{3}}
			c, err := FitClassifier(ctx, net, imgs, lab, 60, ClassifierConfig{Epochs: epochs, BatchSize: 40, Seed: 2, Progress: pr})
			if c == nil {
				return nil, 0, nil, err
			}
			return c.Params, c.Loss, c.Predict(imgs[:5*64], 5, 3, 1), err
		}},
		{"semi", 3, func(ctx context.Context, epochs int, pr func(Progress)) ([]float64, float64, []float64, error) {
			f, err := FitSemiStructured(ctx, SemiStructured{Hidden: 4, Flow: flow.NewAffine(2)}, Xnn, 1, Xlin, ys, 70,
				FitConfig{Epochs: epochs, BatchSize: 25, Seed: 2, ConstantLR: true, Progress: pr})
			if f == nil {
				return nil, 0, nil, err
			}
			mu, v := f.Predict(Xnn[:4], Xlin[:8], 4, 6, 1)
			return f.Params, f.Loss, append(mu, v...), err
		}},
	}
}

// TestFitCancelAfterOneEpoch cancels each fit from its observer after epoch 1 of 5: the error
// must wrap context.Canceled and name the function, and the partial fit must be exactly the
// fit of a 1-epoch run with the same seed (ctx is checked before the next minibatch, so no
// step of epoch 2 is taken), with a finite prediction.
func TestFitCancelAfterOneEpoch(t *testing.T) {
	for _, c := range fitCases() {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var seen []Progress
			p, loss, pred, err := c.fit(ctx, 5, func(pr Progress) {
				seen = append(seen, pr)
				if pr.Epoch == 1 {
					cancel()
				}
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want one wrapping context.Canceled", err)
			}
			if !strings.Contains(err.Error(), "bnn: Fit") || !strings.Contains(err.Error(), "epoch 2 of 5") {
				t.Errorf("err = %q, want the function and the epoch named", err)
			}
			if len(seen) != 1 {
				t.Fatalf("observer called %d times, want 1", len(seen))
			}
			if p == nil {
				t.Fatal("no partial fit returned with the cancellation")
			}
			p1, loss1, pred1, err := c.fit(context.Background(), 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(p, p1) || loss != loss1 || !slices.Equal(pred, pred1) {
				t.Errorf("partial fit differs from the 1-epoch fit (loss %g vs %g)", loss, loss1)
			}
			if loss != seen[0].Loss || loss == 0 {
				t.Errorf("stored loss %g, epoch 1 reported %g", loss, seen[0].Loss)
			}
			for i, v := range pred {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("partial fit predicts %g at %d", v, i)
				}
			}
		})
	}
}

// TestFitCancelledBeforeStart: a context cancelled before the call gives the initialised
// model (no step taken: not the 1-epoch fit; loss 0) and the wrapped error.
func TestFitCancelledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range fitCases() {
		p, loss, _, err := c.fit(ctx, 3, nil)
		if !errors.Is(err, context.Canceled) || p == nil || loss != 0 {
			t.Errorf("%s: err %v, params %v, loss %g; want context.Canceled, the initial params and loss 0", c.name, err, p != nil, loss)
		}
		p1, _, _, err := c.fit(context.Background(), 1, nil)
		if err != nil || slices.Equal(p, p1) {
			t.Errorf("%s: params after an immediate cancel equal a 1-epoch fit's (err %v)", c.name, err)
		}
	}
}

// TestFitProgress: one call per epoch, in order, with the run's length, the step count and the
// loss the model stores at the end.
func TestFitProgress(t *testing.T) {
	for _, c := range fitCases() {
		var seen []Progress
		_, loss, pred, err := c.fit(context.Background(), 3, func(pr Progress) { seen = append(seen, pr) })
		if err != nil {
			t.Fatal(err)
		}
		if len(seen) != 3 {
			t.Fatalf("%s: %d calls, want 3", c.name, len(seen))
		}
		for i, pr := range seen {
			if pr.Epoch != i+1 || pr.Epochs != 3 || pr.Steps != (i+1)*c.steps || math.IsNaN(pr.Loss) {
				t.Errorf("%s: call %d = %+v", c.name, i, pr)
			}
			if (c.name == "classifier") != (pr.Beta == 0) {
				t.Errorf("%s: Beta = %g", c.name, pr.Beta)
			}
		}
		if seen[2].Loss != loss {
			t.Errorf("%s: last reported loss %g, stored %g", c.name, seen[2].Loss, loss)
		}
		if c.name == "regression" && seen[2].Beta != pred[len(pred)-1] {
			t.Errorf("regression: reported β %g, fitted β %g", seen[2].Beta, pred[len(pred)-1])
		}
	}
}

// TestFitBadSchedule: every fit names the bad schedule field (FitSemiStructured looped forever
// on a negative batch size before it shared the check).
func TestFitBadSchedule(t *testing.T) {
	X, y := randomData(10, 1, 1, 1)
	for _, c := range []struct {
		cfg  FitConfig
		want string
	}{
		{FitConfig{BatchSize: -1}, "BatchSize=-1"},
		{FitConfig{Epochs: -2}, "Epochs=-2"},
		{FitConfig{LR: math.NaN()}, "LR=NaN"},
		{FitConfig{LR: math.Inf(1)}, "LR=+Inf"},
	} {
		_, err := FitRegression(context.Background(), Net{Sizes: []int{1, 2, 1}}, X, y, 10, c.cfg)
		if err == nil || !strings.Contains(err.Error(), "FitRegression") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("FitRegression(%+v): %v, want %s named", c.cfg, err, c.want)
		}
		_, err = FitSemiStructured(context.Background(), SemiStructured{Hidden: 2, Flow: flow.NewAffine(1)}, X, 1, X, y, 10, c.cfg)
		if err == nil || !strings.Contains(err.Error(), "FitSemiStructured") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("FitSemiStructured(%+v): %v, want %s named", c.cfg, err, c.want)
		}
	}
	net := ConvNet{Height: 4, Width: 4, Channels: 1, Conv: []ConvSpec{{Out: 1, Kernel: 3, Stride: 1}}, Dense: []int{2}}
	_, err := FitClassifier(context.Background(), net, make([]float64, 32), []int{0, 1}, 2, ClassifierConfig{BatchSize: -3})
	if err == nil || !strings.Contains(err.Error(), "FitClassifier") || !strings.Contains(err.Error(), "BatchSize=-3") {
		t.Errorf("FitClassifier: %v, want BatchSize=-3 named", err)
	}
}

// TestFitSteadyStateAllocs: the loop allocates only when a fit starts. Six more epochs of 13
// minibatches must not add allocations (one per minibatch would add 78, one per epoch 6).
func TestFitSteadyStateAllocs(t *testing.T) {
	X, y := randomData(200, 3, 1, 7)
	imgs := randomImages(200, 64, 3)
	lab := make([]int, 200)
	conv := ConvNet{Height: 8, Width: 8, Channels: 1, Method: VBP, Conv: []ConvSpec{{Out: 2, Kernel: 3, Stride: 2}}, Dense: []int{3}}
	for _, c := range []struct {
		name string
		fit  func(epochs int) error
	}{
		{"regression", func(e int) error {
			_, err := FitRegression(context.Background(), Net{Sizes: []int{3, 8, 1}, Method: MonteCarlo}, X, y, 200, FitConfig{Epochs: e, BatchSize: 16})
			return err
		}},
		{"classifier", func(e int) error {
			_, err := FitClassifier(context.Background(), conv, imgs, lab, 200, ClassifierConfig{Epochs: e, BatchSize: 16})
			return err
		}},
		{"semi", func(e int) error {
			_, err := FitSemiStructured(context.Background(), SemiStructured{Hidden: 4, Flow: flow.NewAffine(2)}, X[:200], 1, X[:400], y, 200, FitConfig{Epochs: e, BatchSize: 16})
			return err
		}},
	} {
		var err error
		a2 := testing.AllocsPerRun(3, func() { err = c.fit(2) })
		a8 := testing.AllocsPerRun(3, func() { err = c.fit(8) })
		if err != nil {
			t.Fatal(err)
		}
		if a8-a2 > 2 {
			t.Errorf("%s: %v allocations at 2 epochs, %v at 8", c.name, a2, a8)
		}
	}
}
