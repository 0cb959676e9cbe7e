package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/internal/resultmd"
)

// TestRunReparamQuick runs the benchmark on tiny problems and short runs: every form of every
// row is measured, the toy's automatic (a) choice for z2 follows the paper's rule
// (σz = 0.2 < σx = 1 ⇒ NCP, exactly: the toy's curvature is constant), and the report has its
// sections.
func TestRunReparamQuick(t *testing.T) {
	cfg := ReparamConfig{Warmup: 40, Draws: 40, Chains: 1, NoiseSeeds: 2, VIPSteps: 20, VIStarts: 1, VIMaxIter: 300,
		Toy: [][2]float64{{1, 0.2}}, DBNSigmas: []float64{0.5}, T: 2, K: 1, P: 2, Posteriors: []string{}}
	rep, err := RunReparam(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Rows) != 3 {
		t.Fatalf("%d rows, want 3 (eight schools, toy, DBN)", len(rep.Rows))
	}
	for _, row := range rep.Rows {
		if row.Err != "" {
			t.Fatalf("%s: %s", row.Name, row.Err)
		}
		for _, f := range reparamForms {
			if n := row.NUTS[f]; n == nil || n.Err != "" || !(n.ESSPerGrad > 0) {
				t.Errorf("%s: NUTS %s: %+v", row.Name, f, n)
			}
		}
	}
	if toy := rep.Rows[1]; toy.LambdaA[1] != 0 {
		t.Errorf("toy σz < σx: auto (a) λ = %v, want NCP for z2: %s", toy.LambdaA, toy.ChoiceA)
	}
	var b bytes.Buffer
	if err := rep.Markdown(&b, resultmd.Header{Command: "vigo bench reparam"}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"## NUTS: min ESS per 1000 gradients", "## Mean-field VI", "## Which form each group got", "toy σx=1 σz=0.2"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("report lacks %q", s)
		}
	}
}
