package apovi

import (
	"strings"
	"testing"
)

// TestEarlyStopHand: values worked by hand from the thesis's rule.
func TestEarlyStopHand(t *testing.T) {
	e := EarlyStop{Min: 3, Ref: 1, Smooth: 2}
	l := []float64{10, 9, 8, 7, 6.99, 6.98}
	// len 5 (i = 4 > 3): c = (7 + 6.99)/2 = 6.995, r = (8 + 7)/2 = 7.5, |r − c| = 0.505 ≥ 0.075.
	if e.Stop(l[:5]) {
		t.Error("stopped at i = 4")
	}
	// len 6: c = 6.985, r = 6.995, |r − c| = 0.01 < 0.06995.
	if !e.Stop(l) {
		t.Error("did not stop at i = 5")
	}
	// A flat history stops at the first index past Min, never at Min itself.
	flat := []float64{1, 1, 1, 1, 1, 1}
	if e.Stop(flat[:4]) {
		t.Error("flat: stopped at i = Min")
	}
	if !e.Stop(flat[:5]) {
		t.Error("flat: did not stop at i = Min + 1")
	}
	// The threshold is relative: a loss near 0 with the same absolute change does not stop.
	// l stops with |r − c| = 0.01; near0 has the same steps 0.01 but r = 0.095, so 0.01 ≥ 0.00095.
	near0 := []float64{0.4, 0.3, 0.2, 0.1, 0.09, 0.08}
	if e.Stop(near0) {
		t.Error("threshold is not relative to |r|")
	}
	// A negative loss (−ELBO/N < 0) uses |r|.
	neg := []float64{-10, -9, -8, -7, -6.99, -6.98}
	if !e.Stop(neg) {
		t.Error("negative losses: did not stop")
	}
	// Thresh 0.2: at len 5, |r − c| = 0.505 < 0.2·7.5 = 1.5.
	if !(EarlyStop{Min: 3, Ref: 1, Smooth: 2, Thresh: 0.2}).Stop(l[:5]) {
		t.Error("Thresh 0.2 ignored")
	}
	if (EarlyStop{}).Stop(flat) {
		t.Error("the zero EarlyStop stopped")
	}
}

// TestEarlyStopShortHistory: with Ref + Smooth > len (possible when Ref + Smooth > Min + 2),
// Python's slice starts at 0 and the sum is still divided by Smooth.
func TestEarlyStopShortHistory(t *testing.T) {
	e := EarlyStop{Min: 4, Ref: 3, Smooth: 3}
	l := []float64{1, 1, 1, 1, 1, 1} // len 6, i = 5: r = l[0:3] summed / 3 = 1, c = 1
	if !e.Stop(l) {
		t.Error("flat: no stop")
	}
	e = EarlyStop{Min: 4, Ref: 3, Smooth: 4}
	// len 6: slice [-7:-3] = l[0:3] (three values), r = 3/4 = 0.75, c = 1: |r − c| = 0.25 ≥ 0.0075.
	if e.Stop(l) {
		t.Error("short reference window treated as full")
	}
	if got := pySlice([]float64{1, 2, 3}, -2, 0); len(got) != 0 {
		t.Errorf("v[-2:0] = %v, want empty", got)
	}
	if got := pySlice([]float64{1, 2, 3}, -5, -1); len(got) != 2 || got[0] != 1 {
		t.Errorf("v[-5:-1] = %v, want [1 2]", got)
	}
}

func TestEarlyStopValidate(t *testing.T) {
	for _, c := range []struct {
		e     EarlyStop
		field string
	}{
		{EarlyStop{Min: 100, Ref: 100, Smooth: 10}, "Ref"},
		{EarlyStop{Min: 100, Ref: 10, Smooth: 100}, "Smooth"},
		{EarlyStop{Min: 100, Ref: 10, Smooth: 0}, "Smooth"},
		{EarlyStop{Min: -1}, "Min"},
		{EarlyStop{Min: 10, Ref: 1, Smooth: 1, Thresh: -1}, "Thresh"},
	} {
		if err := c.e.Validate(); err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%+v: %v, want an error naming %s", c.e, err, c.field)
		}
	}
	for _, e := range []EarlyStop{{}, {Min: 1000, Ref: 500, Smooth: 500}, {Min: 2000, Ref: 300, Smooth: 500}, {Min: 500, Ref: 100, Smooth: 100}} {
		if err := e.Validate(); err != nil {
			t.Errorf("%+v: %v", e, err)
		}
	}
}
