package model

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/vigo-bayes/vigo/internal/textsafe"
)

// StanCSV is a draws file in Stan's CSV format as CmdStan writes it (CmdStan guide, "Stan CSV
// file format"):
//
//	# config lines ("key = value", indented by section)
//	lp__,accept_stat__,…,theta.1,theta.2
//	warmup rows (only with save_warmup)
//	# Adaptation terminated
//	# Step size = 0.8
//	# Diagonal elements of inverse mass matrix:
//	# 1.1, 0.9
//	draw rows
//	#  Elapsed Time: … (trailer)
//
// Method columns end in "__" and come first; container elements are flattened with dots in
// the file ("theta.1", "L.2.1") and held here in Stan's bracket notation ("theta[1]",
// "L[2,1]").
type StanCSV struct {
	// Config are the comment lines before the header, without "#" and one following space
	// (indentation is kept).
	Config []string
	// Names are the column names in bracket notation.
	Names []string
	// Warmup are saved warmup rows, row-major: Warmup[i·len(Names)+j] is column j of row i.
	Warmup []float64
	// Adaptation are the comment lines between the header (or the warmup rows) and the
	// draws: the adapted step size and metric.
	Adaptation []string
	// Draws are the rows after warmup, row-major.
	Draws []float64
	// Trailer are the comment lines after the first draw (timing).
	Trailer []string
}

// NumDraws returns the number of rows in Draws.
func (s *StanCSV) NumDraws() int {
	if len(s.Names) == 0 {
		return 0
	}
	return len(s.Draws) / len(s.Names)
}

// Index returns the position of the column called name (bracket or dotted form), or −1.
func (s *StanCSV) Index(name string) int {
	name = BracketName(name)
	for j, n := range s.Names {
		if n == name {
			return j
		}
	}
	return -1
}

// Column returns the draws of the column called name (bracket or dotted form), or nil.
func (s *StanCSV) Column(name string) []float64 {
	j := s.Index(name)
	if j < 0 {
		return nil
	}
	k := len(s.Names)
	col := make([]float64, s.NumDraws())
	for i := range col {
		col[i] = s.Draws[i*k+j]
	}
	return col
}

// ConfigValue returns the value of the first config line "key = value" (CmdStan's " (Default)"
// suffix removed) and whether there is one.
func (s *StanCSV) ConfigValue(key string) (string, bool) {
	for _, l := range s.Config {
		k, v, ok := strings.Cut(l, "=")
		if !ok || strings.TrimSpace(k) != key {
			continue
		}
		v = strings.TrimSpace(v)
		v = strings.TrimSpace(strings.TrimSuffix(v, "(Default)"))
		return v, true
	}
	return "", false
}

// DottedName turns Stan's "theta[1]" and "L[2,1]" into the CSV forms "theta.1" and "L.2.1".
func DottedName(name string) string {
	i := strings.IndexByte(name, '[')
	if i < 0 || !strings.HasSuffix(name, "]") {
		return name
	}
	return name[:i] + "." + strings.ReplaceAll(name[i+1:len(name)-1], ",", ".")
}

// validColumnName reports whether f is a Stan column name: an identifier (a letter, then
// letters, digits and underscores; lp__ and the sampler's columns included) followed by dotted
// unsigned-integer indices ("theta.1.2") or one bracketed list of them ("theta[1,2]").
// WriteStanCSV can write back exactly these names.
func validColumnName(f string) bool {
	i := 0
	for i < len(f) && (f[i] == '_' || f[i] >= 'a' && f[i] <= 'z' || f[i] >= 'A' && f[i] <= 'Z' || i > 0 && f[i] >= '0' && f[i] <= '9') {
		i++
	}
	if i == 0 || !(f[0] >= 'a' && f[0] <= 'z' || f[0] >= 'A' && f[0] <= 'Z') {
		return false
	}
	rest := f[i:]
	if strings.HasPrefix(rest, "[") && strings.HasSuffix(rest, "]") {
		rest = "," + rest[1:len(rest)-1]
	} else if rest != "" && rest[0] != '.' {
		return false
	}
	for rest != "" {
		j := 1
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j == 1 || (rest[0] != '.' && rest[0] != ',') {
			return false
		}
		rest = rest[j:]
	}
	return true
}

