package archtest

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/vigo-bayes/vigo"

// levels is DESIGN.md §1's package table. Imports must go to a strictly lower level.
// Packages outside the table fail the test, so a new package must be placed here on purpose.
var levels = map[string]int{
	"internal/mathx":     0,
	"rng":                0,
	"internal/race":      0, // the race detector's build flag, for tests that count allocations
	"internal/datadir":   0, // where the CLI and tests find posteriordb, Fashion-MNIST and ../shared
	"internal/idx":       0, // the IDX reader of MNIST and Fashion-MNIST (bnn, imagecomp)
	"internal/resultmd":  0, // the header lines of every result table under bench/results
	"internal/textsafe":  0, // terminal control characters in file content, escaped for printing
	"internal/kernel":    0, // dense kernels (axpy, dot, small GEMM, vector exp/log1p), SIMD behind goexperiment.simd
	"ad":                 1,
	"dist":               1,
	"optim":              1,
	"imagecomp":          1, // the image-completion protocol of the APOVI thesis (masks, metric, Delaunay baseline)
	"diag":               1,
	"density":            2,
	"bijector":           2,
	"nn":                 2,
	"flow":               3,
	"model":              3,
	"family":             4,
	"objective":          4,
	"mcmc":               4,
	"stan":               4, // the Stan-language front end: programs + data → model.Model
	"bnn":                5,
	"apovi":              5, // amortised inference in BNNs (POVI, APOVI, AMFVI; Rochussen 2023)
	"cnp":                5, // ConvCNP baselines of the APOVI thesis (1-D off the grid, images on the grid)
	"fit":                5,
	"reparam":            6, // location–scale groups in centred / non-centred / partial form (issue 18)
	"zoo":                6,
	"output":             6, // what vigo fit writes, for any model (plots live here, not in fit)
	"flow/flowtest":      4, // the shared checker of the flow.Flow contract, for tests
	"cli":                8, // the command line as a library (cli.Main)
	"cmd/vigo":           9,
	"examples/usermodel": 9, // a user's own model through cli.Main
	"bench":              7, // benchmark runners: use everything below, used only by the CLI
	"internal/archtest":  10,
}

type pkg struct {
	ImportPath string
	Imports    []string
}

func TestImportsFlowDown(t *testing.T) {
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	var pkgs []pkg
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 3 {
		t.Fatalf("go list found only %d packages; the test would pass vacuously", len(pkgs))
	}
	for _, v := range violations(pkgs) {
		t.Error(v)
	}
}

// violations lists every import that goes up (or sideways on) the table.
func violations(pkgs []pkg) []string {
	var bad []string
	for _, p := range pkgs {
		name := rel(p.ImportPath)
		lv, ok := level(name)
		if !ok {
			bad = append(bad, "package "+name+" is not in the layering table (DESIGN.md §1); add it")
			continue
		}
		for _, imp := range p.Imports {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			in := rel(imp)
			il, ok := level(in)
			switch {
			case !ok:
				bad = append(bad, name+" imports "+in+", which is not in the layering table")
			case il >= lv:
				bad = append(bad, name+" imports "+in+": imports must go down the table (DESIGN.md §1)")
			}
		}
	}
	return bad
}

func TestViolationsDetectsUpwardAndSidewaysImports(t *testing.T) {
	pkgs := []pkg{
		{ImportPath: module + "/ad", Imports: []string{module + "/model", "fmt"}},  // up
		{ImportPath: module + "/density", Imports: []string{module + "/bijector"}}, // sideways
		{ImportPath: module + "/zoo", Imports: []string{module + "/ad"}},           // fine
		{ImportPath: module + "/mystery"},                                          // unknown
	}
	got := violations(pkgs)
	if len(got) != 3 {
		t.Fatalf("violations = %q, want 3 (ad→model, density→bijector, unknown mystery)", got)
	}
}

func rel(path string) string { return strings.TrimPrefix(strings.TrimPrefix(path, module), "/") }

// level finds the level of a package. Experimental x/… packages sit beside bench: they may use
// the whole library, and only the CLI may use them.
func level(name string) (int, bool) {
	if strings.HasPrefix(name, "x/") {
		return levels["bench"], true
	}
	lv, ok := levels[name]
	return lv, ok
}
