package apovi

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/rng"
)

func TestDatasetValidate(t *testing.T) {
	good := Dataset{X: []float64{1, 2}, Y: []float64{0.5, 0.1}, N: 2, DX: 1, DY: 1}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		d    Dataset
		want string
	}{
		{"empty", Dataset{DX: 1, DY: 1}, "N=0"},
		{"dx", Dataset{X: []float64{1}, Y: []float64{1}, N: 1, DY: 1}, "DX=0"},
		{"len X", Dataset{X: []float64{1}, Y: []float64{1, 2}, N: 2, DX: 1, DY: 1}, "len(X)=1"},
		{"len Y", Dataset{X: []float64{1, 2}, Y: []float64{1}, N: 2, DX: 1, DY: 1}, "len(Y)=1"},
		{"nan X", Dataset{X: []float64{1, math.NaN()}, Y: []float64{1, 2}, N: 2, DX: 1, DY: 1}, "X[1]=NaN"},
		{"inf Y", Dataset{X: []float64{1, 2}, Y: []float64{math.Inf(1), 2}, N: 2, DX: 1, DY: 1}, "Y[0]=+Inf"},
	} {
		err := tc.d.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "apovi: Dataset.Validate") {
			t.Errorf("%s: error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
}

func TestBadArguments(t *testing.T) {
	m, err := NewAPOVI(Config{DX: 1, DY: 1, Hidden: []int{3}, InferenceHidden: []int{4},
		Likelihood: Likelihood{Kind: Gaussian, NoiseStd: 0.1}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := toyData(4, 1, 1, false, 1)
	wide := toyData(4, 2, 1, false, 1)
	r := rng.New(1, 0).Rand
	var tp ad.Tape
	p := tp.Input(m.Params())
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"npml without targets", second(m.Loss(&tp, p, NPML, ctx, Dataset{}, 1, r)), "tgt"},
		{"elbo without data", second(m.Loss(&tp, p, ELBO, Dataset{}, Dataset{}, 1, r)), "ctx.N=0"},
		{"dx mismatch", second(m.Loss(&tp, p, ELBO, wide, Dataset{}, 1, r)), "ctx.DX=2"},
		{"S", second(m.Loss(&tp, p, ELBO, ctx, Dataset{}, 0, r)), "S=0"},
		{"param size", second(m.Loss(&tp, tp.Input([]float64{1}), ELBO, ctx, Dataset{}, 1, r)), "size 1"},
		{"predict dx", second(m.Predict(wide, []float64{1, 2}, 1, r)), "ctx.DX=2"},
		{"predict xTest", second(m.Predict(ctx, []float64{math.NaN()}, 1, r)), "xTest[0]=NaN"},
		{"set params", m.SetParams([]float64{1}), "len(p)=1"},
		{"config", second(NewAPOVI(Config{DX: 1, DY: 1, Hidden: []int{0}, Likelihood: Likelihood{Kind: Gaussian, NoiseStd: 1}}, 1)), "Config.Hidden[0]=0"},
		{"noise", second(NewAMFVI(Config{DX: 1, DY: 1, Likelihood: Likelihood{Kind: Gaussian}}, 1)), "NoiseStd"},
		{"kind", second(NewAPOVI(Config{DX: 1, DY: 1, Likelihood: Likelihood{Kind: "poisson"}}, 1)), "Likelihood.Kind"},
		{"povi M", second(NewPOVI(POVIConfig{DX: 1, DY: 1, Likelihood: Likelihood{Kind: Bernoulli}}, 1)), "M=0"},
		{"povi inducing", second(NewPOVI(POVIConfig{DX: 2, DY: 1, M: 3, Inducing: []float64{1}, Likelihood: Likelihood{Kind: Bernoulli}}, 1)), "len(POVIConfig.Inducing)=1"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, tc.err, tc.want)
		}
	}
	pv, _ := NewPOVI(POVIConfig{DX: 1, DY: 1, M: 3, Likelihood: Likelihood{Kind: Bernoulli}}, 1)
	var t2 ad.Tape
	if _, err := pv.Loss(&t2, t2.Input(pv.Params()), NPML, ctx, ctx, 1, r); err == nil || !strings.Contains(err.Error(), "npml") {
		t.Errorf("POVI NPML: error %v", err)
	}
}

