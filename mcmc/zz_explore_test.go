package mcmc_test

import (
	"context"
	"testing"

	"github.com/vigo-bayes/vigo/internal/datadir"
	"github.com/vigo-bayes/vigo/mcmc"
	"github.com/vigo-bayes/vigo/zoo"
)

func TestZZExploreZoo(t *testing.T) {
	dir := datadir.PosteriorDBOrSkip(t)
	for _, name := range zoo.Names() {
		m, err := zoo.Load(name, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, seed := range []uint64{1, 2} {
			res, err := mcmc.Sample(context.Background(), m, mcmc.Config{Seed: seed, Draws: 1})
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			for c, ch := range res.Chains {
				if len(ch.Restarts) > 0 || ch.Stuck != "" || len(ch.Notes) > 0 {
					t.Logf("%s seed %d chain %d: %q %q %q", name, seed, c+1, ch.Restarts, ch.Stuck, ch.Notes)
				}
			}
			t.Logf("%s seed %d: grads %d", name, seed, res.GradEvals)
		}
	}
}
