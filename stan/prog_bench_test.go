package stan

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/model"
)

// BenchmarkProgramGradient times one gradient of a few posteriordb programs (one tape reused,
// as a fit does), from posteriordb-full, with loops compiled in lanes and as loops.
func BenchmarkProgramGradient(b *testing.B) {
	shared := datadir.SharedOrSkip(b)
	root := filepath.Join(shared, "data", "posteriordb-full")
	for _, name := range []string{"arK-arK", "garch-garch11", "hmm_example-hmm_example", "bball_drive_event_0-hmm_drive_0", "low_dim_gauss_mix-low_dim_gauss_mix", "eight_schools-eight_schools_noncentered", "kidiq-kidscore_momhsiq"} {
		b.Run(name, func(b *testing.B) {
			info, err := model.LoadPosteriorInfo(filepath.Join(root, "posteriors", name+".json"))
			if err != nil {
				b.Skip(err)
			}
			src, err := os.ReadFile(filepath.Join(root, "models", info.ModelName+".stan"))
			if err != nil {
				b.Skip(err)
			}
			data, err := model.LoadData(filepath.Join(root, "data", info.DataName+".json.zip"))
			if err != nil {
				b.Skip(err)
			}
			prog, err := Parse(info.ModelName+".stan", src)
			if err != nil {
				b.Fatal(err)
			}
			if err := prog.Check(Builtins()); err != nil {
				b.Fatal(err)
			}
			for _, lanes := range []bool{false, true} {
				b.Run(map[bool]string{false: "loops", true: "lanes"}[lanes], func(b *testing.B) {
					cp, err := compileProgramLanes(prog, data, lanes)
					if err != nil {
						b.Fatal(err)
					}
					m, err := cp.model()
					if err != nil {
						b.Fatal(err)
					}
					z := make([]float64, m.Dim())
					for i := range z {
						z[i] = 0.1 * float64(i%5-2)
					}
					g := make([]float64, m.Dim())
					var t ad.Tape
					model.Gradient(&t, m, z, g)
					b.ReportAllocs()
					b.ResetTimer()
					for range b.N {
						model.Gradient(&t, m, z, g)
					}
				})
			}
		})
	}
}
