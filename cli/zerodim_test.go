package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/model"
)

// noParamsModel is a user's model with no parameters: an empty layout and a constant density.
func noParamsModel() Model {
	return Model{Name: "empty", About: "no parameters", New: func(*model.Data) (*model.Model, error) {
		lay, err := model.NewLayout()
		if err != nil {
			return nil, err
		}
		return &model.Model{Layout: lay, Density: func(t *ad.Tape, _ []ad.Var) ad.Var { return t.Const(0) }}, nil
	}}
}

// TestFitModelWithoutParameters: vigo fit (every family) and vigo fit --auto on a user's model
// with no parameters exit 1 with a message naming the dimension, not a panic or a stack
// trace.
func TestFitModelWithoutParameters(t *testing.T) {
	for _, args := range [][]string{
		{"fit", "empty"},
		{"fit", "empty", "--family", "fullrank"},
		{"fit", "empty", "--family", "lowrank"},
		{"fit", "empty", "--family", "maf"},
		{"fit", "empty", "--family", "auto"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var stdout, stderr bytes.Buffer
		args = append(args, "--out", t.TempDir())
		code := Run(ctx, args, &stdout, &stderr, noParamsModel())
		cancel()
		msg := stderr.String()
		if code != 1 || !strings.Contains(msg, "target dimension 0: a target needs at least one parameter") || strings.Contains(msg, "goroutine") {
			t.Errorf("vigo %s: exit %d, stderr:\n%s\nwant exit 1 and the dimension named", strings.Join(args, " "), code, msg)
		}
	}
}
