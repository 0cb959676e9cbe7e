package fit

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/bijector"
	"github.com/vigo-bayes/vigo/density"
	"github.com/vigo-bayes/vigo/family"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/objective"
)

// smallModel is mu ~ N(1, 2), sigma ~ half-normal(1), w ~ Dirichlet(2, 2, 2), b flat on
// (0, 1 + sigma): constrained parameters of four kinds in 5 unconstrained coordinates.
func smallModel(t *testing.T) *model.Model {
	t.Helper()
	lay, err := model.NewLayout(
		model.Param{Name: "mu"},
		model.Param{Name: "sigma", Constraint: bijector.Lower(1, 0)},
		model.Param{Name: "w", Dims: []int{3}, Constraint: bijector.Simplex(3)},
		model.Param{Name: "b", Bounds: &model.Bounds{Lower: []model.Affine{{}},
			Upper: []model.Affine{{Const: 1, Terms: []model.Term{{Name: "sigma", Coef: 1}}}}}},
	)
	if err != nil {
		t.Fatal(err)
	}
	return &model.Model{Layout: lay, Density: func(t *ad.Tape, p []ad.Var) ad.Var {
		lp := density.Normal(t, p[0], t.Const(1), t.Const(2))
		lp = t.Add(lp, density.HalfNormal(t, p[1], t.Const(1)))
		return t.Add(lp, density.Dirichlet(t, p[2], t.Const(2, 2, 2)))
	}}
}

func savedFit(t *testing.T, fam family.Family) (*Result, *Saved, *model.Model) {
	t.Helper()
	m := smallModel(t)
	cfg := Config{Seed: 11, MaxIter: 200, DiagDraws: 300}
	res, err := Fit(context.Background(), m, fam, objective.Options{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSaved(res, SaveInfo{Vigo: "test", Model: "small", Data: "none", Layout: m.Layout})
	if err != nil {
		t.Fatal(err)
	}
	return res, s, m
}

// writeRead writes s as fit.json into memory and reads it back.
func writeRead(t *testing.T, s *Saved) *Saved {
	t.Helper()
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := Read("fit.json", &buf)
	if err != nil {
		t.Fatalf("%s: %v", s.Family.Kind, err)
	}
	return back
}

func TestSavedRoundTripDrawsLikeTheFit(t *testing.T) {
	for _, fam := range []family.Family{family.NewMeanField(5), family.NewFullRank(5), family.NewLowRank(5, 2, family.WithPositivity(family.Softplus))} {
		res, s, m := savedFit(t, fam)
		back := writeRead(t, s)
		if back.Family != s.Family || back.Recipe != nil || back.Diagnostics != s.Diagnostics {
			t.Errorf("%s: header changed: %+v %+v / %+v %+v", s.Family.Kind, back.Family, back.Diagnostics, s.Family, s.Diagnostics)
		}
		for i := range res.Params {
			if math.Float64bits(back.Params[i]) != math.Float64bits(res.Params[i]) {
				t.Fatalf("%s: params[%d] %v read back as %v", s.Family.Kind, i, res.Params[i], back.Params[i])
			}
		}
		// Sample uses the fit's diagnostic stream, so the saved fit repeats the fit's draws bit
		// for bit.
		n := 50
		z, lq := back.Sample(11, n)
		d := back.Dim()
		for i := range n * d {
			if math.Float64bits(z[i]) != math.Float64bits(res.Draws[i]) {
				t.Fatalf("%s: draw value %d: %v, fit drew %v", s.Family.Kind, i, z[i], res.Draws[i])
			}
		}
		for i := range n {
			if math.Float64bits(lq[i]) != math.Float64bits(res.LogQ[i]) {
				t.Fatalf("%s: log q %d: %v, fit had %v", s.Family.Kind, i, lq[i], res.LogQ[i])
			}
		}
		want := make([]float64, m.Layout.Len())
		m.Layout.ConstrainValues(z[:d], want)
		got := back.Constrain(nil, z[:d])
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-14*(1+math.Abs(want[i])) { // affine bound: a few ulps (see io_test)
				t.Errorf("%s: %s = %v, model gives %v", s.Family.Kind, back.Names[i], got[i], want[i])
			}
		}
	}
}

func TestSavedKeepsNonFiniteDiagnostics(t *testing.T) {
	_, s, _ := savedFit(t, family.NewMeanField(5))
	s.Diagnostics.KHat, s.Diagnostics.ELBOSE, s.Diagnostics.ELBO = math.Inf(1), math.NaN(), math.Inf(-1)
	path := filepath.Join(t.TempDir(), "fit.json")
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	back, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	g := back.Diagnostics
	if !math.IsInf(g.KHat, 1) || !math.IsNaN(g.ELBOSE) || !math.IsInf(g.ELBO, -1) {
		t.Errorf("diagnostics %+v", g)
	}
}

func TestReadErrorsNameFileAndField(t *testing.T) {
	_, s, _ := savedFit(t, family.NewMeanField(5))
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	for _, c := range []struct {
		old, new, want string
	}{
		{`"version": 4`, `"version": 99`, `field "version": 99`},
		{`"format": "vigo-fit"`, `"format": "other"`, `field "format"`},
		{`"kind": "meanfield"`, `"kind": "flow"`, `field "family.kind"`},
		{`"dim": 5`, `"dim": 4`, `field "params": 10 values, meanfield in d=4 needs 8`},
		{`"dim": 5`, `"dim": "five"`, `field "family.dim"`},
		{`"positivity": "exp"`, `"positivity": "square"`, `field "family.positivity"`},
		{`"transform": "simplex"`, `"transform": "spline"`, `field "layout": model: LayoutFromSpec: parameter w`},
		{`"model": "small",`, `"model": "small"`, `line `},
	} {
		bad := strings.Replace(good, c.old, c.new, 1)
		if bad == good {
			t.Fatalf("test setup: %q not in the file", c.old)
		}
		_, err := Read("fit.json", strings.NewReader(bad))
		if err == nil || !strings.Contains(err.Error(), "fit.json") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s → %s: error %v, want the file and %q", c.old, c.new, err, c.want)
		}
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Errorf("missing file: error %v", err)
	}
}

