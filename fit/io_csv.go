package fit

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// StanCSV is a draws file in Stan's CSV format (CmdStan guide, "Stan CSV file format"): '#'
// comment lines with the configuration, one header row of column names, one row per draw.
// Method columns end in "__" and come first; container elements are flattened with dots
// ("theta.1", "L.2.1") where Stan's own notation has brackets ("theta[1]", "L[2,1]").
type StanCSV struct {
	// Comments are the header lines without their leading "# ".
	Comments []string
	// Names are the column names in Stan's bracket notation; WriteStanCSV writes them dotted
	// and ReadStanCSV returns them in brackets again.
	Names []string
	// Values are the draws, row-major: Values[i*len(Names)+j] is column j of draw i.
	Values []float64
}

// Rows returns the number of draws.
func (c *StanCSV) Rows() int {
	if len(c.Names) == 0 {
		return 0
	}
	return len(c.Values) / len(c.Names)
}

// Column returns the values of the column called name (bracket or dotted form), or nil.
func (c *StanCSV) Column(name string) []float64 {
	name = BracketName(name)
	for j, n := range c.Names {
		if n == name {
			col := make([]float64, c.Rows())
			for i := range col {
				col[i] = c.Values[i*len(c.Names)+j]
			}
			return col
		}
	}
	return nil
}

// DottedName turns Stan's "theta[1]" and "L[2,1]" into the CSV forms "theta.1" and "L.2.1".
func DottedName(name string) string {
	i := strings.IndexByte(name, '[')
	if i < 0 || !strings.HasSuffix(name, "]") {
		return name
	}
	return name[:i] + "." + strings.ReplaceAll(name[i+1:len(name)-1], ",", ".")
}

// BracketName is the inverse of DottedName: "L.2.1" → "L[2,1]". A name whose dotted suffix is
// not all positive integers is returned unchanged.
func BracketName(name string) string {
	parts := strings.Split(name, ".")
	if len(parts) < 2 {
		return name
	}
	for _, p := range parts[1:] {
		if p == "" {
			return name
		}
		for _, r := range p {
			if r < '0' || r > '9' {
				return name
			}
		}
	}
	return parts[0] + "[" + strings.Join(parts[1:], ",") + "]"
}

// WriteStanCSV writes c: the comments, the dotted header, then the rows with each number in
// the shortest form that reads back to the same float64 ("nan", "inf" and "-inf" as Stan
// writes them). The output is a pure function of c, so equal draws give equal bytes.
func WriteStanCSV(w io.Writer, c *StanCSV) error {
	k := len(c.Names)
	if k == 0 || len(c.Values)%k != 0 {
		return fmt.Errorf("fit: WriteStanCSV: %d values for %d columns", len(c.Values), k)
	}
	bw := bufio.NewWriter(w)
	for _, line := range c.Comments {
		for _, l := range strings.Split(line, "\n") {
			bw.WriteString("#")
			if l != "" {
				bw.WriteString(" ")
				bw.WriteString(l)
			}
			bw.WriteByte('\n')
		}
	}
	for j, n := range c.Names {
		if j > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString(DottedName(n))
	}
	bw.WriteByte('\n')
	var buf []byte
	for i := 0; i < len(c.Values); i += k {
		buf = buf[:0]
		for j, v := range c.Values[i : i+k] {
			if j > 0 {
				buf = append(buf, ',')
			}
			buf = appendStanFloat(buf, v)
		}
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	return bw.Flush()
}

func appendStanFloat(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v):
		return append(b, "nan"...)
	case math.IsInf(v, 1):
		return append(b, "inf"...)
	case math.IsInf(v, -1):
		return append(b, "-inf"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// ReadStanCSV reads a Stan CSV file (vigo's, or CmdStan's: comment lines anywhere, the first
// other line is the header). Every row must have as many numbers as the header has names.
// name is used in error messages, which give the line.
func ReadStanCSV(name string, r io.Reader) (*StanCSV, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	c := &StanCSV{}
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimRight(sc.Text(), "\r")
		if strings.HasPrefix(s, "#") {
			c.Comments = append(c.Comments, strings.TrimPrefix(strings.TrimPrefix(s, "#"), " "))
			continue
		}
		if strings.TrimSpace(s) == "" {
			continue
		}
		fields := strings.Split(s, ",")
		if c.Names == nil {
			for j, f := range fields {
				f = strings.TrimSpace(f)
				if f == "" {
					return nil, fmt.Errorf("fit: ReadStanCSV %s: line %d: column %d has an empty name", name, line, j+1)
				}
				c.Names = append(c.Names, BracketName(f))
			}
			continue
		}
		if len(fields) != len(c.Names) {
			return nil, fmt.Errorf("fit: ReadStanCSV %s: line %d: %d fields, header has %d", name, line, len(fields), len(c.Names))
		}
		for j, f := range fields {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return nil, fmt.Errorf("fit: ReadStanCSV %s: line %d: column %s: %q is not a number", name, line, DottedName(c.Names[j]), f)
			}
			c.Values = append(c.Values, v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("fit: ReadStanCSV %s: line %d: %w", name, line+1, err)
	}
	if c.Names == nil {
		return nil, fmt.Errorf("fit: ReadStanCSV %s: no header line", name)
	}
	return c, nil
}