// BracketName is the inverse of DottedName: "L.2.1" → "L[2,1]". A name whose dotted suffix is
// not all unsigned integers is returned unchanged.
func BracketName(name string) string {
	parts := strings.Split(name, ".")
	if len(parts) < 2 {
		return name
	}
	for _, p := range parts[1:] {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return name
		}
	}
	return parts[0] + "[" + strings.Join(parts[1:], ",") + "]"
}

// WriteStanCSV writes s in CmdStan's layout: config comments, the dotted header, warmup rows,
// adaptation comments, draw rows, trailer comments. Numbers are written in the shortest form
// that reads back to the same float64 ("nan", "inf", "-inf" as Stan writes them), so a file
// round-trips exactly and equal draws give equal bytes.
func WriteStanCSV(w io.Writer, s *StanCSV) error {
	k := len(s.Names)
	if k == 0 || len(s.Warmup)%k != 0 || len(s.Draws)%k != 0 {
		return fmt.Errorf("model: WriteStanCSV: %d warmup and %d draw values for %d columns", len(s.Warmup), len(s.Draws), k)
	}
	bw := bufio.NewWriter(w)
	comments := func(lines []string) {
		for _, line := range lines {
			for l := range strings.SplitSeq(line, "\n") {
				bw.WriteByte('#')
				if l != "" {
					bw.WriteByte(' ')
					bw.WriteString(l)
				}
				bw.WriteByte('\n')
			}
		}
	}
	var buf []byte
	rows := func(v []float64) {
		for i := 0; i < len(v); i += k {
			buf = buf[:0]
			for j, x := range v[i : i+k] {
				if j > 0 {
					buf = append(buf, ',')
				}
				buf = AppendStanFloat(buf, x)
			}
			buf = append(buf, '\n')
			bw.Write(buf)
		}
	}
	comments(s.Config)
	for j, n := range s.Names {
		if j > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString(DottedName(n))
	}
	bw.WriteByte('\n')
	rows(s.Warmup)
	comments(s.Adaptation)
	rows(s.Draws)
	comments(s.Trailer)
	return bw.Flush()
}

// AppendStanFloat appends x in the shortest form that parses back to x, with Stan's spelling
// of non-finite values (nan, inf, -inf).
func AppendStanFloat(b []byte, x float64) []byte {
	switch {
	case math.IsNaN(x):
		return append(b, "nan"...)
	case math.IsInf(x, 1):
		return append(b, "inf"...)
	case math.IsInf(x, -1):
		return append(b, "-inf"...)
	}
	return strconv.AppendFloat(b, x, 'g', -1, 64)
}

// LoadStanCSV reads the Stan CSV file at path. See ReadStanCSV.
func LoadStanCSV(path string) (*StanCSV, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("model: LoadStanCSV: %w", err)
	}
	defer f.Close()
	return ReadStanCSV(path, f)
}