func FuzzRead(f *testing.F) {
	f.Add(`{"format":"vigo-fit","version":1,"family":{"kind":"meanfield","dim":1,"positivity":"exp"},"params":[0,0],"shift":[0],"scale":[1],"scale_is_diagonal":true,"layout":[{"name":"a","transform":"identity"}]}`)
	f.Add(`{"format":"vigo-fit","version":1,"family":{"kind":"lowrank","dim":2,"rank":3,"positivity":"exp"}}`)
	f.Add(`{"format":"vigo-fit","version":1,"family":{"kind":"fullrank","dim":1,"positivity":"exp"},"params":[0,0],"shift":[0],"scale":[-1],"layout":[{"name":"L","dims":[-1,2],"transform":"cholesky_factor_cov"}]}`)
	f.Add(`{"format":"vigo-fit","version":2,"family":{"kind":"flow","dim":2,"name":"maf","flow":{"type":"compose","dim":2,"parts":[{"type":"maf","dim":2,"made":{"dim":2,"hidden":[3],"k":2,"activation":"tanh","order":[2,1],"direct":true}},{"type":"permute","dim":2,"perm":[1,0]},{"type":"bernstein_ar","dim":2,"made":{"dim":2,"hidden":[],"k":3,"activation":"linear","order":[1,2]},"degree":2,"tails":"linear"},{"type":"coupling","dim":2,"keep":[0],"hidden":[2],"activation":"relu","scale_clamp":5}]}},"params":[` + zeros(69) + `],"shift":[0,0],"scale":[1,1],"scale_is_diagonal":true,"layout":[{"name":"a","dims":[2],"transform":"identity"}]}`)
	// Size-bearing seeds: every size is checked against the file before anything is built, so
	// none of these may allocate more than a small multiple of the input.
	mf := `{"format":"vigo-fit","version":3,"family":{"kind":"%s","dim":%s,"rank":%s,"positivity":"exp"},"params":[0,0,0,0,0,0],"shift":[0,0],"scale":[1,1],"scale_is_diagonal":true,"layout":[{"name":"a","dims":[%s],"transform":"identity"}]}`
	for _, c := range [][4]string{
		{"meanfield", "20000", "0", "2"}, {"fullrank", "1000000", "0", "2"}, {"lowrank", "3000000000", "1", "2"},
		{"lowrank", "2", "1000000000", "2"}, {"fullrank", "9000000000000000000", "0", "2"}, {"meanfield", "2", "0", "1000000000,1000000000"},
		{"meanfield", "2", "0", "4611686018427387904,4"},
	} {
		f.Add(fmt.Sprintf(mf, c[0], c[1], c[2], c[3]))
	}
	f.Add(`{"format":"vigo-fit","version":2,"family":{"kind":"flow","dim":1,"flow":{"type":"bernstein","dim":1,"degree":1000000000,"tails":"linear"}},"params":[0,0,0,0,0,0],"shift":[0],"scale":[1],"scale_is_diagonal":true,"layout":[{"name":"a","transform":"identity"}]}`)
	f.Add(`{"format":"vigo-fit","version":2,"family":{"kind":"flow","dim":1,"flow":{"type":"maf","dim":1,"made":{"dim":1,"hidden":[16384,16384,16384,16384,16384,16384,16384,16384],"k":2,"activation":"tanh","order":[1]}}},"params":[0,0],"shift":[0],"scale":[1],"scale_is_diagonal":true,"layout":[{"name":"a","transform":"identity"}]}`)
	f.Add(`{"format":"vigo-fit","version":3,"recipe":{"version":1,"family":{"kind":"maf","flow":{"hidden":[16384,16384,16384,16384,16384,16384,16384,16384]}}},"family":{"kind":"meanfield","dim":1,"positivity":"exp"},"params":[0,0],"shift":[0],"scale":[1],"scale_is_diagonal":true,"layout":[{"name":"a","transform":"identity"}]}`)
	f.Add(`{"format":"vigo-fit","version":1,"family":{"kind":"meanfield","dim":1,"positivity":"exp"},"params":[0,800],"shift":[0],"scale":[1],"scale_is_diagonal":true,"layout":[{"name":"L","dims":[3,3],"transform":"cholesky_factor_corr"}]}`)
	f.Add(`{"format":"vigo-fit","version":1,"family":{"kind":"fullrank","dim":2,"positivity":"exp"},"params":[0,0,0,0,null],"shift":[0,0],"scale":[1,0.5,0,1],"layout":[{"name":"a","dims":[2],"transform":"identity"}]}`)
	f.Fuzz(fuzzRead)
}

// fuzzRead is the body of the fit.json fuzz targets (FuzzRead, FuzzReadMixture): Read never
// panics and bounds its memory by the input's length (no filter on the sizes), and a file it
// accepts can be sampled and constrained.
func fuzzRead(t *testing.T, s string) {
	if len(s) > 4096 {
		return
	}
	var sv *Saved
	var err error
	if n := allocated(func() { sv, err = Read("fuzz.json", strings.NewReader(s)) }); n > 64<<20 {
		t.Fatalf("Read of %d bytes allocated %d bytes", len(s), n)
	}
	if err != nil {
		return
	}
	z, _ := sv.Sample(1, 2)
	sv.Constrain(nil, z[:sv.Dim()])
}

// zeros returns n comma-separated zeros.
func zeros(n int) string { return strings.TrimSuffix(strings.Repeat("0,", n), ",") }
