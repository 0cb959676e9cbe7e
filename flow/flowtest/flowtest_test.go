package flowtest

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/flow"
	"github.com/vigo-bayes/vigo/nn"
)

// recorder is a testing.TB that records failures instead of reporting them.
type recorder struct {
	testing.TB
	msgs []string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(f string, a ...any) { r.msgs = append(r.msgs, fmt.Sprintf(f, a...)) }
func (r *recorder) Error(a ...any)            { r.msgs = append(r.msgs, fmt.Sprint(a...)) }
func (r *recorder) Fatalf(f string, a ...any) { r.Errorf(f, a...); runtime.Goexit() }
func (r *recorder) Fatal(a ...any)            { r.Error(a...); runtime.Goexit() }

// run returns the failures Check reports for f.
func run(t *testing.T, f flow.Flow, c Config) []string {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Check(r, f, c)
	}()
	<-done
	return r.msgs
}

// Broken flows, each wrong in one way.
type (
	// offLogDet adds 10⁻³ to the affine flow's forward log-determinant.
	offLogDet struct{ *flow.Affine }
	// forwardAsInverse records the forward map as its tape inverse.
	forwardAsInverse struct{ *flow.MAF }
	// constParams treats the parameters as constants in Forward (no gradient).
	constParams struct{ *flow.Affine }
	// wrongSpec describes the IAF as the other MAF direction.
	wrongSpec struct{ *flow.MAF }
	// notIdentity initialises every parameter at 0.1.
	notIdentity struct{ *flow.Affine }
)

func (f offLogDet) Forward(t *ad.Tape, p, u ad.Var) (ad.Var, ad.Var) {
	z, ld := f.Affine.Forward(t, p, u)
	return z, t.AddC(ld, 1e-3)
}

func (f forwardAsInverse) InverseTape(t *ad.Tape, p, z ad.Var) (ad.Var, ad.Var) {
	return f.MAF.Forward(t, p, z)
}

func (f constParams) Forward(t *ad.Tape, p, u ad.Var) (ad.Var, ad.Var) {
	return f.Affine.Forward(t, t.Const(t.Value(p)...), u)
}

func (f wrongSpec) Spec() flow.Spec {
	s := f.MAF.Spec()
	s.ConditionOnOutput = true
	return s
}

func (f notIdentity) Init(p []float64, _ *rand.Rand) {
	for i := range p {
		p[i] = 0.1
	}
}

// TestCheckFails: Check passes a correct flow and reports each kind of breakage.
func TestCheckFails(t *testing.T) {
	maf := func() *flow.MAF { return flow.NewMAF(nn.NewMADE(3, []int{5}, 2)) }
	if msgs := run(t, maf(), Config{}); len(msgs) != 0 {
		t.Fatalf("a correct MAF fails: %v", msgs)
	}
	for _, c := range []struct {
		name string
		f    flow.Flow
		want string
	}{
		{"log-det", offLogDet{flow.NewAffine(3)}, "finite-difference Jacobian"},
		{"tape inverse", forwardAsInverse{maf()}, "InverseTape"},
		{"gradient", constParams{flow.NewAffine(3)}, "∂/∂params"},
		{"spec", wrongSpec{maf()}, "FromSpec(Spec())"},
		{"init", notIdentity{flow.NewAffine(2)}, "Init: z[0]"},
	} {
		msgs := run(t, c.f, Config{})
		if !strings.Contains(strings.Join(msgs, "\n"), c.want) {
			t.Errorf("%s: failures %q, want one containing %q", c.name, msgs, c.want)
		}
	}
}
