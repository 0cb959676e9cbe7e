package cli

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/vigo-bayes/vigo/bench"
	"github.com/vigo-bayes/vigo/fit"
	"github.com/vigo-bayes/vigo/zoo"
)

// vigo fit --family fullrank and the posteriordb benchmark's fullrank method run one recipe,
// so the same seed gives the same fit: every draw of every reported quantity agrees to the
// precision draws.csv is written with (6 significant digits), and so does k̂.
func TestFitFullRankIsTheBenchmarksFullRank(t *testing.T) {
	dir := t.TempDir()
	if out, err := run(t, "fit", "--family", "fullrank", "--seed", "2", "-q", "--out", dir); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	c := readCSV(t, filepath.Join(dir, "draws.csv"))
	meth, err := bench.LookupMethod(fit.KindFullRank)
	if err != nil {
		t.Fatal(err)
	}
	o, err := meth.Run(context.Background(), zoo.EightSchools(), 2, bench.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := fit.Load(filepath.Join(dir, "fit.json"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Diagnostics.KHat != o.KHat {
		t.Errorf("k̂: vigo fit %v, bench %v", s.Diagnostics.KHat, o.KHat)
	}
	k, kb := len(c.Names), o.Draws.Dim()
	n := len(c.Draws) / k
	if n != o.Draws.Len() {
		t.Fatalf("%d draws in draws.csv, %d from the benchmark", n, o.Draws.Len())
	}
	compared := 0
	for jb, name := range o.Draws.Names {
		j := -1
		for i, cn := range c.Names {
			if cn == name {
				j = i
			}
		}
		if j < 0 {
			continue
		}
		compared++
		for i := range n {
			a, b := c.Draws[i*k+j], o.Draws.Chains[0][i*kb+jb]
			if math.Abs(a-b) > 5e-6*math.Abs(b)+1e-12 {
				t.Fatalf("%s draw %d: vigo fit %v, bench %v", name, i, a, b)
			}
		}
	}
	if compared < 10 {
		t.Errorf("only %d columns in common (%v / %v)", compared, c.Names, o.Draws.Names)
	}
}
