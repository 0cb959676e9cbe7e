package bnn

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
)

// BenchmarkEpoch times one training epoch (minibatch gradients through the fused nodes, KL,
// Adam, Type-II β) on synthetic data shaped like the UCI power (N=8611, D=4, 50 hidden) and
// protein (N=41157, D=9, 100 hidden) training sets.
func BenchmarkEpoch(b *testing.B) {
	for _, c := range []struct {
		name         string
		n, d, hidden int
	}{{"power", 8611, 4, 50}, {"protein", 41157, 9, 100}} {
		X, y := randomData(c.n, c.d, 1, 1)
		for _, meth := range []Method{VBP, MonteCarlo} {
			for _, batch := range []int{32, 128} {
				b.Run(fmt.Sprintf("%s/%s/B=%d", c.name, meth, batch), func(b *testing.B) {
					net := Net{Sizes: []int{c.d, c.hidden, 1}, Method: meth}
					b.ReportAllocs()
					b.ResetTimer()
					for range b.N {
						if _, err := FitRegression(context.Background(), net, X, y, c.n, FitConfig{Epochs: 1, BatchSize: batch}); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
	}
}

// BenchmarkStep times one minibatch gradient through the tape (data term and KL) for a power-
// shaped network; steady state allocates nothing.
func BenchmarkStep(b *testing.B) {
	X, y := randomData(128, 4, 1, 1)
	for _, meth := range methods {
		b.Run(meth.String(), func(b *testing.B) {
			net := Net{Sizes: []int{4, 50, 1}, Method: meth}
			p := randomParams(&net, 1)
			r := rand.New(rand.NewPCG(1, 2))
			var ws Workspace
			var tp ad.Tape
			b.ReportAllocs()
			for range b.N {
				tp.Reset()
				pv := tp.Input(p)
				e := tp.Sub(net.KLNode(&tp, pv), net.GaussLogLikNode(&tp, &ws, pv, X, y, 128, 1, 67, r))
				tp.Backward(e)
			}
		})
	}
}
