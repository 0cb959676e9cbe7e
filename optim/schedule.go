package optim

import "math"

// Schedule maps the number of completed steps k (0 for the first step) to a multiplier of an
// optimiser's base step size. Schedules are small values; the zero value of each is usable.
type Schedule interface {
	Scale(k int) float64
}

// Constant is the schedule 1.
type Constant struct{}

// Scale returns 1.
func (Constant) Scale(int) float64 { return 1 }

// ExpDecay multiplies the rate by Rate every Every steps: Rate^(k/Every), or
// Rate^⌊k/Every⌋ with Staircase (Keras's ExponentialDecay). Rate 0 means 1 (no decay);
// Every 0 means 1.
type ExpDecay struct {
	Rate      float64
	Every     int
	Staircase bool
}

// Scale returns Rate^(k/Every).
func (e ExpDecay) Scale(k int) float64 {
	if e.Rate == 0 {
		return 1
	}
	every := max(e.Every, 1)
	p := float64(k) / float64(every)
	if e.Staircase {
		p = float64(k / every)
	}
	return math.Pow(e.Rate, p)
}

// Cosine anneals from 1 to Min over Steps steps and stays at Min afterwards (Loshchilov &
// Hutter 2017, "SGDR", without restarts): Min + (1−Min)·½(1 + cos(π·min(k, Steps)/Steps)).
// Steps 0 means no annealing (scale 1).
type Cosine struct {
	Steps int
	Min   float64
}

// Scale returns the cosine multiplier at step k.
func (c Cosine) Scale(k int) float64 {
	if c.Steps <= 0 {
		return 1
	}
	x := float64(min(k, c.Steps)) / float64(c.Steps)
	return c.Min + (1-c.Min)*0.5*(1+math.Cos(math.Pi*x))
}

// Warmup ramps linearly, (k+1)/Steps for k < Steps, then follows Then shifted by Steps
// (Then.Scale(k−Steps)); nil Then means Constant. Steps 0 means no warm-up.
type Warmup struct {
	Steps int
	Then  Schedule
}

// Scale returns the warm-up multiplier at step k.
func (w Warmup) Scale(k int) float64 {
	if k < w.Steps {
		return float64(k+1) / float64(w.Steps)
	}
	if w.Then == nil {
		return 1
	}
	return w.Then.Scale(k - w.Steps)
}

// RobbinsMonro is the decreasing sequence ((1+T0)/(k+1+T0))^Kappa, i.e. 1/t^κ with
// t = k+1 when T0 = 0. Robbins & Monro (1951) convergence needs κ ∈ (½, 1]. Kappa 0 means 1.
type RobbinsMonro struct {
	Kappa float64
	T0    float64
}

// Scale returns the Robbins–Monro multiplier at step k.
func (r RobbinsMonro) Scale(k int) float64 {
	kappa := orDefault(r.Kappa, 1)
	return math.Pow((1+r.T0)/(float64(k)+1+r.T0), kappa)
}
