package stan

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigo-bayes/vigo/internal/datadir"
)

// The committed floors of the posteriordb corpus check (raise them as support grows): the
// number of the 147 posteriors that parse, type-check, load their data, and match rstan's log
// density (with and without Jacobian), gradient and constrained values (CheckPosterior).
const (
	floorParsed  = 0
	floorChecked = 0
	floorLoaded  = 0
	floorPass    = 0
)

func TestCorpus(t *testing.T) {
	shared := datadir.SharedOrSkip(t)
	root := filepath.Join(shared, "data", "posteriordb-full")
	names, err := Posteriors(root)
	if err != nil || len(names) == 0 {
		t.Skipf("no posteriordb-full snapshot at %s (%v)", root, err)
	}
	var parsed, checked, loaded, pass int
	var b strings.Builder
	for _, n := range names {
		r := CheckPosterior(root, n)
		if r.Parsed {
			parsed++
		}
		if r.Checked {
			checked++
		}
		if r.Loaded {
			loaded++
		}
		if r.Pass() {
			pass++
		}
		fmt.Fprintf(&b, "%-60s parse=%v check=%v data=%v lp=%v grad=%v values=%v %s%s\n", n, r.Parsed, r.Checked, r.Loaded, r.LP, r.Grad, r.Values, r.Skip, r.Err)
	}
	t.Logf("posteriordb corpus (%d posteriors):\n%s", len(names), b.String())
	t.Logf("parsed %d, checked %d, loaded %d, lp+grad+values %d", parsed, checked, loaded, pass)
	for _, c := range []struct {
		what      string
		got, want int
	}{{"parsed", parsed, floorParsed}, {"checked", checked, floorChecked}, {"loaded", loaded, floorLoaded}, {"passed", pass, floorPass}} {
		if c.got < c.want {
			t.Errorf("%s %d posteriors, below the committed floor %d", c.what, c.got, c.want)
		}
	}
}
