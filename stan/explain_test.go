package stan

import (
	"errors"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/model"
)

// TestExplain checks Model.Explain of a compiled program: nil where the density is finite, the
// run-time error with its position where it is not; and that a model without Explain says
// nothing.
func TestExplain(t *testing.T) {
	src := "data { int N; vector[N] y; }\nparameters { real mu; real<lower=0> s; }\nmodel {\n  y ~ normal(mu, s - 5);\n}\n"
	m, err := Compile("x.stan", []byte(src), mustData(t, `{"N": 2, "y": [1, 2]}`))
	if err != nil {
		t.Fatal(err)
	}
	var e model.Explainer = m
	if err := e.ExplainAt([]float64{0, 2}); err != nil { // s = e² > 5
		t.Errorf("finite point: %v", err)
	}
	err = e.ExplainAt([]float64{0, 0}) // s = 1: scale −4
	var re *RuntimeError
	if !errors.As(err, &re) || re.Pos.Line != 4 || !strings.Contains(err.Error(), "normal_lpdf: Scale parameter is -4, but must be positive!") {
		t.Errorf("bad point: %v, want the RuntimeError of line 4", err)
	}
	if err := e.ExplainAt([]float64{0}); err == nil {
		t.Error("wrong length: no error")
	}
	if err := (&model.Model{}).ExplainAt([]float64{1}); err != nil {
		t.Errorf("a model without Explain: %v", err)
	}
}
