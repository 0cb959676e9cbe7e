package flow_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/flow"
	"github.com/vigo-bayes/vigo/nn"
)

// everyPart is a composition of every flow type (both MAF directions, a coupling layer without
// conditioner, elementwise and frozen triangular Bernstein flows, a permutation, an affine
// layer) on ℝ³.
func everyPart() flow.Flow {
	d := 3
	return flow.Compose(
		flow.NewMAF(nn.NewMADE(d, []int{5}, 2, nn.WithActivation(ad.ReLU), nn.WithOrder([]int{2, 3, 1})), flow.WithScaleClamp(0)),
		flow.Permute([]int{2, 0, 1}),
		flow.NewMAF(nn.NewMADE(d, nil, 2), flow.ConditionOnOutput()),
		flow.NewCoupling(d, nil, nil, ad.Tanh, 3),
		flow.NewCoupling(d, []int{1}, []int{4, 4}, ad.Linear, 5),
		flow.NewBernstein(d, 3, flow.BernsteinTails(flow.LinearTails)),
		flow.NewBernsteinAR(nn.NewMADE(d, []int{4}, 4, nn.WithDirect()), flow.BernsteinFrozenAffine()),
		flow.NewAffine(d),
	)
}

// TestFromSpecErrorsNameTheField: every rule FromSpec checks is refused with a *SpecError
// naming the field, and Spec.NumParams refuses the same specs without building anything.
func TestFromSpecErrorsNameTheField(t *testing.T) {
	for _, c := range []struct {
		field string
		edit  func(s *flow.Spec)
	}{
		{"dim", func(s *flow.Spec) { s.Dim = 0 }},
		{"type", func(s *flow.Spec) { s.Type = "spline" }},
		{"parts", func(s *flow.Spec) { s.Parts = nil }},
		{"parts[1].dim", func(s *flow.Spec) { s.Parts[1].Dim = 4 }},
		{"parts[0].made", func(s *flow.Spec) { s.Parts[0].MADE = nil }},
		{"parts[0].made.k", func(s *flow.Spec) { s.Parts[0].MADE.K = 3 }},
		{"parts[0].made.dim", func(s *flow.Spec) { s.Parts[0].MADE.Dim = 2 }},
		{"parts[0].made.activation", func(s *flow.Spec) { s.Parts[0].MADE.Activation = "swish" }},
		{"parts[0].made.order", func(s *flow.Spec) { s.Parts[0].MADE.Order = []int{1, 1, 2} }},
		{"parts[0].made.hidden", func(s *flow.Spec) { s.Parts[0].MADE.Hidden = []int{flow.MaxHiddenUnits + 1} }},
		{"parts[0].made.hidden", func(s *flow.Spec) { s.Parts[0].MADE.Hidden = make([]int, flow.MaxHiddenLayers+1) }},
		{"parts[0].scale_clamp", func(s *flow.Spec) { s.Parts[0].ScaleClamp = -1 }},
		{"parts[0].scale_clamp", func(s *flow.Spec) { s.Parts[0].ScaleClamp = math.NaN() }},
		{"parts[1].perm", func(s *flow.Spec) { s.Parts[1].Perm = []int{0, 0, 1} }},
		{"parts[1].perm", func(s *flow.Spec) { s.Parts[1].Perm = []int{0, 1} }},
		{"parts[4].keep", func(s *flow.Spec) { s.Parts[4].Keep = []int{1, 1} }},
		{"parts[4].keep", func(s *flow.Spec) { s.Parts[4].Keep = []int{0, 1, 2} }},
		{"parts[4].activation", func(s *flow.Spec) { s.Parts[4].Activation = "" }},
		{"parts[4].hidden", func(s *flow.Spec) { s.Parts[4].Hidden = []int{0} }},
		{"parts[5].degree", func(s *flow.Spec) { s.Parts[5].Degree = 0 }},
		{"parts[5].degree", func(s *flow.Spec) { s.Parts[5].Degree = flow.MaxDegree + 1 }},
		{"parts[5].tails", func(s *flow.Spec) { s.Parts[5].Tails = "heavy" }},
		{"parts[5].frozen_affine", func(s *flow.Spec) { s.Parts[5].FrozenAffine = true }},
		{"parts[6].made.k", func(s *flow.Spec) { s.Parts[6].Degree = 5 }},
		{"parts[2].parts", func(s *flow.Spec) {
			deep := flow.Spec{Type: flow.SpecAffine, Dim: 3}
			for range 4 {
				deep = flow.Spec{Type: flow.SpecCompose, Dim: 3, Parts: []flow.Spec{deep}}
			}
			s.Parts[2] = deep
		}},
	} {
		s := everyPart().Spec()
		c.edit(&s)
		_, nerr := s.NumParams()
		f, err := flow.FromSpec(s)
		var se *flow.SpecError
		if !errors.As(err, &se) || f != nil {
			t.Errorf("%s: FromSpec gives %v, %v; want a *SpecError", c.field, f, err)
			continue
		}
		if !strings.HasPrefix(se.Field, c.field) {
			t.Errorf("%s: error names field %q (%v)", c.field, se.Field, err)
		}
		if nerr == nil || nerr.Error() != err.Error() {
			t.Errorf("%s: NumParams error %v, FromSpec %v", c.field, nerr, err)
		}
	}
}

// FuzzFromSpec: FromSpec never panics on a spec read from JSON: it builds a flow whose spec
// and parameter count are those it read, or refuses with a *SpecError.
func FuzzFromSpec(f *testing.F) {
	for _, fl := range []flow.Flow{everyPart(), flow.NewRealNVP(2, 2, []int{3}), flow.NewMAFStack(3, 2, []int{4}, nil)} {
		b, err := json.Marshal(fl.Spec())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var s flow.Spec
		if json.Unmarshal(b, &s) != nil {
			return
		}
		n, nerr := s.NumParams()
		if nerr == nil && n > 1<<20 {
			return // valid but too large to build in a fuzz run
		}
		g, err := flow.FromSpec(s)
		var se *flow.SpecError
		switch {
		case err != nil && !errors.As(err, &se):
			t.Fatalf("error %v is not a *SpecError", err)
		case (err == nil) != (nerr == nil):
			t.Fatalf("FromSpec error %v, NumParams error %v", err, nerr)
		case err == nil && g.NumParams() != n:
			t.Fatalf("built %d parameters, NumParams says %d", g.NumParams(), n)
		}
	})
}
