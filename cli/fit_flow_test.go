package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/fit"
)

// TestFitFlowFamiliesSaveAndDraw: every flow family fits (small conditioners, iteration cap),
// says so in the draws header, saves to fit.json, and vigo draw repeats the fit's draws.
func TestFitFlowFamiliesSaveAndDraw(t *testing.T) {
	if testing.Short() {
		t.Skip("four flow fits (≈3 s)")
	}
	for _, c := range []struct {
		kind  string
		extra []string
	}{
		{fit.KindMAF, []string{"--hidden", "4", "--warm"}},
		{fit.KindRealNVP, []string{"--hidden", "4", "--layers", "2"}},
		{fit.KindBernstein, []string{"--hidden", "4", "--degree", "3", "--activation", "linear"}},
		{fit.KindBernstein, []string{"--hidden", "4", "--degree", "3", "--affine", "last"}},
	} {
		dir := t.TempDir()
		args := append(quick(dir, "--iter", "100", "--draws", "30", "--family", c.kind), c.extra...)
		if out, err := run(t, args...); err != nil && !errors.Is(err, errNotConverged) {
			t.Fatalf("%s: %v\n%s", c.kind, err, out)
		}
		csv := filepath.Join(dir, "draws.csv")
		header := strings.Join(readCSV(t, csv).Config, "\n")
		samples := fit.DefaultRecipe(c.kind).Objective.Samples
		for _, w := range []string{"family = " + c.kind + " (flow, ", fmt.Sprintf("(S = %d, K = 1)", samples), "noise (tol = 0.01,"} {
			if !strings.Contains(header, w) {
				t.Errorf("%s: header lacks %q:\n%s", c.kind, w, header)
			}
		}
		warm := strings.Contains(header, "init = warm start")
		if want := strings.Contains(strings.Join(c.extra, " "), "--warm"); warm != want {
			t.Errorf("%s: warm start %v, want %v", c.kind, warm, want)
		}
		s, err := fit.Load(filepath.Join(dir, "fit.json"))
		if err != nil {
			t.Fatal(err)
		}
		if s.Family.Kind != fit.KindFlow || s.Family.Name != c.kind || s.Recipe == nil || s.Recipe.Objective.Samples != samples {
			t.Errorf("%s: fit.json family %+v, recipe %+v", c.kind, s.Family, s.Recipe)
		}
		drawn := filepath.Join(dir, "drawn.csv")
		if out, err := run(t, "draw", filepath.Join(dir, "fit.json"), "--draws", "30", "--out", drawn); err != nil {
			t.Fatalf("%s: vigo draw: %v\n%s", c.kind, err, out)
		}
		if h := strings.Join(readCSV(t, drawn).Config, "\n"); !strings.Contains(h, "family = "+c.kind+" (flow)") {
			t.Errorf("%s: vigo draw header lacks the family:\n%s", c.kind, h)
		}
		a, b := dataLines(t, csv), dataLines(t, drawn)
		if len(a) != len(b) {
			t.Fatalf("%s: %d lines drawn, fit wrote %d", c.kind, len(b), len(a))
		}
		for i := range a {
			if a[i] != b[i] {
				t.Fatalf("%s: line %d of the draws differs:\n%s\n%s", c.kind, i, a[i], b[i])
			}
		}
	}
}

// TestFitAutoSaysWhichFamilyAndWhy: --family auto prints a line per stage with k̂ and the
// reason for its choice, and records them in the draws header.
func TestFitAutoSaysWhichFamilyAndWhy(t *testing.T) {
	if testing.Short() {
		t.Skip("four fits (≈3 s)")
	}
	dir := t.TempDir()
	out, err := run(t, quick(dir, "--iter", "100", "--family", "auto", "--hidden", "4", "--degree", "3")...)
	if err != nil && !errors.Is(err, errNotConverged) {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, w := range []string{"family chosen automatically:", "  meanfield: k̂ ", "\nchose "} {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	header := strings.Join(readCSV(t, filepath.Join(dir, "draws.csv")).Config, "\n")
	if !strings.Contains(header, "auto: meanfield: k̂") || !strings.Contains(header, "auto: chose ") {
		t.Errorf("header lacks the auto lines:\n%s", header)
	}
}

func TestFitFlowFlagErrorsNameTheFlag(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--family", "maf", "--degree", "5"}, "--degree: only for --family bernstein"},
		{[]string{"--family", "maf", "--affine", "last"}, "--affine: only for --family bernstein"},
		{[]string{"--family", "bernstein", "--affine", "middle"}, `affine "middle", want none, last or first`},
		{[]string{"--budget", "1m"}, "--budget: only for --family auto"},
		{[]string{"--family", "auto", "--warm"}, "--warm: only for a flow family"},
		{[]string{"--layers", "2"}, "--layers: only for a flow family"},
		{[]string{"--base-df", "5"}, "--base-df: only for a flow family"},
		{[]string{"--family", "bernstein", "--base-df", "0.5"}, "--base-df (--family bernstein): fit: Recipe: family.flow: fit: NewFlowFamily: base degrees of freedom 0.5, want 1 to 1000"},
		{[]string{"--family", "realnvp", "--hidden", "0"}, "--hidden"},
		{[]string{"--family", "maf", "--activation", "swish"}, "--family maf"},
		{[]string{"--family", "flowy"}, `"flowy"`},
	} {
		_, err := run(t, quick(filepath.Join(dir, "out"), c.args...)...)
		if err == nil || errors.Is(err, errNotConverged) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want %q", c.args, err, c.want)
		}
	}
}
