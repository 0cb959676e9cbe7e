package mcmc

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// TestStuckRules checks each rule of stuck and collapsed on hand-made end-of-warmup states.
func TestStuckRules(t *testing.T) {
	cfg := Config{}.Defaults()
	ok := warmEnd{eps: 0.5, step: 0.05, lpMean: -10, lpSD: 1.5, n: 50}
	refs := []warmEnd{ok, {eps: 0.6, step: 0.06, lpMean: -9.5, lpSD: 1.4, n: 50}, {eps: 0.4, step: 0.04, lpMean: -10.5, lpSD: 1.6, n: 50}}
	cases := []struct {
		name string
		e    warmEnd
		refs []warmEnd
		cfg  Config
		want string // substring of the reason; "" for not stuck
	}{
		{"typical", ok, refs, cfg, ""},
		{"no warmup", warmEnd{eps: 1e-20}, refs, cfg, ""},
		{"collapsed", warmEnd{eps: 1e-16, step: 1e-17, lpMean: -10, lpSD: 0, n: 50, depthHits: 44}, nil, cfg, "step size collapsed"},
		// A tiny step with short trees is a tiny posterior scale, not a collapse.
		{"tiny but moving", warmEnd{eps: 1e-10, step: 1e-10, lpMean: 30, lpSD: 1, n: 50, depthHits: 3}, nil, cfg, ""},
		{"static HMC", warmEnd{eps: 1e-9, step: 1e-9, n: 50}, nil, Config{Algorithm: StaticHMC}.Defaults(), "step size collapsed"},
		{"short step", warmEnd{eps: 0.5, step: 0.05 / 2048, lpMean: -10, lpSD: 1.5, n: 50}, refs, cfg, "leapfrog step"},
		{"step within 2^-10", warmEnd{eps: 0.5, step: 0.05 / 512, lpMean: -10, lpSD: 1.5, n: 50}, refs, cfg, ""},
		{"far below", warmEnd{eps: 0.5, step: 0.05, lpMean: -10 - 11*1.5, lpSD: 1.5, n: 50}, refs, cfg, "sd below"},
		{"not far enough", warmEnd{eps: 0.5, step: 0.05, lpMean: -10 - 9*1.5, lpSD: 1.5, n: 50}, refs, cfg, ""},
		{"far above", warmEnd{eps: 0.5, step: 0.05, lpMean: 100, lpSD: 1.5, n: 50}, refs, cfg, ""},
		{"alone", warmEnd{eps: 0.5, step: 0.05, lpMean: -1000, lpSD: 1.5, n: 50}, nil, cfg, ""},
	}
	for _, c := range cases {
		got := stuck(c.e, c.refs, c.cfg)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("%s: stuck = %q, want %q", c.name, got, c.want)
		}
	}
}

// TestGateVerdicts checks that the gate's verdicts do not depend on the order in which the
// chains arrive, that a collapsed chain is no reference for the others, and that a
// re-initialised chain is judged against the chains that were not stuck.
func TestGateVerdicts(t *testing.T) {
	cfg := Config{Chains: 4}.Defaults()
	ends := []*warmEnd{
		{eps: 0.5, step: 0.05, lpMean: 257, lpSD: 1.4, n: 50},
		{eps: 0.6, step: 0.06, lpMean: 258, lpSD: 1.5, n: 50},
		{eps: 0.7, step: 0.05, lpMean: -107, lpSD: 1.2, n: 50},                // a minor mode
		{eps: 1e-16, step: 1e-17, lpMean: 300, lpSD: 0, n: 50, depthHits: 50}, // collapsed, high lp
	}
	var first []string
	for _, order := range [][]int{{0, 1, 2, 3}, {3, 2, 1, 0}, {2, 0, 3, 1}} {
		g := newGate(cfg)
		for _, c := range order {
			g.arrive(c, ends[c])
		}
		if !g.wait(nil) {
			t.Fatal("gate not ready after every chain arrived")
		}
		var v []string
		for c := range ends {
			r, refs := g.verdict(c)
			v = append(v, r)
			if c >= 2 && len(refs) != 2 {
				t.Errorf("chain %d is judged again against %d chains, want the 2 that were not stuck", c+1, len(refs))
			}
		}
		if first == nil {
			first = v
		} else if strings.Join(v, "|") != strings.Join(first, "|") {
			t.Errorf("order %v: verdicts %q, want %q", order, v, first)
		}
	}
	if first[0] != "" || first[1] != "" || !strings.Contains(first[2], "sd below") || !strings.Contains(first[3], "collapsed") {
		t.Errorf("verdicts %q", first)
	}
	// A failed chain (nil) still releases the others.
	g := newGate(Config{Chains: 2}.Defaults())
	g.arrive(0, nil)
	g.arrive(1, ends[0])
	if !g.wait(nil) {
		t.Fatal("gate not ready")
	}
	if r, refs := g.verdict(1); r != "" || len(refs) != 0 {
		t.Errorf("verdict beside a failed chain: %q, %d refs", r, len(refs))
	}
}

// TestRejectedMetricKeepsThePrevious: an estimate that is not positive definite and finite
// is refused and leaves the metric (values, form, factor) as it was, so warmup can go on
// with the previous one.
func TestRejectedMetricKeepsThePrevious(t *testing.T) {
	m, err := newMetric(2, Auto, []float64{2, 0.5, 0.5, 1})
	if err != nil {
		t.Fatal(err)
	}
	inv, chol := slices.Clone(m.inv), slices.Clone(m.chol)
	for _, bad := range [][]float64{{math.NaN(), 0, 0, 1}, {1, 2, 2, 1}, {math.Inf(1), 0, 0, 1}} {
		if m.setDense(bad) == nil {
			t.Errorf("setDense(%v) accepted", bad)
		}
	}
	for _, bad := range [][]float64{{math.NaN(), 1}, {0, 1}, {1, math.Inf(1)}} {
		if m.setDiag(bad) == nil {
			t.Errorf("setDiag(%v) accepted", bad)
		}
	}
	if !m.dense || !slices.Equal(m.inv, inv) || !slices.Equal(m.chol, chol) {
		t.Errorf("metric changed by refused estimates: dense=%v inv=%v chol=%v, want %v %v", m.dense, m.inv, m.chol, inv, chol)
	}
}