// ReadStanCSV reads a Stan CSV file, vigo's or CmdStan's (any method). The first line that is
// not a comment is the header, and it must be column names: a header field that is a number
// literal (starting with a digit, a sign or a dot: "1.5", "-2", ".3e4"), or a header made of
// numbers only (nan and inf included), is an error naming the line, so a file without a
// header is not read with its first draw as the names; every later non-comment line is a row with as many numbers as
// the header has names (Stan's nan, inf and -inf included). Rows before a "# Adaptation
// terminated" comment are warmup; so are the first ⌈num_warmup/thin⌉ rows of a file whose
// config says save_warmup = 1 (or true) but that has no adaptation comment. Comments after
// the header and before the draws are Adaptation, comments after the first draw Trailer.
// name is used in error messages, which give the line.
func ReadStanCSV(name string, r io.Reader) (*StanCSV, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 256<<20)
	s := &StanCSV{}
	line := 0
	adapted := false
	var rowsSinceHeader []float64
	fail := func(format string, a ...any) error {
		return fmt.Errorf("model: ReadStanCSV %s: line %d: %s", name, line, fmt.Sprintf(format, a...))
	}
	for sc.Scan() {
		line++
		t := strings.TrimRight(sc.Text(), "\r")
		if strings.HasPrefix(t, "#") {
			c := strings.TrimPrefix(strings.TrimPrefix(t, "#"), " ")
			switch {
			case s.Names == nil:
				s.Config = append(s.Config, c)
			case !adapted && strings.Contains(c, "Adaptation terminated"):
				adapted = true
				s.Warmup = rowsSinceHeader
				rowsSinceHeader = nil
				s.Adaptation = append(s.Adaptation, c)
			case len(rowsSinceHeader) == 0:
				s.Adaptation = append(s.Adaptation, c)
			default:
				s.Trailer = append(s.Trailer, c)
			}
			continue
		}
		if strings.TrimSpace(t) == "" {
			continue
		}
		fields := strings.Split(t, ",")
		if s.Names == nil {
			numbers := 0
			for j, f := range fields {
				f = strings.TrimSpace(f)
				if f == "" {
					return nil, fail("column %d of the header has no name", j+1)
				}
				if isNumber(f) {
					numbers++
					if strings.ContainsRune("0123456789+-.", rune(f[0])) {
						return nil, fail("the header's column %d is the number %q, not a name: the file has no header line (a Stan CSV file starts with a line of column names, e.g. lp__,theta)", j+1, clip(f))
					}
				}
				if numbers == 0 && !validColumnName(f) {
					return nil, fail("the header's column %d is \"%s\", not a Stan name (an identifier, then .1.2 or [1,2] indices)", j+1, textsafe.String(clip(f)))
				}
				s.Names = append(s.Names, BracketName(f))
			}
			if numbers == len(fields) {
				return nil, fail("the header line is all numbers (%q): the file has no header line (a Stan CSV file starts with a line of column names, e.g. lp__,theta)", clip(t))
			}
			continue
		}
		if len(fields) != len(s.Names) {
			return nil, fail("%d fields, the header has %d", len(fields), len(s.Names))
		}
		for j, f := range fields {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return nil, fail("column %s: %q is not a number", textsafe.String(DottedName(s.Names[j])), clip(f))
			}
			rowsSinceHeader = append(rowsSinceHeader, v)
		}
	}
	if err := sc.Err(); err != nil {
		line++
		return nil, fail("%v", err)
	}
	if s.Names == nil {
		return nil, fmt.Errorf("model: ReadStanCSV %s: no header line", name)
	}
	s.Draws = rowsSinceHeader
	if !adapted {
		s.splitWarmupByConfig()
	}
	return s, nil
}

// splitWarmupByConfig moves the saved warmup rows of a file without an adaptation comment
// (adaptation off) from Draws to Warmup, using its config.
func (s *StanCSV) splitWarmupByConfig() {
	save, _ := s.ConfigValue("save_warmup")
	if save != "1" && save != "true" {
		return
	}
	nw, err := strconv.Atoi(valueOr(s, "num_warmup", "0"))
	if err != nil || nw <= 0 {
		return
	}
	thin, err := strconv.Atoi(valueOr(s, "thin", "1"))
	if err != nil || thin <= 0 {
		thin = 1
	}
	rows := nw / thin // ⌈nw/thin⌉ without the overflow of (nw+thin−1)/thin at nw near MaxInt
	if nw%thin != 0 {
		rows++
	}
	n := min(rows, s.NumDraws()) * len(s.Names)
	s.Warmup, s.Draws = s.Draws[:n:n], s.Draws[n:]
}

// isNumber reports whether f parses as a float64, Stan's nan, inf and -inf included.
func isNumber(f string) bool {
	_, err := strconv.ParseFloat(f, 64)
	return err == nil || errors.Is(err, strconv.ErrRange)
}

func valueOr(s *StanCSV, key, def string) string {
	if v, ok := s.ConfigValue(key); ok {
		return v
	}
	return def
}
