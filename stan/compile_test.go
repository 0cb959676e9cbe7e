package stan

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/model"
)

func mustData(t *testing.T, js string) *model.Data {
	t.Helper()
	d, err := model.ParseData("test.json", strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// lpAt evaluates the compiled model at unconstrained z (with the Jacobian).
func lpAt(t *testing.T, m *model.Model, z ...float64) float64 {
	t.Helper()
	var tp ad.Tape
	grad := make([]float64, m.Dim())
	return model.Gradient(&tp, m, z, grad)
}

const testProgram = `
functions {
  real fact(int n) {
    if (n <= 1) return 1;
    return n * fact(n - 1);
  }
}
data {
  int<lower=0> N;
  vector[N] y;
  array[N] int<lower=0, upper=1> z;
}
transformed data {
  real f4 = fact(4);
}
parameters {
  real mu;
  real<lower=0> sigma;
}
transformed parameters {
  vector[N] m;
  for (n in 1:N) m[n] = mu + z[n];
}
model {
  y ~ normal(m, sigma);
  target += f4;
}
generated quantities {
  real twice = 2 * mu;
}
`

// TestCompileLogDensity checks a small program against its closed form: the user function
// (recursion) in transformed data, element-wise assignment in a loop, a vectorised ~ and
// target +=, and the Jacobian of the lower bound.
func TestCompileLogDensity(t *testing.T) {
	d := mustData(t, `{"N": 3, "y": [0.5, 1.5, -1], "z": [0, 1, 0]}`)
	m, err := Compile("t.stan", []byte(testProgram), d)
	if err != nil {
		t.Fatal(err)
	}
	if m.Dim() != 2 {
		t.Fatalf("Dim %d, want 2", m.Dim())
	}
	mu, ls := 0.3, -0.4
	sigma := math.Exp(ls)
	ys, zs := []float64{0.5, 1.5, -1}, []float64{0, 1, 0}
	// ~ normal drops −½log(2π) per observation; everything else is kept.
	want := 24.0 + ls // fact(4) and log J = log σ
	for i := range ys {
		r := (ys[i] - mu - zs[i]) / sigma
		want += -0.5*r*r - math.Log(sigma)
	}
	lp0 := lpAt(t, m, mu, ls)
	lp1 := lpAt(t, m, mu+0.2, ls)
	want1 := 24.0 + ls
	for i := range ys {
		r := (ys[i] - mu - 0.2 - zs[i]) / sigma
		want1 += -0.5*r*r - math.Log(sigma)
	}
	if math.Abs((lp1-lp0)-(want1-want)) > 1e-12 {
		t.Errorf("lp difference %.15g, want %.15g", lp1-lp0, want1-want)
	}
	if c := lp0 - want; math.Abs(c) > 10 {
		t.Errorf("lp %g differs from the closed form %g by %g, more than the dropped constant could", lp0, want, c)
	}
	if got := strings.Join(m.Columns(), ","); got != "mu,sigma,m[1],m[2],m[3],twice" {
		t.Errorf("columns %s", got)
	}
	row := m.Row(nil, []float64{mu, ls})
	if math.Abs(row[3]-(mu+1)) > 1e-15 || math.Abs(row[5]-2*mu) > 1e-15 {
		t.Errorf("row %v", row)
	}
}

// TestCompileDataErrors checks the data errors a user sees.
func TestCompileDataErrors(t *testing.T) {
	for _, c := range []struct{ data, want string }{
		{`{"N": 3, "y": [0.5, 1.5, -1]}`, `data: variable "z" not found`},
		{`{"N": 3, "y": [0.5, 1.5], "z": [0, 1, 0]}`, `data: variable "y"`},
		{`{"N": 3, "y": [0.5, 1.5, -1], "z": [0, 2, 0]}`, `data: variable "z[2]": 2, want <= 1`},
		{`{"N": -1, "y": [], "z": []}`, `data: variable "N": -1, want >= 0`},
	} {
		_, err := Compile("t.stan", []byte(testProgram), mustData(t, c.data))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("data %s: error %v, want it to contain %q", c.data, err, c.want)
		}
	}
}

// TestCompileDomainError checks that a run-time domain error rejects the point (NaN) and is
// reported with the statement's line.
func TestCompileDomainError(t *testing.T) {
	src := `parameters { real x; } model { x ~ normal(0, x); }`
	prog, err := Parse("d.stan", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := prog.Check(Builtins()); err != nil {
		t.Fatal(err)
	}
	cp, err := compileProgram(prog, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := cp.model()
	if err != nil {
		t.Fatal(err)
	}
	if lp := lpAt(t, m, -1); !math.IsNaN(lp) {
		t.Errorf("lp at a negative scale %g, want NaN (rejected)", lp)
	}
	_, err = cp.logDensityAt([]float64{-1}, false)
	if err == nil || !strings.Contains(err.Error(), "d.stan:1:") {
		t.Errorf("error %v, want one at d.stan:1", err)
	}
	if lp := lpAt(t, m, 2); math.IsNaN(lp) {
		t.Errorf("lp at x=2 is NaN")
	}
}

// TestCompileControlFlow checks while/break/continue, truncation and local blocks against
// values computed by hand.
func TestCompileControlFlow(t *testing.T) {
	src := `
parameters { real<lower=0> x; }
model {
  int k = 0;
  real s = 0;
  while (1) {
    k += 1;
    if (k > 5) break;
    if (k % 2 == 0) continue;
    s += k;
  }
  target += s;
  x ~ normal(0, 1) T[0, ];
}`
	m, err := Compile("c.stan", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	// s = 1 + 3 + 5 = 9; T[0,] subtracts normal_lccdf(0 | 0, 1) = log ½.
	u := 0.2
	x := math.Exp(u)
	want := 9 - 0.5*x*x - math.Log(0.5) + u
	got := lpAt(t, m, u)
	got2 := lpAt(t, m, u+0.1)
	x2 := math.Exp(u + 0.1)
	want2 := 9 - 0.5*x2*x2 - math.Log(0.5) + u + 0.1
	if math.Abs((got2-got)-(want2-want)) > 1e-12 {
		t.Errorf("lp difference %.15g, want %.15g", got2-got, want2-want)
	}
}

// TestCompileGeneratedRNG checks that generated quantities' _rng draws are a deterministic
// function of the draw (model.Derive's contract) and differ between draws.
func TestCompileGeneratedRNG(t *testing.T) {
	src := `parameters { real mu; } model { mu ~ normal(0, 1); }
generated quantities { real yrep = normal_rng(mu, 1); array[2] int k = {1, 2}; }`
	m, err := Compile("g.stan", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(m.Columns(), ","); got != "mu,yrep,k[1],k[2]" {
		t.Fatalf("columns %s", got)
	}
	a := m.Row(nil, []float64{0.5})
	b := m.Row(nil, []float64{0.5})
	c := m.Row(nil, []float64{0.6})
	if a[1] != b[1] {
		t.Errorf("yrep %g then %g at the same draw", a[1], b[1])
	}
	if a[1] == c[1] || math.IsNaN(a[1]) {
		t.Errorf("yrep %g at mu=0.5 and %g at mu=0.6", a[1], c[1])
	}
	if a[2] != 1 || a[3] != 2 {
		t.Errorf("k = %v", a[2:])
	}
}

// TestCompileConcurrent evaluates one compiled model from several goroutines at once (each
// with its own tape, as fits do) and checks every result equals the serial one; run with
// -race it also checks that evaluations share no mutable state.
func TestCompileConcurrent(t *testing.T) {
	d := mustData(t, `{"N": 3, "y": [0.5, 1.5, -1], "z": [0, 1, 0]}`)
	m, err := Compile("t.stan", []byte(testProgram), d)
	if err != nil {
		t.Fatal(err)
	}
	want := lpAt(t, m, 0.1, 0.2)
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			var tp ad.Tape
			grad := make([]float64, 2)
			for i := 0; i < 50; i++ {
				if got := model.Gradient(&tp, m, []float64{0.1, 0.2}, grad); got != want {
					errs <- fmt.Errorf("lp %g, serial %g", got, want)
					return
				}
				m.Row(nil, []float64{0.1, 0.2})
			}
			errs <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
