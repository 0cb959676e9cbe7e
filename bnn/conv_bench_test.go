package bnn

import (
	"math/rand/v2"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
)

// BenchmarkConvStep times one minibatch gradient (B = 128, data term and KL through the tape)
// of the VBP paper's Fashion-MNIST LeNet; steady state allocates nothing.
func BenchmarkConvStep(b *testing.B) {
	const B = 128
	X := randomImages(B, 784, 1)
	y := make([]int, B)
	for i := range y {
		y[i] = i % 10
	}
	for _, meth := range []Method{VBP, MonteCarlo} {
		b.Run(meth.String(), func(b *testing.B) {
			net := &ConvNet{Height: 28, Width: 28, Channels: 1, Method: meth,
				Conv:  []ConvSpec{{Out: 20, Kernel: 5, Stride: 2}, {Out: 50, Kernel: 5, Stride: 2}},
				Dense: []int{500, 10}}
			p := convRandomParams(net, 1, -9)
			r := rand.New(rand.NewPCG(1, 2))
			var ws ConvWorkspace
			var tp ad.Tape
			b.ReportAllocs()
			for range b.N {
				tp.Reset()
				pv := tp.Input(p)
				e := tp.Sub(net.KLNode(&tp, pv), net.CategoricalLogLikNode(&tp, &ws, pv, X, y, B, 400, r))
				tp.Backward(e)
			}
		})
	}
}