func second[T any](_ T, err error) error { return err }

// TestSaveLoad: a saved model reloads with bit-identical parameters, so predictions with the
// same seed are bit-identical; a model saved for DX = 1 refuses 2-D data; corrupt files fail.
func TestSaveLoad(t *testing.T) {
	ctx := toyData(6, 1, 1, false, 2)
	xt := []float64{-1, 0, 0.5, 1.7}
	gauss := Likelihood{Kind: Gaussian, NoiseStd: 0.1, TrainNoise: true}
	mods := []Model{}
	a, _ := NewAPOVI(Config{DX: 1, DY: 1, Hidden: []int{5}, InferenceHidden: []int{6}, Likelihood: gauss}, 3)
	f, _ := NewAMFVI(Config{DX: 1, DY: 1, Hidden: []int{5}, InferenceHidden: []int{6}, Likelihood: gauss, PriorVar: 2}, 4)
	p, _ := NewPOVI(POVIConfig{DX: 1, DY: 1, Hidden: []int{5}, M: 7, FinalPrec: 1, Likelihood: gauss}, 5)
	mods = append(mods, a, f, p)
	for _, m := range mods {
		// Move the parameters off their initial values so that a reload from the configuration
		// alone could not pass.
		q := m.Params()
		for i := range q {
			q[i] += 1e-3 * math.Sin(float64(i)+0.1)
		}
		var buf bytes.Buffer
		if err := Save(&buf, m); err != nil {
			t.Fatal(err)
		}
		m2, err := Load(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		p1, err := m.Predict(ctx, xt, 5, rng.New(9, 0).Rand)
		if err != nil {
			t.Fatal(err)
		}
		p2, err := m2.Predict(ctx, xt, 5, rng.New(9, 0).Rand)
		if err != nil {
			t.Fatal(err)
		}
		for s := range p1.F {
			for i := range p1.F[s] {
				if math.Float64bits(p1.F[s][i]) != math.Float64bits(p2.F[s][i]) {
					t.Fatalf("%T: sample %d point %d: %v before save, %v after", m, s, i, p1.F[s][i], p2.F[s][i])
				}
			}
		}
		if _, err := m2.Predict(toyData(3, 2, 1, false, 1), []float64{1, 2}, 2, rng.New(1, 0).Rand); err == nil && !isPOVI(m2) {
			t.Errorf("%T: 2-D context accepted by a 1-D model", m)
		}
		if _, err := m2.Predict(ctx, []float64{1, 2, 3}, 2, rng.New(1, 0).Rand); err != nil {
			t.Errorf("%T: %v", m, err)
		}
	}
	for _, bad := range []struct{ in, want string }{
		{`{"format":"other","version":1}`, "format"},
		{`{"format":"vigo-apovi-model","version":7}`, "version=7"},
		{`{"format":"vigo-apovi-model","version":1,"kind":"gp"}`, "kind"},
		{`{"format":"vigo-apovi-model","version":1,"kind":"apovi","config":{"dx":1,"dy":1,"hidden":[2],"inference_hidden":[2],"likelihood":{"kind":"bernoulli"}},"params":[1,2]}`, "len(params)=2"},
	} {
		if _, err := Load(strings.NewReader(bad.in)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Load(%s): error %v, want one containing %q", bad.in, err, bad.want)
		}
	}
}

func isPOVI(m Model) bool { _, ok := m.(*POVI); return ok }

// TestParameterCounts: the registered-parameter counts of apovi.md §5 ("Network sizes and
// parameter counts"), derived there from the thesis's code.
func TestParameterCounts(t *testing.T) {
	g := func(train bool) Likelihood { return Likelihood{Kind: Gaussian, NoiseStd: 0.05, TrainNoise: train} }
	a1, _ := NewAPOVI(Config{DX: 1, DY: 1, Hidden: []int{32, 32}, InferenceHidden: []int{50, 50}, Likelihood: g(false)}, 1)
	a2, _ := NewAPOVI(Config{DX: 1, DY: 1, Hidden: []int{50, 50}, InferenceHidden: []int{50, 50}, Likelihood: g(true)}, 1)
	f, _ := NewAMFVI(Config{DX: 1, DY: 1, Hidden: []int{50, 50}, InferenceHidden: []int{50, 50}, Likelihood: g(true)}, 1)
	im, _ := NewAPOVI(Config{DX: 2, DY: 1, Hidden: []int{150, 150, 150}, InferenceHidden: []int{200, 200, 200}, Likelihood: Likelihood{Kind: Bernoulli}}, 1)
	pv, _ := NewPOVI(POVIConfig{DX: 1, DY: 1, Hidden: []int{32, 32}, M: 20, Likelihood: g(false)}, 1)
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"APOVI ELBO experiment", len(a1.Params()), 11928},
		{"APOVI 1-D", len(a2.Params()), 15600 + 1},
		{"AMFVI 1-D", len(f.Params()), 283602 + 1},
		{"APOVI MNIST", len(im.Params()), 506102},
		{"POVI ELBO experiment, M = 20", len(pv.Params()), 131 * 20},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d parameters, want %d", c.name, c.got, c.want)
		}
	}
}

