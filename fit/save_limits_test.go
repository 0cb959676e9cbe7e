package fit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/family"
)

// savedJSON is a saved fit of the small model with family fam, as a generic JSON object.
func savedJSON(t *testing.T, fam family.Family) map[string]any {
	t.Helper()
	_, s, _ := savedFit(t, fam)
	var buf bytes.Buffer
	if err := s.Write(&buf); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func readJSON(t *testing.T, m map[string]any) error {
	t.Helper()
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Read("fit.json", bytes.NewReader(b))
	return err
}

// allocated runs f and returns the bytes it allocated.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// A small file that claims a huge dimension (or rank, or flow size) gets the parameter-count
// error without building the family: before, dim 20,000 allocated gigabytes first, dim 1e6 ran
// out of memory and dim 3e9 panicked in makeslice.
func TestReadHugeSizesFailBeforeAllocating(t *testing.T) {
	flowFile, err := os.ReadFile(filepath.Join("testdata", "fitv2", "maf.json"))
	if err != nil {
		t.Fatal(err)
	}
	type edit struct {
		name string
		file func() map[string]any
		set  func(m map[string]any)
		want string
	}
	fam := func(m map[string]any) map[string]any { return m["family"].(map[string]any) }
	var cases []edit
	for _, d := range []float64{2e4, 1e6, 3e9, 4e18} {
		for _, mk := range []func() family.Family{
			func() family.Family { return family.NewMeanField(5) },
			func() family.Family { return family.NewFullRank(5) },
			func() family.Family { return family.NewLowRank(5, 2) },
		} {
			cases = append(cases, edit{fmt.Sprintf("%T dim %g", mk(), d), func() map[string]any { return savedJSON(t, mk()) },
				func(m map[string]any) { fam(m)["dim"] = d }, `field "params"`})
		}
		cases = append(cases, edit{fmt.Sprintf("flow dim %g", d), func() map[string]any {
			var m map[string]any
			if err := json.Unmarshal(flowFile, &m); err != nil {
				t.Fatal(err)
			}
			return m
		}, func(m map[string]any) { fam(m)["dim"] = d }, `field "params"`})
	}
	cases = append(cases,
		edit{"lowrank rank 1e6", func() map[string]any { return savedJSON(t, family.NewLowRank(5, 2)) },
			func(m map[string]any) { fam(m)["rank"] = 1e6 }, `field "family.rank"`},
		edit{"lowrank rank 5", func() map[string]any { return savedJSON(t, family.NewLowRank(5, 2)) },
			func(m map[string]any) { fam(m)["rank"] = 5 }, `field "params"`},
		edit{"flow hidden 16384", func() map[string]any {
			var m map[string]any
			if err := json.Unmarshal(flowFile, &m); err != nil {
				t.Fatal(err)
			}
			return m
		}, func(m map[string]any) {
			part := fam(m)["flow"].(map[string]any)["parts"].([]any)[0].(map[string]any)
			part["made"].(map[string]any)["hidden"] = []any{16384, 16384, 16384}
		}, `field "params"`},
		edit{"layout dims 1e9", func() map[string]any { return savedJSON(t, family.NewMeanField(5)) },
			func(m map[string]any) { m["layout"].([]any)[0].(map[string]any)["dims"] = []any{1e9, 1e9} }, `field "layout"`},
	)
	for _, c := range cases {
		m := c.file()
		c.set(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var rerr error
		n := allocated(func() { _, rerr = Read("fit.json", bytes.NewReader(b)) })
		if rerr == nil || !strings.Contains(rerr.Error(), c.want) {
			t.Errorf("%s: error %v, want %s", c.name, rerr, c.want)
		}
		if limit := 64*uint64(len(b)) + 1<<20; n > limit {
			t.Errorf("%s: Read of %d bytes allocated %d bytes, want at most %d", c.name, len(b), n, limit)
		}
	}
}

// A null in a number array of fit.json is an error naming the field and the index, not 0.
func TestReadRefusesNull(t *testing.T) {
	for _, field := range []string{"params", "shift", "scale", "unconstrained_mean", "unconstrained_sd"} {
		m := savedJSON(t, family.NewMeanField(5))
		m[field].([]any)[1] = nil
		err := readJSON(t, m)
		want := fmt.Sprintf("field %q: value 1 is null", field)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s[1] = null: error %v, want %q", field, err, want)
		}
	}
	// NaN diagnostics are written as null and still load.
	m := savedJSON(t, family.NewMeanField(5))
	m["diagnostics"].(map[string]any)["elbo_mcse"] = nil
	if err := readJSON(t, m); err != nil {
		t.Errorf("null diagnostic: %v", err)
	}
}

// A scale parameter that is finite but overflows (or underflows) its positivity map makes q
// unusable: Read refuses it, naming the parameter, for every Gaussian family and both maps.
func TestReadRefusesUnusableScales(t *testing.T) {
	sp := family.WithPositivity(family.Softplus)
	for _, c := range []struct {
		fam   family.Family
		index int // of a raw scale parameter
	}{
		{family.NewMeanField(5), 5 + 2},
		{family.NewMeanField(5, sp), 5 + 2},
		{family.NewFullRank(5), 5 + 2},
		{family.NewLowRank(5, 2), 5 + 10 + 2},
		{family.NewLowRank(5, 2, sp), 5 + 10 + 2},
	} {
		for _, v := range []float64{800, 1e308, -800, -1e308} {
			if v > 0 && c.fam.(interface{ Positivity() family.Positivity }).Positivity() == family.Softplus {
				continue // softplus(v) ≈ v is a finite scale: a wide q, not an unusable one
			}
			m := savedJSON(t, c.fam)
			m["params"].([]any)[c.index] = v
			err := readJSON(t, m)
			want := fmt.Sprintf("field \"params\": value %d (the scale of coordinate 2)", c.index)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%T params[%d] = %g: error %v, want %q", c.fam, c.index, v, err, want)
			}
		}
	}
	// A mean or an affine scale that overflows the draws.
	m := savedJSON(t, family.NewMeanField(5))
	m["params"].([]any)[0] = 1.7e308
	m["shift"].([]any)[0] = 1.7e308
	if err := readJSON(t, m); err == nil || !strings.Contains(err.Error(), "q is not usable") {
		t.Errorf("mean 1.7e308 + shift 1.7e308: error %v, want q is not usable", err)
	}
}

// A flow whose own scale overflows (ω of family.Flow, the last d parameters) is refused.
func TestReadRefusesUnusableFlow(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "fitv2", "maf.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if err := readJSON(t, m); err != nil {
		t.Fatal(err)
	}
	p := m["params"].([]any)
	p[len(p)-1] = 800.0
	if err := readJSON(t, m); err == nil || !strings.Contains(err.Error(), "q is not usable") {
		t.Errorf("flow log-scale 800: error %v, want q is not usable", err)
	}
}

// A full-rank scale must be lower triangular: an entry above the diagonal is an error naming it.
func TestReadRefusesUpperTriangle(t *testing.T) {
	m := savedJSON(t, family.NewFullRank(5))
	if m["scale_is_diagonal"].(bool) {
		t.Fatal("test setup: the full-rank fit has a diagonal scale")
	}
	m["scale"].([]any)[1*5+3] = 0.5
	err := readJSON(t, m)
	want := `field "scale": value 8 (row 1, column 3) is 0.5 above the diagonal`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("scale[1][3] = 0.5: error %v, want %q", err, want)
	}
}
