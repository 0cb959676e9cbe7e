package bnn_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/bnn"
)

// Fit a one-hidden-layer VBP network to y = sin(3x) + noise and score held-out points.
func ExampleFitRegression() {
	r := rand.New(rand.NewPCG(1, 1))
	data := func(n int) (X, y []float64) {
		X, y = make([]float64, n), make([]float64, n)
		for i := range X {
			X[i] = 2*r.Float64() - 1
			y[i] = math.Sin(3*X[i]) + 0.1*r.NormFloat64()
		}
		return X, y
	}
	Xtr, ytr := data(300)
	Xte, yte := data(100)
	net := bnn.Net{Sizes: []int{1, 20, 1}, Method: bnn.VBP}
	m, err := bnn.FitRegression(context.Background(), net, Xtr, ytr, 300, bnn.FitConfig{Epochs: 150, Seed: 1})
	if err != nil {
		panic(err)
	}
	lp := m.LogPredictive(Xte, yte, 100, 0, 1)
	mean := 0.0
	for _, v := range lp {
		mean += v / 100
	}
	fmt.Printf("noise sd %.1f, test log-likelihood above 0.5: %v\n", 1/math.Sqrt(m.Beta), mean > 0.5)
	// Output: noise sd 0.1, test log-likelihood above 0.5: true
}
