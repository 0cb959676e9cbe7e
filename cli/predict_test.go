package cli

import (
	"encoding/json"
	"github.com/vigo-bayes/vigo/rng"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/apovi"
)

// savedAPOVI writes an untrained 1-D APOVI model (small widths) and returns its path and the
// model.
func savedAPOVI(t *testing.T, dir string) (string, *apovi.APOVI) {
	t.Helper()
	m, err := apovi.NewAPOVI(apovi.Config{DX: 1, DY: 1, Hidden: []int{8}, InferenceHidden: []int{8},
		Likelihood: apovi.Likelihood{Kind: apovi.Gaussian, NoiseStd: 0.05}}, 3)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "model.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := apovi.Save(f, m); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path, m
}

func writeText(t *testing.T, path, s string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPredictWritesThePredictive: vigo predict's predictive.csv is the model's own Predict on
// the same data, grid, S and seed (the same stream: rng.New(seed, 0)), with the band at
// mean ± 1.96 sd, and predict.json states the run.
func TestPredictWritesThePredictive(t *testing.T) {
	dir := t.TempDir()
	mpath, m := savedAPOVI(t, dir)
	data := writeText(t, filepath.Join(dir, "new.csv"), "x,y\n-1,0.5\n0,0.1\n0.5,-0.2\n1.5,0.3\n")
	grid := writeText(t, filepath.Join(dir, "grid.csv"), "x\n-2\n0\n2\n")
	out := filepath.Join(dir, "pred")
	if _, err := run(t, "predict", mpath, "--data", data, "--x", grid, "--samples", "20", "--seed", "4", "--out", out); err != nil {
		t.Fatal(err)
	}
	rows := predictRows(t, filepath.Join(out, predictCSV))
	if strings.Join(rows[0], ",") != "x,mean_y,sd_y,lower_y,upper_y" || len(rows) != 4 {
		t.Fatalf("predictive.csv:\n%v", rows)
	}
	d := apovi.Dataset{N: 4, DX: 1, DY: 1, X: []float64{-1, 0, 0.5, 1.5}, Y: []float64{0.5, 0.1, -0.2, 0.3}}
	want, err := m.Predict(d, []float64{-2, 0, 2}, 20, rng.New(4, 0).Rand)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows[1:] {
		v := make([]float64, len(r))
		for j, s := range r {
			if v[j], err = strconv.ParseFloat(s, 64); err != nil {
				t.Fatal(err)
			}
		}
		if v[1] != want.Mean[i] || v[2] != want.Std[i] || !(v[2] > 0) {
			t.Errorf("row %d: mean %v sd %v, Predict gives %v %v", i, v[1], v[2], want.Mean[i], want.Std[i])
		}
		if math.Abs(v[3]-(v[1]-1.96*v[2])) > 1e-12 || math.Abs(v[4]-(v[1]+1.96*v[2])) > 1e-12 {
			t.Errorf("row %d: band %v %v", i, v[3], v[4])
		}
	}
	var s predictSummary
	b, err := os.ReadFile(filepath.Join(out, predictJSON))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	if s.Kind != "apovi" || s.N != 4 || s.NTest != 3 || s.Samples != 20 || s.Seed != 4 || !(s.ForwardSeconds > 0) {
		t.Errorf("predict.json: %+v", s)
	}
	// Without --x the test inputs are the data's.
	if _, err := run(t, "predict", mpath, "--data", data, "--out", out); err != nil {
		t.Fatal(err)
	}
	if rows := predictRows(t, filepath.Join(out, predictCSV)); len(rows) != 5 || rows[1][0] != "-1" {
		t.Errorf("default grid: %v", rows)
	}
}

func TestPredictBadInput(t *testing.T) {
	dir := t.TempDir()
	mpath, _ := savedAPOVI(t, dir)
	w := func(name, s string) string { return writeText(t, filepath.Join(dir, name), s) }
	good := w("good.csv", "x,y\n0,1\n1,2\n")
	povi, err := apovi.NewPOVI(apovi.POVIConfig{DX: 1, DY: 1, Hidden: []int{4}, M: 3,
		Likelihood: apovi.Likelihood{Kind: apovi.Gaussian, NoiseStd: 0.1}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	ppath := filepath.Join(dir, "povi.json")
	f, _ := os.Create(ppath)
	if err := apovi.Save(f, povi); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := filepath.Join(dir, "o")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{mpath}, "--data: required"},
		{[]string{filepath.Join(dir, "missing.json"), "--data", good}, "MODEL.json"},
		{[]string{w("bad.json", "{}"), "--data", good}, "format"},
		{[]string{ppath, "--data", good}, "not amortised"},
		{[]string{mpath, "--data", filepath.Join(dir, "nope.csv")}, "--data"},
		{[]string{mpath, "--data", w("empty.csv", "x,y\n")}, "N=0"},
		{[]string{mpath, "--data", w("nan.csv", "x,y\n0,1\n1,NaN\n")}, "y"},
		{[]string{mpath, "--data", w("dx2.csv", "x1,x2,y\n0,1,2\n")}, "x1"},
		{[]string{mpath, "--data", w("noy.csv", "x\n0\n")}, `no column "y"`},
		{[]string{mpath, "--data", w("dy2.csv", "x,y1,y2\n0,1,2\n")}, "DY=1"},
		{[]string{mpath, "--data", good, "--x", w("gridy.csv", "x,y\n0,1\n")}, `column "y"`},
		{[]string{mpath, "--data", good, "--x", w("gridempty.csv", "x\n")}, "--x"},
		{[]string{mpath, "--data", good, "--samples", "1"}, "--samples"},
	} {
		_, err := run(t, append([]string{"predict", "--out", out}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, predictCSV)); err == nil {
		t.Error("a failed run wrote predictive.csv")
	}
}

// predictRows returns predictive.csv's cells, header first.
func predictRows(t *testing.T, path string) [][]string {
	t.Helper()
	var rows [][]string
	for _, l := range dataLines(t, path) {
		rows = append(rows, strings.Split(l, ","))
	}
	return rows
}
