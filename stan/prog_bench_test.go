package stan

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/model"
)

// BenchmarkProgramGradient times one gradient of a few posteriordb programs (one tape reused,
// as a fit does), from posteriordb-full, optimised (loops in lanes, linear predictors
// fused) and compiled as written.
func BenchmarkProgramGradient(b *testing.B) {
	shared := datadir.SharedOrSkip(b)
	root := filepath.Join(shared, "data", "posteriordb-full")
	for _, name := range []string{"arK-arK", "garch-garch11", "hmm_example-hmm_example", "bball_drive_event_0-hmm_drive_0", "bball_drive_event_1-hmm_drive_1", "low_dim_gauss_mix-low_dim_gauss_mix", "eight_schools-eight_schools_noncentered", "kidiq-kidscore_momhsiq", "earnings-logearn_interaction", "nes2000-nes"} {
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
				b.Run(map[bool]string{false: "plain", true: "optimised"}[lanes], func(b *testing.B) {
					cp, err := compileProgramOpt(prog, data, lanes)
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
					c0 := cpuTime()
					for range b.N {
						model.Gradient(&t, m, z, g)
					}
					// CPU time of the process per gradient: on a shared machine, wall time
					// per op also counts the time other processes held the CPU.
					b.ReportMetric(float64(cpuTime()-c0)/float64(b.N), "cpu-ns/op")
				})
			}
		})
	}
}

// cpuTime is the process's user + system CPU time in nanoseconds.
func cpuTime() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
