package model_test

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/mcmc"
	"github.com/vigo-bayes/vigo/model"
)

// FuzzStanCSVSamplerColumns reads arbitrary Stan CSV text and then does what vigo summary
// does with a sampler's file: the sampler columns (mcmc.StatsFromCSV, with max_depth and
// engine from the config), every column by name, and a write–read round trip. None of it may
// panic; the columns must have one value per draw; the round trip must keep the names and the
// number of draws.
//
// Run: go test -fuzz FuzzStanCSVSamplerColumns ./model
func FuzzStanCSVSamplerColumns(f *testing.F) {
	hdr := strings.Join(mcmc.SamplerColumns, ",") + ",theta\n"
	row := "-7.1,0.9,0.8,2,3,0,7.5,0.3\n"
	f.Add("# max_depth = 10\n" + hdr + row + row)
	f.Add("# engine = static\n" + hdr + row)
	f.Add("# save_warmup = 1\n# num_warmup = 1\n# thin = 1\n" + hdr + row + "# Adaptation terminated\n# Step size = 0.8\n" + row)
	f.Add("# save_warmup = 1\n# num_warmup = 3\n" + hdr + row + row)
	f.Add("# save_warmup = true\n# num_warmup = 9223372036854775807\n# thin = 2\n" + hdr + row)
	// A crasher: ⌈num_warmup/thin⌉ overflowed to a negative row count (slice bounds panic).
	f.Add("# save_warmup = true\n# num_warmup = 9223372036854775807\n# thin = 2\na,b\n1,2\n")
	f.Add("# max_depth = 99999999999999999999\n" + hdr + "nan,inf,-inf,1e308,-1e308,1,nan,2\n")
	f.Add(hdr)
	f.Fuzz(func(t *testing.T, s string) {
		c, err := model.ReadStanCSV("fuzz", strings.NewReader(s))
		if err != nil {
			return
		}
		k := len(c.Names)
		if k == 0 || len(c.Draws)%k != 0 || len(c.Warmup)%k != 0 {
			t.Fatalf("%d names, %d draw values, %d warmup values", k, len(c.Draws), len(c.Warmup))
		}
		n := c.NumDraws()
		if n*k != len(c.Draws) {
			t.Fatalf("NumDraws %d × %d names ≠ %d values", n, k, len(c.Draws))
		}
		for _, name := range c.Names {
			if col := c.Column(name); len(col) != n {
				t.Fatalf("column %q: %d values, want %d", name, len(col), n)
			}
		}
		stats, _, ok := mcmc.StatsFromCSV(c)
		if ok && len(stats) != n {
			t.Fatalf("%d sampler stats for %d draws", len(stats), n)
		}
		var buf bytes.Buffer
		if err := model.WriteStanCSV(&buf, c); err != nil {
			return
		}
		c2, err := model.ReadStanCSV("fuzz-rewritten", &buf)
		if err != nil {
			t.Fatalf("rewritten file unreadable: %v\n%s", err, buf.String())
		}
		if !slices.Equal(c2.Names, c.Names) {
			t.Fatalf("names %q → %q", c.Names, c2.Names)
		}
		all := func(s *model.StanCSV) []float64 { return append(slices.Clone(s.Warmup), s.Draws...) }
		if !slices.EqualFunc(all(c2), all(c), func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }) {
			t.Fatalf("values change in the round trip: %v → %v", all(c), all(c2))
		}
	})
}