// TestConcurrentLoss: Loss reads the parameters from its Var only, so losses recorded on
// separate tapes in parallel goroutines equal the serial ones bit for bit.
func TestConcurrentLoss(t *testing.T) {
	m, err := NewAPOVI(Config{DX: 1, DY: 1, Hidden: []int{6, 6}, InferenceHidden: []int{5},
		Likelihood: Likelihood{Kind: Gaussian, NoiseStd: 0.1, TrainNoise: true}}, 2)
	if err != nil {
		t.Fatal(err)
	}
	const n = 6
	data := make([]Dataset, n)
	want := make([]float64, n)
	for i := range data {
		data[i] = toyData(5+i, 1, 1, false, uint64(i))
		l, _, err := lossAt(m, m.Params(), ELBO, data[i], Dataset{}, 2, uint64(i))
		if err != nil {
			t.Fatal(err)
		}
		want[i] = l
	}
	got := make([]float64, n)
	done := make(chan struct{})
	for i := range data {
		go func() {
			defer func() { done <- struct{}{} }()
			got[i], _, _ = lossAt(m, m.Params(), ELBO, data[i], Dataset{}, 2, uint64(i))
		}()
	}
	for range data {
		<-done
	}
	for i := range got {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			t.Errorf("dataset %d: concurrent loss %v, serial %v", i, got[i], want[i])
		}
	}
}

// TestCountParams: the count Load checks before allocating equals the constructed models'.
func TestCountParams(t *testing.T) {
	g := Likelihood{Kind: Gaussian, NoiseStd: 1, TrainNoise: true}
	b := Likelihood{Kind: Bernoulli}
	for _, lik := range []Likelihood{g, b} {
		c := Config{DX: 2, DY: 3, Hidden: []int{4, 5}, InferenceHidden: []int{6}, Likelihood: lik}
		a, _ := NewAPOVI(c, 1)
		f, _ := NewAMFVI(c, 1)
		p, _ := NewPOVI(POVIConfig{DX: 2, DY: 3, Hidden: []int{4, 5}, M: 7, Likelihood: lik}, 1)
		const big = 1 << 40
		for _, x := range []struct {
			kind      string
			got, want int
		}{
			{"apovi", countParams("apovi", 2, 3, c.Hidden, c.InferenceHidden, 0, lik, big), len(a.Params())},
			{"amfvi", countParams("amfvi", 2, 3, c.Hidden, c.InferenceHidden, 0, lik, big), len(f.Params())},
			{"povi", countParams("povi", 2, 3, c.Hidden, nil, 7, lik, big), len(p.Params())},
		} {
			if x.got != x.want {
				t.Errorf("%s %s: countParams %d, model %d", x.kind, lik.Kind, x.got, x.want)
			}
		}
	}
	if n := countParams("apovi", 1, 1, []int{1 << 30, 1 << 30}, []int{1 << 30}, 0, Likelihood{Kind: Bernoulli}, 100); n != -1 {
		t.Errorf("huge configuration: %d, want −1", n)
	}
}

