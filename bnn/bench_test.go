package bnn

import (
	"context"
	"fmt"
	"testing"
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
