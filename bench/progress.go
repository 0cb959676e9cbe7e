package bench

import (
	"fmt"
)

// ProgressLine is the one-line account of a run that vigo bench posteriordb prints as it goes.
func (r SeedResult) ProgressLine() string {
	if r.Err != nil {
		return fmt.Sprintf("%s %s seed %d: aborted after %.1fs: %v", r.Posterior, r.Method, r.Seed, r.Wall.Seconds(), r.Err)
	}
	return fmt.Sprintf("%s %s seed %d: %.1fs, %d grad evals, k̂ %.2f, W1/sd %.3g, sd ratio %.3g (%s)",
		r.Posterior, r.Method, r.Seed, r.Wall.Seconds(), r.GradEvals, r.KHat, r.W1SD, r.SDRatio, r.Status)
}

// ProgressLine is the one-line account of a run that vigo bench nuts prints as it goes.
func (c *NUTSCheck) ProgressLine() string {
	if c.Err != nil {
		return fmt.Sprintf("%s seed %d: aborted: %v", c.Posterior, c.Seed, c.Err)
	}
	return fmt.Sprintf("%s seed %d: %.1fs, %d grad evals, W1/sd %.4f, max |Δmean|/MCSE %.2f; %s",
		c.Posterior, c.Seed, c.Wall.Seconds(), c.GradEvals, c.W1SD, c.MaxMeanZ, c.Status())
}
