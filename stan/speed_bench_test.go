package stan

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/model"
	"github.com/vigo-bayes/vigo/zoo"
)

// BenchmarkStanVsZoo times, in the same run and interleaved, one gradient of each of the 12
// zoo models and of its posteriordb Stan program compiled by this package (optimised), at the
// point vigo bench stan uses (u ~ U(−2, 2)^d, fixed seed). Each iteration is one gradient of
// each; they alternate in chunks of 64, each chunk timed by the process's CPU time, so load
// from other processes that comes and goes affects both columns alike. Metrics: zoo-cpu-ns/op,
// stan-cpu-ns/op and stan/zoo (the issue-15 goal is stan/zoo ≤ 2).
func BenchmarkStanVsZoo(b *testing.B) {
	shared := datadir.SharedOrSkip(b)
	full := filepath.Join(shared, "data", "posteriordb-full")
	pub := filepath.Join(shared, "data", "posteriordb")
	for _, name := range zoo.Names() {
		b.Run(name, func(b *testing.B) {
			zm, err := zoo.Load(name, pub)
			if err != nil {
				b.Skip(err)
			}
			info, err := model.LoadPosteriorInfo(filepath.Join(full, "posteriors", zm.Posterior+".json"))
			if err != nil {
				b.Skip(err)
			}
			src, err := os.ReadFile(filepath.Join(full, "models", info.ModelName+".stan"))
			if err != nil {
				b.Skip(err)
			}
			data, err := model.LoadData(zm.Info.DataPath(pub))
			if err != nil {
				b.Fatal(err)
			}
			prog, err := Parse(info.ModelName+".stan", src)
			if err != nil {
				b.Fatal(err)
			}
			if err := prog.Check(Builtins()); err != nil {
				b.Fatal(err)
			}
			cp, err := compileProgramOpt(prog, data, true)
			if err != nil {
				b.Fatal(err)
			}
			sm, err := cp.model()
			if err != nil {
				b.Fatal(err)
			}
			if sm.Dim() != zm.Dim() {
				b.Fatalf("dimension %d, zoo %d", sm.Dim(), zm.Dim())
			}
			r := rand.New(rand.NewPCG(20261202, 1))
			z := make([]float64, sm.Dim())
			for i := range z {
				z[i] = 4*r.Float64() - 2
			}
			g := make([]float64, sm.Dim())
			var tz, ts ad.Tape
			model.Gradient(&tz, zm, z, g)
			model.Gradient(&ts, sm, z, g)
			b.ResetTimer()
			var nsZoo, nsStan int64
			const chunk = 64
			for done := 0; done < b.N; done += chunk {
				k := min(chunk, b.N-done)
				c0 := cpuTime()
				for range k {
					model.Gradient(&tz, zm, z, g)
				}
				c1 := cpuTime()
				for range k {
					model.Gradient(&ts, sm, z, g)
				}
				c2 := cpuTime()
				nsZoo += c1 - c0
				nsStan += c2 - c1
			}
			b.ReportMetric(float64(nsZoo)/float64(b.N), "zoo-cpu-ns/op")
			b.ReportMetric(float64(nsStan)/float64(b.N), "stan-cpu-ns/op")
			if nsZoo > 0 {
				b.ReportMetric(float64(nsStan)/float64(nsZoo), "stan/zoo")
			}
		})
	}
}
