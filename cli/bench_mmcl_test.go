package cli

import (
	"strings"
	"testing"
)

// TestBenchMMCLFlags: bad numbers are refused with the flag's name before any data is read,
// and a missing MNIST directory is an error naming it.
func TestBenchMMCLFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--budgets", "-1"}, "--budgets"},
		{[]string{"--subsets", "0"}, "--subsets"},
		{[]string{"--ls", "10,0"}, "--ls"},
		{[]string{"--lr", "-0.1"}, "--lr"},
		{[]string{"--mnist", "/no/such/mnist"}, "/no/such/mnist"},
	} {
		_, err := run(t, append([]string{"bench", "mmcl", "--out", "-"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %s", c.args, err, c.want)
		}
	}
}
