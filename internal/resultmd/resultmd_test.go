package resultmd

import (
	"strings"
	"testing"
	"time"
)

func TestWriteStatesTheRunAndLeavesOutTheUnknown(t *testing.T) {
	var b strings.Builder
	h := Header{Date: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC), Command: "vigo bench x", Commit: "abc", LoadStart: "1 1 1", LoadEnd: "2 2 2", Wall: 61 * time.Second, Machine: "2 fits in parallel"}
	if err := Write(&b, "Title", h); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Title\n\n", "- command: `vigo bench x`\n", "- commit: abc\n", "- date: 2026-01-02 03:04 UTC\n", "; 2 fits in parallel\n",
		"at start: 1 1 1; at end: 2 2 2.", "- wall time: 1m1s\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("header lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := Write(&b, "T", Header{}); err != nil {
		t.Fatal(err)
	}
	for _, no := range []string{"command", "commit", "date", "load", "wall"} {
		if strings.Contains(b.String(), "- "+no) {
			t.Errorf("empty header states %s:\n%s", no, b.String())
		}
	}
}
