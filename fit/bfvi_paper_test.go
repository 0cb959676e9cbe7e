package fit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/flow"
	"github.com/vigo-bayes/vigo/internal/mathx"
	"github.com/vigo-bayes/vigo/model"
)

// paperRecipeFile is the example recipe file of the BF-VI paper's recipe.
const paperRecipeFile = "../examples/recipes/bfvi_paper.json"

// The paper's recipe validates, says what it is, survives a JSON round trip, and the example
// file is exactly its JSON (so that the file and the constructor cannot drift apart).
func TestBFVIPaperRecipe(t *testing.T) {
	r := BFVIPaperRecipe()
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	f := r.Family.Flow
	if r.Family.Kind != KindBernstein || f.Degree != 49 || !f.Bounded || !f.FrozenAffine || !f.NoDirect || f.CoefInit != CoefInitPaper || !f.FixedOutput ||
		f.Activation != "linear" || !reflect.DeepEqual(f.Hidden, []int{10, 10}) || r.Objective.Samples != 10 || r.Objective.Estimator != EstELBO ||
		r.Optimizer != (OptimizerRecipe{OptRMSprop, 1e-3}) || r.MaxIter != 100000 || r.WarmStart != WarmNone || r.Init.Method != InitMethodZero {
		t.Errorf("recipe %+v, flow %+v", r, *f)
	}
	if r.Stop.Window*r.Stop.EvalEvery <= r.MaxIter {
		t.Errorf("stop window %d × %d steps fits in %d steps: the plateau rule could cut the step size", r.Stop.Window, r.Stop.EvalEvery, r.MaxIter)
	}
	desc := r.Family.Describe(10)
	for _, w := range []string{"degree 49", "bounded", "frozen input affine map", "no direct connections", "the paper's coefficient init", "fixed output layer", "linear"} {
		if !strings.Contains(desc, w) {
			t.Errorf("Describe = %q, lacks %q", desc, w)
		}
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"frozen_affine": true`, `"no_direct": true`, `"coef_init": "paper"`, `"fixed_output": true`, `"bounded": true`, `"name": "rmsprop"`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("JSON lacks %s", key)
		}
	}
	var back Recipe
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, r) {
		t.Errorf("round trip: %+v, want %+v", back, r)
	}
	file, err := os.ReadFile(paperRecipeFile)
	if err != nil {
		t.Fatal(err)
	}
	if want := append(b, '\n'); !bytes.Equal(file, want) {
		t.Errorf("%s differs from BFVIPaperRecipe's JSON; regenerate it:\n%s", filepath.Base(paperRecipeFile), want)
	}
}

// Every invalid combination of the paper's options is refused, naming the field.
func TestBFVIPaperRecipeInvalid(t *testing.T) {
	cases := []struct {
		field string
		set   func(r *Recipe)
	}{
		{"warm_start", func(r *Recipe) { r.WarmStart = WarmFullRank }},
		{"init.method", func(r *Recipe) { r.Init.Method = InitMethodLaplace }},
		{"init.scale", func(r *Recipe) { r.Init.Scale = 0.1 }},
		{"init.point", func(r *Recipe) { r.Init.Point = make([]float64, 2) }},
		{"family.flow.coef_init", func(r *Recipe) { r.Family.Flow.Bounded = false }},
		{"family.flow.coef_init", func(r *Recipe) { r.Family.Flow.Layers = 2 }},
		{"family.flow.coef_init", func(r *Recipe) { r.Family.Flow.Affine = AffineLast }},
		{"family.flow.coef_init", func(r *Recipe) { r.Family.Flow.CoefInit = "uniform" }},
		{"family.flow.frozen_affine", func(r *Recipe) {
			*r = DefaultRecipe(KindMAF)
			r.Family.Flow.FrozenAffine = true
		}},
		{"family.flow.no_direct", func(r *Recipe) {
			*r = DefaultRecipe(KindRealNVP)
			r.Family.Flow.NoDirect = true
		}},
		{"family.flow.coef_init", func(r *Recipe) {
			*r = DefaultRecipe(KindMAF)
			r.Family.Flow.CoefInit = CoefInitIdentity
		}},
	}
	for _, c := range cases {
		r := BFVIPaperRecipe()
		c.set(&r)
		err := r.Validate()
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: got %v (%T), want a FieldError for %s", c.field, err, err, c.field)
			continue
		}
		if !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: message %q does not name the field", c.field, err)
		}
	}
	// The structure options alone are fine with vigo's own start (warm, Laplace).
	r := DefaultRecipe(KindBernstein)
	r.Family.Flow = &FlowOptions{Bounded: true, FrozenAffine: true, NoDirect: true, CoefInit: CoefInitIdentity}
	if err := r.Validate(); err != nil {
		t.Errorf("frozen affine, no direct, identity init with a warm start: %v", err)
	}
}

// paperCoefInit gives the first coordinate the reference code's coefficients ϑ_k = −10 +
// 20·Φ(k/M) exactly (ϑ_0 = 0, ϑ_M = 20·Φ(1) − 10), the other coordinates the Glorot output with
// zero biases, and q, pushed through the identity output layer, puts the first coordinate on
// [ϑ_0, ϑ_M]; without direct connections and with the frozen affine map the parameters are the
// MADE's alone.
func TestPaperCoefInit(t *testing.T) {
	const d = 3
	o := BFVIPaperRecipe().Family.Flow
	q, err := NewFlowFamily(KindBernstein, d, *o)
	if err != nil {
		t.Fatal(err)
	}
	b := q.Flow().(*flow.Composed).Parts()[0].(paperInit).BernsteinAR
	m := b.Conditioner()
	if m.HasDirect() || !b.FrozenAffine() || b.NumParams() != m.NumParams() || b.Tails() != flow.BoundedTails {
		t.Fatalf("direct %v, frozen %v, %d params (MADE %d), tails %v", m.HasDirect(), b.FrozenAffine(), b.NumParams(), m.NumParams(), b.Tails())
	}
	params := make([]float64, q.NumParams())
	q.Init(params, nil, 1)
	mp := params[:m.NumParams()]
	W, bias := m.Layer(mp, m.Layers()-1)
	M := b.Degree()
	theta := 0.0
	for k := 0; k <= M; k++ {
		if k == 0 {
			theta = bias[0]
		} else {
			theta += mathx.Log1pExp(bias[k*d])
		}
		want := -10 + 20*0.5*math.Erfc(-float64(k)/float64(M)/math.Sqrt2)
		if math.Abs(theta-want) > 1e-12 {
			t.Fatalf("ϑ_%d = %.15g, want %.15g", k, theta, want)
		}
		for j := 1; j < d; j++ {
			if bias[k*d+j] != 0 {
				t.Fatalf("coordinate %d: output bias %d = %g, want 0", j, k, bias[k*d+j])
			}
		}
	}
	if hi := 20*0.8413447460685429 - 10; math.Abs(theta-hi) > 1e-12 {
		t.Errorf("ϑ_M = %.15g, want 20·Φ(1) − 10 = %.15g", theta, hi)
	}
	nonzero := 0
	for _, w := range W {
		if w != 0 {
			nonzero++
		}
	}
	if nonzero == 0 {
		t.Error("output weights all zero: want the Glorot draw (the paper keeps it)")
	}
	// Draws: the first coordinate inside [ϑ_0, ϑ_M] = [0, 6.83].
	eps, z := make([]float64, d), make([]float64, d)
	for i := range 200 {
		for j := range eps {
			eps[j] = 3 * math.Sin(float64(7*i+j))
		}
		q.Sample(params, eps, z)
		if !(z[0] >= 0 && z[0] <= theta) || math.IsNaN(z[1]) || math.IsNaN(z[2]) {
			t.Fatalf("draw %d: z = %v, want z[0] in [0, %.3f]", i, z, theta)
		}
	}
	var _ family.Family = q
}

// shifted is N(3·1, I) in d dimensions: inside the paper's starting support of the first
// coordinate, [0, 6.83].
type shifted struct{ d int }

func (g shifted) Dim() int { return g.d }

func (g shifted) LogDensity(t *ad.Tape, z ad.Var) ad.Var {
	r := t.AddC(z, -3)
	return t.MulC(t.Sum(t.Square(r)), -0.5)
}

// A short run of the paper's recipe through Run runs every step (no plateau cut), improves on
// its start and ends with a finite ELBO and k̂; its result saves and reloads (as the plain
// Bernstein layer: same log density).
func TestBFVIPaperRecipeRuns(t *testing.T) {
	r := BFVIPaperRecipe()
	r.MaxIter, r.Stop.EvalEvery = 400, 100
	r.Stop.Window = r.MaxIter/r.Stop.EvalEvery + 1
	r.DiagDraws = 300
	r.Family.Flow.Degree = 9
	res, err := Run(context.Background(), shifted{3}, r, WithWorkers(1))
	if err != nil {
		t.Fatal(err)
	}
	if res.Iterations != r.MaxIter || math.IsNaN(res.ELBO) || math.IsInf(res.ELBO, 0) || math.IsNaN(res.KHat) {
		t.Fatalf("%d iterations (want %d), ELBO %g, k̂ %g: %s", res.Iterations, r.MaxIter, res.ELBO, res.KHat, res.Reason)
	}
	for i, v := range res.Params[len(res.Params)-6:] {
		if v != 0 {
			t.Errorf("output layer parameter %d = %g after the fit, want 0 (fixed)", i, v)
		}
	}
	if first := res.Trace[0].ELBO; !(res.ELBO > first) {
		t.Errorf("ELBO %g after %d steps, not above the first tracking estimate %g", res.ELBO, res.Iterations, first)
	}
	lay, err := model.NewLayout(model.Param{Name: "x", Dims: []int{3}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSaved(res, SaveInfo{Model: "shifted", Layout: lay})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Read("fit.json", &buf)
	if err != nil {
		t.Fatal(err)
	}
	fam, params := back.Approximation()
	z := res.Draws[:3]
	if got, want := fam.LogProb(params, z), res.Family.LogProb(res.Params, z); math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("reloaded log q %g, want %g", got, want)
	}
}
