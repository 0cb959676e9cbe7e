// Package resultmd writes the first lines of every result table under bench/results: what ran,
// where, when and how loaded the machine was, in one format for all of them.
package resultmd

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// Header is what a result table's first lines say about the run that made it. Every
// benchmark's Markdown writes it through Write, so that all of bench/results/*.md state
// the same facts in the same words.
type Header struct {
	Date      time.Time
	Command   string // the exact command line
	Commit    string // git commit of the binary or checkout
	LoadStart string // /proc/loadavg at the start ("" if unknown)
	LoadEnd   string
	// Wall is the run's wall time (0: not stated).
	Wall time.Duration
	// Machine adds words to the machine line on how the run used the cores, e.g. "2 fits in
	// parallel" ("": nothing).
	Machine string
}

// New starts the header of a run that begins now: the date and the load average.
func New(command, commit string) Header {
	return Header{Date: time.Now(), Command: command, Commit: commit, LoadStart: LoadAvg()}
}

// Done records the end of the run: the load average now and the wall time since h.Date.
func (h *Header) Done() {
	h.LoadEnd = LoadAvg()
	h.Wall = time.Since(h.Date)
}

// LoadAvg returns the 1-, 5- and 15-minute load averages from /proc/loadavg, or "unknown".
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// Write writes a result table's title line "# title", a blank line, and one bullet
// line each for the command, the commit, the date (UTC, to the minute), the machine (CPUs,
// GOMAXPROCS, OS/architecture, Go version, then h.Machine), the load averages at the start and
// the end, and the wall time. Lines whose value is unknown (empty, or a zero Wall) are left out.
// It writes no blank line after the bullets, so that a caller can add its own.
func Write(w io.Writer, title string, h Header) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", title)
	if h.Command != "" {
		fmt.Fprintf(&b, "- command: `%s`\n", h.Command)
	}
	if h.Commit != "" {
		fmt.Fprintf(&b, "- commit: %s\n", h.Commit)
	}
	if !h.Date.IsZero() {
		fmt.Fprintf(&b, "- date: %s\n", h.Date.UTC().Format("2006-01-02 15:04 MST"))
	}
	fmt.Fprintf(&b, "- machine: %d CPUs, GOMAXPROCS %d, %s/%s, %s", runtime.NumCPU(), runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH, runtime.Version())
	if h.Machine != "" {
		fmt.Fprintf(&b, "; %s", h.Machine)
	}
	b.WriteString("\n")
	if h.LoadStart != "" || h.LoadEnd != "" {
		fmt.Fprintf(&b, "- load average (1, 5, 15 min) at start: %s; at end: %s. The machine is shared: wall times are indicative.\n", orUnknown(h.LoadStart), orUnknown(h.LoadEnd))
	}
	if h.Wall > 0 {
		fmt.Fprintf(&b, "- wall time: %s\n", h.Wall.Round(time.Second))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// Commit returns the commit the running binary was built from (Go's VCS stamp), else the
// HEAD of the git checkout around the working directory, with "+dirty" for uncommitted
// changes; "unknown" without either. It is what Header.Commit states.
func Commit() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
		if rev != "" {
			return rev + dirty
		}
	}
	b, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	rev := strings.TrimSpace(string(b))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
		rev += "+dirty"
	}
	return rev
}
