// Package textsafe makes text that comes from a file safe to print. A Stan CSV header, a
// comment line or a JSON key is the file author's text; echoed raw, an ESC or CSI sequence in
// it would drive the reader's terminal (move the cursor, rewrite earlier lines, change the
// title, …) and a bidirectional override would reorder what the reader sees. vigo's printers
// of file content (the summary tables in every format, the Stan CSV reader's errors) pass such
// text through String or Text, always — not only when writing to a terminal — so that a file
// written today is safe to cat tomorrow and output does not depend on where it goes. No name
// a Stan model can declare contains any of the replaced runes, so valid input is unchanged.
package textsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// String returns s with every rune that is not safe on a terminal replaced by a visible Go
// escape: C0 controls (tab and newline included) and DEL as \xNN, C1 controls (U+0080–U+009F)
// and the bidirectional embedding, override and isolate controls (U+202A–U+202E,
// U+2066–U+2069) as \uNNNN, and each byte of invalid UTF-8 as \xNN. A backslash is left as
// it is, so the result is for reading, not for parsing back. Cost O(len(s)); s itself is
// returned when it needs no change.
func String(s string) string { return clean(s, false) }

// Text is String for multi-line text: it keeps newlines and tabs.
func Text(s string) string { return clean(s, true) }

func clean(s string, keepLines bool) string {
	if !needs(s, keepLines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !unsafeRune(r, keepLines):
			b.WriteString(s[i : i+n])
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

func needs(s string, keepLines bool) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || unsafeRune(r, keepLines) {
			return true
		}
		i += n
	}
	return false
}

func unsafeRune(r rune, keepLines bool) bool {
	switch {
	case keepLines && (r == '\n' || r == '\t'):
		return false
	case unicode.IsControl(r): // C0, DEL, C1
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}
