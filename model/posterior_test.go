package model

import (
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vigo-bayes/vigo/diag"
	"github.com/vigo-bayes/vigo/internal/datadir"
)

func TestParsePosteriorInfo(t *testing.T) {
	const src = `{"name": "eight_schools-eight_schools_noncentered", "keywords": ["x"],
	 "model_name": "eight_schools_noncentered", "data_name": "eight_schools",
	 "references": null, "dimensions": {"theta": 8, "mu": 1, "tau": 1}}`
	p, err := ParsePosteriorInfo("es.json", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	want := &PosteriorInfo{
		Name: "eight_schools-eight_schools_noncentered", ModelName: "eight_schools_noncentered",
		DataName: "eight_schools", Dimensions: map[string]int{"theta": 8, "mu": 1, "tau": 1},
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("got %+v, want %+v", p, want)
	}
}

func TestParsePosteriorInfoBadInput(t *testing.T) {
	const names = `"name": "a-b", "model_name": "b", "data_name": "a"`
	for _, c := range []struct {
		what, src, want string
	}{
		{"not JSON", `{"name": `, "not JSON: unexpected end of input"},
		{"list", `[]`, "top level is a list of 0, want a JSON object"},
		{"no name", `{"model_name": "b", "data_name": "a", "dimensions": {"mu": 1}}`, `field "name": missing`},
		{"name null", `{"name": null, "model_name": "b", "data_name": "a", "dimensions": {"mu": 1}}`, `field "name": null, want a non-empty string`},
		{"empty data_name", `{"name": "a-b", "model_name": "b", "data_name": "", "dimensions": {"mu": 1}}`, `field "data_name": string "", want a non-empty string`},
		{"no dimensions", `{` + names + `}`, `field "dimensions": missing`},
		{"dimensions list", `{` + names + `, "dimensions": [1]}`, `field "dimensions": a list of 1, want an object`},
		{"dimensions empty", `{` + names + `, "dimensions": {}}`, `field "dimensions": empty`},
		{"dimension string", `{` + names + `, "dimensions": {"mu": "1"}}`, `field "dimensions", "mu": string "1", want a number`},
		{"dimension zero", `{` + names + `, "dimensions": {"mu": 0}}`, `field "dimensions", "mu": 0, want a positive size`},
		{"dimension real", `{` + names + `, "dimensions": {"mu": 1.5}}`, `field "dimensions", "mu": 1.5 is not an integer`},
		{"dimension sizes empty", `{` + names + `, "dimensions": {"w": []}}`, `field "dimensions", "w": an empty array, want sizes`},
		{"dimension size zero", `{` + names + `, "dimensions": {"w": [3, 0]}}`, `field "dimensions", "w": 0, want a positive size`},
		{"trailing", `{` + names + `, "dimensions": {"mu": 1}} x`, `trailing data`},
	} {
		t.Run(c.what, func(t *testing.T) {
			_, err := ParsePosteriorInfo("p.json", strings.NewReader(c.src))
			wantErr(t, err, "model: posterior info p.json: "+c.want)
		})
	}
}

// posteriordb writes a matrix's dimensions as an array of sizes (iohmm_reg's "w": [3, 4]): the
// parameter has their product of elements.
func TestParsePosteriorInfoArrayDimensions(t *testing.T) {
	src := `{"name": "a-b", "model_name": "b", "data_name": "a", "dimensions": {"w": [3, 4], "sigma": 3}}`
	info, err := ParsePosteriorInfo("p.json", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if info.Dimensions["w"] != 12 || info.Dimensions["sigma"] != 3 {
		t.Errorf("dimensions %v, want w 12, sigma 3", info.Dimensions)
	}
}

// drawsWith returns one-chain, one-draw draws with the given names.
func drawsWith(names ...string) *diag.Draws {
	return &diag.Draws{Names: names, Chains: [][]float64{make([]float64, len(names))}}
}

func TestCheckDraws(t *testing.T) {
	p := &PosteriorInfo{Name: "p", Dimensions: map[string]int{"theta": 3, "mu": 1, "v": 1, "L": 4}}
	ok := []string{"theta[2]", "theta[1]", "theta[3]", "mu", "v[1]", "L[1,1]", "L[2,1]", "L[1,2]", "L[2,2]"}
	if err := p.CheckDraws(drawsWith(ok...)); err != nil {
		t.Errorf("CheckDraws(%v) = %v", ok, err)
	}
	for _, c := range []struct {
		names []string
		want  string
	}{
		{[]string{"theta[1]", "theta[2]", "mu", "v", "L[1,1]", "L[2,1]", "L[1,2]", "L[2,2]"}, `"theta" has 2 names spanning [2] in the draws, want dimension 3`},
		{[]string{"theta[1]", "theta[2]", "theta[4]", "mu", "v", "L[1,1]", "L[2,1]", "L[1,2]", "L[2,2]"}, `"theta" has 3 names spanning [4]`},
		{[]string{"theta[1]", "theta[2]", "theta[3]", "mu", "v", "L[1,1]", "L[2,1]", "L[1,2]", "L[3,1]"}, `"L" has 4 names spanning [3 2]`},
		{[]string{"theta[1]", "theta[2]", "theta[3]", "mu", "v", "L[1,1]", "L[2,1]", "L[1,2]", "L[2]"}, `"L" has names with 2 and 1 indices`},
		{[]string{"theta[1]", "theta[2]", "theta[3]", "mu", "L[1,1]", "L[2,1]", "L[1,2]", "L[2,2]"}, `"v" (dimension 1) is not in the draws`},
		{[]string{"theta", "mu", "v", "L[1,1]", "L[2,1]", "L[1,2]", "L[2,2]"}, `"theta" is a scalar in the draws but has dimension 3`},
		{[]string{"theta[1]", "theta[2]", "theta[3]", "mu", "v", "sigma", "L[1,1]"}, `draws have "sigma", not in dimensions`},
		{[]string{"theta[0]"}, `draws name "theta[0]" is not a Stan flattened name`},
		{[]string{"theta[01]"}, `draws name "theta[01]" is not a Stan flattened name`},
		{[]string{"theta.1"}, `draws name "theta.1" is not a Stan flattened name`},
		{[]string{"theta[1]", "theta[2]", "theta", "mu", "v", "L[1,1]", "L[2,1]", "L[1,2]", "L[2,2]"}, `"theta" has names with 1 and 0 indices`},
	} {
		err := p.CheckDraws(drawsWith(c.names...))
		wantErr(t, err, "model: PosteriorInfo.CheckDraws: posterior p: "+c.want)
	}
	q := &PosteriorInfo{Name: "q", Dimensions: map[string]int{"mu": 2}}
	wantErr(t, q.CheckDraws(&diag.Draws{Names: []string{"mu[1]", "mu[1]"}}), `"mu" has index [1] twice`)
}

func TestParseStanName(t *testing.T) {
	for _, c := range []struct {
		in   string
		base string
		idx  []int
		ok   bool
	}{
		{"mu", "mu", nil, true},
		{"theta[12]", "theta", []int{12}, true},
		{"L_Omega[2,1]", "L_Omega", []int{2, 1}, true},
		{"a1[1,2,3]", "a1", []int{1, 2, 3}, true},
		{"1a", "", nil, false},
		{"a[", "", nil, false},
		{"a[]", "", nil, false},
		{"a[1,]", "", nil, false},
		{"a[1]x", "", nil, false},
		{"a[-1]", "", nil, false},
		{"a[ 1]", "", nil, false},
		{"", "", nil, false},
		{"[1]", "", nil, false},
	} {
		base, idx, ok := parseStanName(c.in)
		if base != c.base || !reflect.DeepEqual(idx, c.idx) || ok != c.ok {
			t.Errorf("parseStanName(%q) = %q, %v, %v; want %q, %v, %v", c.in, base, idx, ok, c.base, c.idx, c.ok)
		}
	}
}

// posteriordbDir returns the posteriordb directory ($VIGO_POSTERIORDB or ../shared) or skips.
func posteriordbDir(t *testing.T) string {
	t.Helper()
	return datadir.PosteriorDBOrSkip(t)
}

// TestPosteriordb loads every posterior description, its data and its
// reference draws, and checks that the draws match the dimensions.
func TestPosteriordb(t *testing.T) {
	dir := posteriordbDir(t)
	infos, err := filepath.Glob(filepath.Join(dir, "posteriors", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 12 {
		t.Errorf("found %d posteriors, want the 12 of MODELS.md", len(infos))
	}
	start := time.Now()
	for _, path := range infos {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			p, err := LoadPosteriorInfo(path)
			if err != nil {
				t.Fatal(err)
			}
			if p.Name != name {
				t.Errorf("name %q in %s", p.Name, path)
			}
			d, err := LoadData(filepath.Join(dir, "data", p.DataName+".json.zip"))
			if err != nil {
				t.Fatal(err)
			}
			// Every field of every data file is a finite rectangular array.
			for _, f := range d.Names() {
				shape, err := d.Shape(f)
				if err != nil {
					t.Fatal(err)
				}
				x, _, err := d.Array(f, shape...)
				if err != nil {
					t.Fatal(err)
				}
				n := 1
				for _, s := range shape {
					n *= s
				}
				if len(x) != n {
					t.Errorf("%s: %d values for shape %v", f, len(x), shape)
				}
			}
			draws, err := LoadDraws(filepath.Join(dir, "draws", name+".json.zip"))
			if err != nil {
				t.Fatal(err)
			}
			// MODELS.md: 10 chains of 1,000 draws each.
			if len(draws.Chains) != 10 || draws.ChainLen() != 1000 {
				t.Errorf("%d chains × %d draws, want 10 × 1000", len(draws.Chains), draws.ChainLen())
			}
			if err := p.CheckDraws(draws); err != nil {
				t.Error(err)
			}
		})
	}
	t.Logf("loaded %d posteriors in %v", len(infos), time.Since(start))
}

// TestPosteriordbValues spot-checks values against the files as printed by
// `unzip -p` (eight_schools data) and MODELS.md's description.
func TestPosteriordbValues(t *testing.T) {
	dir := posteriordbDir(t)
	d, err := LoadData(filepath.Join(dir, "data", "eight_schools.json.zip"))
	if err != nil {
		t.Fatal(err)
	}
	y, err := d.Vector("y", 8)
	if err != nil || fmt.Sprint(y) != "[28 8 -3 7 -1 1 18 12]" {
		t.Errorf("eight_schools y = %v, %v", y, err)
	}
	sb, err := LoadData(filepath.Join(dir, "data", "sblrc.json.zip"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sb.Matrix("X", 100, 5); err != nil {
		t.Error(err)
	}
	_, err = sb.Matrix("X", 100, 4)
	wantErr(t, err, "sblrc.json.zip: field \"X[1]\": want 4 values, got 5")
	dr, err := LoadDraws(filepath.Join(dir, "draws", "eight_schools-eight_schools_noncentered.json.zip"))
	if err != nil {
		t.Fatal(err)
	}
	// eight_schools stores theta[1..8] before mu and tau (MODELS.md).
	if dr.Names[0] != "theta[1]" || dr.Names[8] != "mu" || dr.Names[9] != "tau" {
		t.Errorf("eight_schools draws names = %v", dr.Names)
	}
	for i, v := range slices.Concat(dr.Var(9)...) {
		if !(v > 0) {
			t.Fatalf("tau draw %d = %v, want > 0 (constrained scale)", i, v)
		}
	}
}
