package stan

import (
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/race"
)

// TestScalarNoAllocs checks that built-ins on real scalars and vectorised densities allocate
// nothing beyond the tape in steady state (a tape reused after Reset).
func TestScalarNoAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("the race detector allocates")
	}
	find := func(name string, types ...Type) Impl {
		for _, s := range libTable.Lookup(name) {
			if len(s.Args) != len(types) {
				continue
			}
			ok := true
			for i, a := range s.Args {
				ok = ok && (a.Class != Exact || a.Type == types[i])
			}
			if ok {
				return s.Fn
			}
		}
		t.Fatalf("no %s%v", name, types)
		return nil
	}
	tp := &ad.Tape{}
	c := &Ctx{T: tp}
	y := make([]float64, 100)
	dims := []int{len(y)}
	args := make([]Value, 3)
	for _, tc := range []struct {
		name  string
		types []Type
	}{
		{"add", []Type{TReal, TReal}},
		{"multiply", []Type{TReal, TReal}},
		{"exp", []Type{TReal}},
		{"log1m", []Type{TReal}},
		{"pow", []Type{TReal, TReal}},
		{"log_sum_exp", []Type{TReal, TReal}},
		{"normal_lpdf", []Type{TReal, TReal, TReal}},
		{"normal_lpdf", []Type{TVector, TReal, TReal}},
		{"weibull_lpdf", []Type{TVector, TReal, TReal}},
		{"inv_logit", []Type{TVector}},
		{"sum", []Type{TVector}},
	} {
		fn := find(tc.name, tc.types...)
		run := func() {
			tp.Reset()
			x := tp.Input([]float64{0.5, 1.5})
			for i, ty := range tc.types {
				if ty == TVector {
					args[i] = Value{Type: TVector, Dims: dims, Var: tp.ConstRef(y)}
				} else {
					args[i] = realV(tp.Index(x, i%2))
				}
			}
			v, err := fn(c, args[:len(tc.types)])
			if err != nil {
				t.Fatal(err)
			}
			tp.Backward(tp.Sum(v.Var))
		}
		run()
		if n := testing.AllocsPerRun(20, run); n > 0 {
			t.Errorf("%s%v: %v allocations per call", tc.name, tc.types, n)
		}
	}
}
