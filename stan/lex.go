package stan

import (
	"fmt"
)

// tokKind is the lexical class of a token.
type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tInt
	tReal
	tString
	tPunct // operators and punctuation; the token's text says which
)

// token is one lexical token.
type token struct {
	kind tokKind
	text string
	pos  Pos
	off  int // byte offset in the source
	end  Pos // the position just past the token
}

// puncts are the operator and punctuation tokens, longest first within each starting
// character (the lexer takes the longest match).
var puncts = []string{
	"%/%", ".*=", "./=",
	"||", "&&", "==", "!=", "<=", ">=", "+=", "-=", "*=", "/=", ".*", "./", ".^",
	"{", "}", "(", ")", "[", "]", "<", ">", ",", ";", "=", "~", "?", ":", "!", "+", "-", "*",
	"/", "%", "\\", "^", "'", "|",
}

// lexer turns source bytes into tokens. Lexical errors are collected, the offending character
// skipped, so that the parser sees the rest of the file.
type lexer struct {
	file      string
	src       []byte
	off       int
	line, col int
	errs      *diag
	// hashWarned is set once a '#' comment was seen (warned about once per file).
	hashWarned bool
}

func newLexer(file string, src []byte, d *diag) *lexer {
	return &lexer{file: file, src: src, line: 1, col: 1, errs: d}
}

func (lx *lexer) pos() Pos { return Pos{File: lx.file, Line: lx.line, Col: lx.col} }

// advance moves past n bytes, tracking lines and columns.
func (lx *lexer) advance(n int) {
	for i := 0; i < n && lx.off < len(lx.src); i++ {
		if lx.src[lx.off] == '\n' {
			lx.line++
			lx.col = 1
		} else if lx.src[lx.off]&0xC0 != 0x80 { // count UTF-8 continuation bytes as no column
			lx.col++
		}
		lx.off++
	}
}

func (lx *lexer) peekByte(k int) byte {
	if lx.off+k < len(lx.src) {
		return lx.src[lx.off+k]
	}
	return 0
}

// skipSpace skips white space and comments.
func (lx *lexer) skipSpace() {
	for lx.off < len(lx.src) {
		c := lx.src[lx.off]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			lx.advance(1)
		case c == '/' && lx.peekByte(1) == '/':
			for lx.off < len(lx.src) && lx.src[lx.off] != '\n' {
				lx.advance(1)
			}
		case c == '#':
			if rest := lx.src[lx.off:]; len(rest) >= 8 && string(rest[:8]) == "#include" {
				lx.errs.add(lx.pos(), "#include is not supported: put the included file's text in the program.")
			} else if !lx.hashWarned {
				lx.hashWarned = true
				lx.errs.warn(lx.pos(), "Comments beginning with # are deprecated; use // instead.")
			}
			for lx.off < len(lx.src) && lx.src[lx.off] != '\n' {
				lx.advance(1)
			}
		case c == '/' && lx.peekByte(1) == '*':
			p := lx.pos()
			lx.advance(2)
			closed := false
			for lx.off < len(lx.src) {
				if lx.src[lx.off] == '*' && lx.peekByte(1) == '/' {
					lx.advance(2)
					closed = true
					break
				}
				lx.advance(1)
			}
			if !closed {
				lx.errs.add(p, "Comment not terminated.")
			}
		default:
			return
		}
	}
}

func isLetter(c byte) bool { return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }
func isDigit(c byte) bool  { return '0' <= c && c <= '9' }

// next returns the next token, with the position just past its end.
func (lx *lexer) next() token {
	t := lx.next1()
	t.end = lx.pos()
	return t
}

func (lx *lexer) next1() token {
	for {
		lx.skipSpace()
		p := lx.pos()
		start := lx.off
		if lx.off >= len(lx.src) {
			return token{kind: tEOF, pos: p, off: start}
		}
		c := lx.src[lx.off]
		switch {
		case isLetter(c):
			n := 1
			for lx.off+n < len(lx.src) && (isLetter(lx.src[lx.off+n]) || isDigit(lx.src[lx.off+n])) {
				n++
			}
			lx.advance(n)
			return token{kind: tIdent, text: string(lx.src[start:lx.off]), pos: p, off: start}
		case isDigit(c) || (c == '.' && isDigit(lx.peekByte(1))):
			return lx.number(p)
		case c == '"':
			lx.advance(1)
			for lx.off < len(lx.src) && lx.src[lx.off] != '"' && lx.src[lx.off] != '\n' {
				if lx.src[lx.off] == '\\' && lx.off+1 < len(lx.src) && lx.src[lx.off+1] != '\n' {
					lx.advance(1)
				}
				lx.advance(1)
			}
			if lx.off >= len(lx.src) || lx.src[lx.off] != '"' {
				lx.errs.add(p, "String literal not terminated.")
				return token{kind: tString, text: string(lx.src[start+1 : lx.off]), pos: p, off: start}
			}
			lx.advance(1)
			return token{kind: tString, text: string(lx.src[start+1 : lx.off-1]), pos: p, off: start}
		}
		for _, pu := range puncts {
			if lx.off+len(pu) <= len(lx.src) && string(lx.src[lx.off:lx.off+len(pu)]) == pu {
				lx.advance(len(pu))
				return token{kind: tPunct, text: pu, pos: p, off: start}
			}
		}
		if c >= 0x80 {
			lx.errs.add(p, "Invalid character found (non-ASCII characters are allowed only in comments and strings).")
		} else {
			lx.errs.add(p, fmt.Sprintf("Invalid character found: %q.", rune(c)))
		}
		lx.advance(1)
		for lx.off < len(lx.src) && lx.src[lx.off]&0xC0 == 0x80 {
			lx.advance(1)
		}
	}
}

// number lexes an integer or real literal: digits, digits '.' digits? exponent?,
// '.' digits exponent?, digits exponent.
func (lx *lexer) number(p Pos) token {
	start := lx.off
	n := 0
	for isDigit(lx.peekByte(n)) {
		n++
	}
	real := false
	if lx.peekByte(n) == '.' { // longest match, as stanc3: 2.*x is 2. * x
		real = true
		n++
		for isDigit(lx.peekByte(n)) {
			n++
		}
	}
	if e := lx.peekByte(n); e == 'e' || e == 'E' {
		k := n + 1
		if s := lx.peekByte(k); s == '+' || s == '-' {
			k++
		}
		if isDigit(lx.peekByte(k)) {
			for isDigit(lx.peekByte(k)) {
				k++
			}
			n = k
			real = true
		}
	}
	lx.advance(n)
	kind := tInt
	if real {
		kind = tReal
	}
	return token{kind: kind, text: string(lx.src[start:lx.off]), pos: p, off: start}
}

// diag collects errors and warnings.
type diag struct {
	src      []byte
	errs     Errors
	warnings []*Error
}

const maxErrors = 50

func (d *diag) add(p Pos, msg string) {
	if len(d.errs) >= maxErrors {
		return
	}
	for _, e := range d.errs {
		if e.Pos == p { // one error per position: recovery often re-reports the same spot
			return
		}
	}
	d.errs = append(d.errs, &Error{Pos: p, Msg: msg, Line: sourceLine(d.src, p.Line)})
}

func (d *diag) warn(p Pos, msg string) {
	if len(d.warnings) >= maxErrors {
		return
	}
	d.warnings = append(d.warnings, &Error{Pos: p, Msg: msg, Line: sourceLine(d.src, p.Line)})
}
