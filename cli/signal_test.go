package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigo-bayes/vigo/ad"
	"github.com/vigo-bayes/vigo/model"
)

// stuckModel is a model whose log density never returns: a fit of it ignores cancellation, as
// a target stuck in a long computation does. New says "ready" on stderr first, after Main has
// installed its signal handlers.
var stuckModel = Model{
	Name: "stuck",
	New: func(*model.Data) (*model.Model, error) {
		lay, err := model.NewLayout(model.Param{Name: "mu"})
		if err != nil {
			return nil, err
		}
		fmt.Fprintln(os.Stderr, "stuck model: ready")
		return &model.Model{Layout: lay, Density: func(tp *ad.Tape, p []ad.Var) ad.Var {
			for {
				time.Sleep(time.Hour)
			}
		}}, nil
	},
}

// TestHelperMainSignals runs Main with the arguments in VIGO_SIGNAL_ARGS and the stuck model,
// and exits with its code; the signal tests start the test binary as a subprocess for it.
func TestHelperMainSignals(t *testing.T) {
	args := os.Getenv("VIGO_SIGNAL_ARGS")
	if args == "" {
		t.Skip("subprocess helper for the signal tests")
	}
	os.Exit(Main(strings.Split(args, "\x1f"), stuckModel))
}

// mainProc is Main running in a subprocess, with its stderr read line by line.
type mainProc struct {
	t      *testing.T
	ctx    context.Context
	cmd    *exec.Cmd
	lines  chan string
	stderr strings.Builder
}

// startMain starts Main in a subprocess with args. The test fails if the process has not exited
// within a deadline.
func startMain(t *testing.T, args ...string) *mainProc {
	t.Helper()
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperMainSignals$")
	cmd.Env = append(os.Environ(), "VIGO_SIGNAL_ARGS="+strings.Join(args, "\x1f"))
	cmd.WaitDelay = 5 * time.Second
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &mainProc{t: t, ctx: ctx, cmd: cmd, lines: make(chan string)}
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	return p
}

// waitFor reads stderr until a line contains s.
func (p *mainProc) waitFor(s string) {
	p.t.Helper()
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("vigo %v exited without saying %q:\n%s", p.cmd.Args, s, p.stderr.String())
			}
			p.stderr.WriteString(l + "\n")
			if strings.Contains(l, s) {
				return
			}
		case <-p.ctx.Done():
			p.t.Fatalf("vigo %v did not say %q before the test's deadline:\n%s", p.cmd.Args, s, p.stderr.String())
		}
	}
}

// signal sends sig to the process.
func (p *mainProc) signal(sig os.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatal(err)
	}
}

// wait waits for the process to exit and returns its exit code and whole stderr.
func (p *mainProc) wait() (int, string) {
	p.t.Helper()
	for l := range p.lines {
		p.stderr.WriteString(l + "\n")
	}
	err := p.cmd.Wait()
	if p.ctx.Err() != nil {
		p.t.Fatalf("vigo did not exit before the test's deadline:\n%s", p.stderr.String())
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		p.t.Fatal(err)
	}
	return p.cmd.ProcessState.ExitCode(), p.stderr.String()
}

// SIGTERM takes the graceful path of Ctrl-C: the sampler stops, writes the draws made so far and
// exits 130.
func TestSIGTERMWritesPartialResultsAndExits130(t *testing.T) {
	dir := t.TempDir()
	p := startMain(t, "sample", "--chains", "2", "--warmup", "500000", "--draws", "10", "--out", dir)
	p.waitFor("sampling eight_schools") // printed after Main installed its handlers
	p.signal(syscall.SIGTERM)
	code, stderr := p.wait()
	if code != ExitCancelled || !strings.Contains(stderr, "cancelled: wrote the") {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitCancelled, stderr)
	}
	for c := 1; c <= 2; c++ {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("eight_schools-%d.csv", c))); err != nil {
			t.Errorf("partial draws of chain %d: %v", c, err)
		}
	}
}

// A second Ctrl-C exits at once, even when the run does not heed the first (a target stuck in
// its log density).
func TestSecondInterruptExitsAtOnce(t *testing.T) {
	p := startMain(t, "fit", "stuck", "-q", "--out", t.TempDir())
	p.waitFor("stuck model: ready")
	p.signal(os.Interrupt)
	p.waitFor("stopping and writing the partial results") // the first is handled
	p.signal(os.Interrupt)
	code, stderr := p.wait()
	if code != ExitCancelled || !strings.Contains(stderr, "exiting now") {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, ExitCancelled, stderr)
	}
}
