package textsafe

import "testing"

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"theta[1]":                "theta[1]",
		"θ_ünïcode":               "θ_ünïcode",
		"\x1b[2J\x1b]0;owned\x07": `\x1b[2J\x1b]0;owned\x07`,
		"a\u009b31mb":             `a\u009b31mb`,
		"x\u202eevil":             `x\u202eevil`,
		"tab\there\nline":         `tab\x09here\x0aline`,
		"del\x7f":                 `del\x7f`,
		"bad\xffutf8":             `bad\xffutf8`,
		"":                        "",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := Text("line 1\n\tline 2\x1b[A"), "line 1\n\tline 2\\x1b[A"; got != want {
		t.Errorf("Text = %q, want %q", got, want)
	}
}
