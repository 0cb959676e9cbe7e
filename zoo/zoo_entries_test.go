package zoo

import "testing"

// TestEntriesUnique: every zoo model has its own short name and posteriordb posterior, so that
// lookup by either is unambiguous (the old init() registry panicked on a duplicate name).
func TestEntriesUnique(t *testing.T) {
	names, posts := map[string]bool{}, map[string]bool{}
	for _, e := range entries() {
		if names[e.Name] || posts[e.Posterior] || e.build == nil {
			t.Errorf("entry %q (posterior %q): duplicate or without a constructor", e.Name, e.Posterior)
		}
		names[e.Name], posts[e.Posterior] = true, true
	}
	if len(names) != 12 {
		t.Errorf("%d models, want the 12 public posteriordb posteriors", len(names))
	}
}
