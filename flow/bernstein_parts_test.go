package flow

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/nn"
)

// BenchmarkBernsteinARBatchParts times the passes of BernsteinAR's batch node one by one at
// the paper's shape (D = 10, M = 49, MADE 2 × 10 linear, S = 10) and at fit's default
// bernstein shape (M = 20, MADE 2 × 10 tanh, linear tails, S = 10), for the breakdown of the
// BF-VI step's family cost (bench/results/bfvi_step.md); cpu-ns/op is per pass over all S
// draws:
//
//	go test ./flow -run XXX -bench BernsteinARBatchParts
func BenchmarkBernsteinARBatchParts(b *testing.B) {
	const d, S = 10, 10
	b.Run("paper", func(b *testing.B) {
		benchParts(b, NewBernsteinAR(nn.NewMADE(d, []int{10, 10}, 50, nn.WithActivation(ad.Linear))), S)
	})
	b.Run("fit", func(b *testing.B) {
		benchParts(b, NewBernsteinAR(nn.NewMADE(d, []int{10, 10}, 21), BernsteinTails(LinearTails)), S)
	})
}

func benchParts(b *testing.B, f *BernsteinAR, S int) {
	d, M := f.d, f.p.m
	r := rand.New(rand.NewPCG(41, 1))
	pv := make([]float64, f.NumParams())
	f.Init(pv, r)
	for i := range pv {
		pv[i] += 0.3 * r.NormFloat64()
	}
	uv := make([]float64, S*d)
	for i := range uv {
		uv[i] = r.NormFloat64()
	}
	mp := pv[:f.nm]
	nw, nr, nh := f.outLen(), f.p.recLen(d), f.made.HiddenLen()
	wm := make([]float64, f.maskedLen())
	C := make([]float64, S*nw)
	hs := make([]float64, S*nh)
	pre := make([]float64, f.p.prepLen(d))
	bs := make([]float64, f.p.evalLen(d))
	zl, cs := make([]float64, d+1), make([]float64, 6*M)
	out := make([]float64, S*(d+1))
	recs := make([]float64, S*nr)
	L := bernRows{aff: f.affine(pv), affStride: 2}
	f.p.prepAffine(pre[f.p.affOff(d):][:3*d], d, L)
	zb := make([]float64, S*(d+1))
	for i := range zb {
		zb[i] = r.NormFloat64()
	}
	G := make([]float64, S*nw)
	ws := make([]float64, f.backLen(S))
	as := make([]float64, S*f.maxKa())
	gm := make([]float64, f.nm)
	ga := make([]float64, 2*d)
	f.formMasked(mp, wm)
	f.madeForwardBatch(S, mp, wm, uv, hs, C, as)
	f.polyForwardBatch(S, C, pre, bs, zl, cs, L, uv, out, recs)
	coefBack := func() {
		for s := range S {
			rec := recs[s*nr : (s+1)*nr]
			f.p.coefAdjoint(rec, d, zb[s*d:(s+1)*d], zb[S*d+s], G, s, S)
			f.p.backwardAll(rec, d, zb[s*d:(s+1)*d], zb[S*d+s], nil, 0, 0, false, ga, 0, 2, nil)
		}
	}
	coefBack()
	for _, c := range []struct {
		name string
		run  func()
	}{
		{"masked_weights", func() { f.formMasked(mp, wm) }},
		{"made_forward", func() { f.madeForwardBatch(S, mp, wm, uv, hs, C, as) }},
		{"softplus_and_polynomials", func() { f.polyForwardBatch(S, C, pre, bs, zl, cs, L, uv, out, recs) }},
		{"softplus_only", func() {
			for s := range S {
				f.prepDraw(S, s, C, pre, cs)
			}
		}},
		{"polynomials_only", func() {
			for s := range S {
				f.p.evalAllBatch(pre, bs, d, L, uv[s*d:(s+1)*d], zl, recs[s*nr:(s+1)*nr])
			}
		}},
		{"polynomial_adjoints", coefBack},
		{"made_backward", func() { f.madeBackBatch(S, wm, ws, uv, hs, G, gm, nil) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			t0, n := threadCPU(), 0
			for b.Loop() {
				c.run()
				n++
			}
			b.ReportMetric(float64(threadCPU()-t0)/float64(n), "cpu-ns/op")
		})
	}
}
