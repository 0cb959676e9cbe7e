package stan

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Error is a diagnostic at a position of a Stan source file: a lexical, syntax or type error
// (or a warning, in Program.Warnings). Its Error method formats it as stanc does:
//
//	model.stan:12:9: Identifier 'sigmaa' not in scope.
//	   12 |   y ~ normal(mu, sigmaa);
//	      |                  ^
type Error struct {
	Pos Pos
	Msg string
	// Line is the offending source line (without its newline), "" when unknown.
	Line string
}

// Error returns "file:line:col: message", then the source line and a caret under the column.
func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:%d:%d: %s", e.Pos.File, e.Pos.Line, e.Pos.Col, e.Msg)
	if e.Line != "" {
		num := fmt.Sprintf("%d", e.Pos.Line)
		fmt.Fprintf(&b, "\n %s | %s\n %s | %s^", num, expandTabs(e.Line), strings.Repeat(" ", len(num)), caretPad(e.Line, e.Pos.Col))
	}
	return b.String()
}

// Errors is a list of diagnostics, in source order; its Error method joins them with blank
// lines. Parse and Check return one (as error) when there is at least one error.
type Errors []*Error

// Error formats every diagnostic.
func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n\n")
}

// expandTabs replaces tabs by single spaces so that caretPad's count matches the display.
func expandTabs(s string) string { return strings.ReplaceAll(s, "\t", " ") }

// caretPad is the run of spaces that puts a caret under column col (1-based, counted in
// characters, as the lexer counts) of line.
func caretPad(line string, col int) string {
	n := utf8.RuneCountInString(line)
	if col-1 > n {
		col = n + 1
	}
	if col < 1 {
		col = 1
	}
	return strings.Repeat(" ", col-1)
}

// sourceLine returns the 1-based line of src ("" when out of range).
func sourceLine(src []byte, line int) string {
	if line < 1 {
		return ""
	}
	for i := 1; i < line; i++ {
		j := bytes.IndexByte(src, '\n')
		if j < 0 {
			return ""
		}
		src = src[j+1:]
	}
	if j := bytes.IndexByte(src, '\n'); j >= 0 {
		src = src[:j]
	}
	return strings.TrimRight(string(src), "\r")
}