// FuzzLoad: Load never panics and never allocates for a configuration the file's parameters do
// not fill.
func FuzzLoad(f *testing.F) {
	m, _ := NewAPOVI(Config{DX: 1, DY: 1, Hidden: []int{2}, InferenceHidden: []int{2}, Likelihood: Likelihood{Kind: Bernoulli}}, 1)
	var buf bytes.Buffer
	if err := Save(&buf, m); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"format":"vigo-apovi-model","version":1,"kind":"amfvi","config":{"dx":1,"dy":1,"hidden":[1000000000],"likelihood":{"kind":"bernoulli"}},"params":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		if m, err := Load(bytes.NewReader(b)); err == nil {
			var buf bytes.Buffer
			if err := Save(&buf, m); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// TestParseFloatsMatchesEncodingJSON: Load's parameter parser gives json.Unmarshal's []float64
// bit for bit on numbers in every form encoding/json writes or reads (shortest round-trip
// floats, exponents, −0, integers, indentation), and refuses what is not an array of numbers.
func TestParseFloatsMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 5e-324, math.MaxFloat64, -math.SmallestNonzeroFloat64, 1e21, 1e-7, 123456789}
	for range 2000 {
		vals = append(vals, r.NormFloat64()*math.Pow(10, float64(r.IntN(40)-20)))
	}
	enc, err := json.MarshalIndent(vals, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{string(enc), "[1e3, -2.5E-2 ,0.0,\n 7]", "[]", "null", " [ 3 ] "} {
		var want []float64
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		got, err := parseFloats([]byte(in))
		if err != nil {
			t.Fatalf("%.40q: %v", in, err)
		}
		if (got == nil) != (want == nil) || len(got) != len(want) {
			t.Fatalf("%.40q: %d values (nil %v), want %d (nil %v)", in, len(got), got == nil, len(want), want == nil)
		}
		for i := range want {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%.40q: [%d] = %v, want %v", in, i, got[i], want[i])
			}
		}
	}
	for _, in := range []string{`[1, "2"]`, `[1, null]`, `[[1]]`, `{"a": 1}`, `"1,2"`, `[1e400]`, `[true]`, `3`,
		`[01]`, `[1.]`, `[.5]`, `[+1]`, `[1e]`, `[0x10]`, `[Inf]`, `[NaN]`, `[1_0]`, `[1,]`, `[,1]`, `[1 2]`} {
		if _, err := parseFloats([]byte(in)); err == nil {
			t.Fatalf("%s accepted", in)
		}
	}
}

// loadReference is Load's decoding as it was before splitParams and parseFloats: one
// encoding/json decode of the whole document with the parameters as []float64.
func loadReference(b []byte) ([]float64, error) {
	var s savedModel
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, err
	}
	return s.Params, nil
}

// FuzzSplitParams: whatever splitParams and parseFloats accept, encoding/json's decoding of
// the whole document accepts too, with the same parameters bit for bit.
//
// Run: go test -fuzz FuzzSplitParams ./apovi
func FuzzSplitParams(f *testing.F) {
	m, _ := NewAPOVI(Config{DX: 1, DY: 1, Hidden: []int{2}, InferenceHidden: []int{2}, Likelihood: Likelihood{Kind: Bernoulli}}, 1)
	var buf bytes.Buffer
	if err := Save(&buf, m); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{"kind":"params","params":[1,2e3],"config":{"params":[5]}}`))
	f.Add([]byte(`{"params":[1],"params":[2]}`))
	f.Add([]byte(`{"params" : [ "]" , 1 ]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		rest, arr, err := splitParams(b)
		if err != nil {
			return
		}
		var ls loadedModel
		dec := json.NewDecoder(bytes.NewReader(rest))
		dec.DisallowUnknownFields()
		if dec.Decode(&ls) != nil {
			return
		}
		if arr == nil {
			arr = ls.Params
		}
		got, err := parseFloats(arr)
		if err != nil {
			return
		}
		want, err := loadReference(b)
		if err != nil {
			t.Fatalf("accepted %q, encoding/json refuses it: %v", b, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %d parameters, encoding/json %d", b, len(got), len(want))
		}
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("%q: params[%d] = %v, encoding/json %v", b, i, got[i], want[i])
			}
		}
	})
}
