package stan

import (
	"strings"

	"github.com/vigo-bayes/vigo/ad"
)

// Density statements of the univariate continuous families with a package-density fast path
// (y ~ normal(0, 10), target += student_t_lpdf(x | 3, 0, 2.5), …), compiled without the
// general call path: the arguments are evaluated into a fixed array instead of the
// evaluation's argument stack, numeric literal parameters are constants checked once at
// compile time, and the density node is recorded directly. The node and its value are the
// built-in's (contEval's fast path): only the per-statement overhead goes, which is a large
// part of a small model's gradient (priors over a few parameters).

// contFamilyOf returns the continuous family whose _lpdf or _lupdf sig is, when it has a
// density fast path (uniform, with its extra bound check, is left to the built-in).
func contFamilyOf(sig *Sig, name string) *contFamily {
	if sig == nil || sig.Fn == nil {
		return nil
	}
	base := strings.TrimSuffix(strings.TrimSuffix(name, "_lpdf"), "_lupdf")
	if base == name {
		return nil
	}
	for i := range contFamilies {
		f := &contFamilies[i]
		if f.name != base || f.fast == nil || f.name == "uniform" || len(sig.Args) != f.np+1 {
			continue
		}
		for _, a := range sig.Args {
			if a.Class != Reals {
				return nil
			}
		}
		return f
	}
	return nil
}

// numLiteral returns the value of a numeric literal (possibly negated or parenthesised).
func numLiteral(e Expr) (float64, bool) {
	switch e := e.(type) {
	case *Paren:
		return numLiteral(e.X)
	case *IntLit:
		return float64(e.Value), true
	case *RealLit:
		return e.Value, true
	case *Unary:
		if e.Name == "minus" {
			x, ok := numLiteral(e.X)
			return -x, ok
		}
	}
	return 0, false
}

// contStmt compiles y ~ d(args…) or target += d_lpdf(y | args…) (or _lupdf) for the family fam
// of d: nil, nil when a literal parameter fails its check (the statement as written then
// reports the error at run time). Messages name d_lpdf, as the built-in's do for _lupdf too.
func (c *compiler) contStmt(pos Pos, fam *contFamily, yE Expr, argEs []Expr) (execFn, error) {
	if c.plain || len(argEs) != fam.np {
		return nil, nil
	}
	name := fam.name + "_lpdf"
	y, err := c.expr(yE)
	if err != nil {
		return nil, err
	}
	var args [3]evalFn
	var lits [3]float64
	var isLit [3]bool
	// Real variables are read from their cells directly (no closure call, no Value copy).
	var slots [4]int
	for j, e := range append([]Expr{yE}, argEs...) {
		slots[j] = c.realVarSlot(e)
	}
	for j, e := range argEs {
		if x, ok := numLiteral(e); ok {
			if checkVals(name, fam.labels[j+1], fam.checks[j+1], []float64{x}, false) != nil {
				return nil, nil
			}
			lits[j], isLit[j] = x, true
			continue
		}
		if args[j], err = c.expr(e); err != nil {
			return nil, err
		}
	}
	np := fam.np
	// Statically at most one container among y and the parameters: their sizes cannot
	// disagree, so the size check is skipped.
	containers := 0
	for _, e := range append([]Expr{yE}, argEs...) {
		if !e.Info().Type.IsScalar() {
			containers++
		}
	}
	sizeCheck := containers > 1
	c.conts++
	return func(f *frame) (ctl, error) {
		t := f.st.t
		var vars [4]ad.Var
		var cont [4]bool
		n := 1
		for j := range np + 1 {
			if j > 0 && isLit[j-1] {
				continue
			}
			if slots[j] >= 0 {
				x, dims := f.realVar(slots[j])
				vars[j], cont[j] = x, len(dims) > 0
				if cont[j] {
					n = t.Size(x)
				}
				continue
			}
			var v Value
			var err error
			if j == 0 {
				v, err = y(f)
			} else {
				v, err = args[j-1](f)
			}
			if err != nil {
				return ctlNext, err
			}
			vars[j], cont[j] = laneRealVar(t, v), isContainer(v)
			if cont[j] {
				n = v.Len()
			}
		}
		if sizeCheck {
			// commonSize's check and message; literal parameters are scalars and take no
			// part in it.
			first := -1
			for j := range np + 1 {
				if !cont[j] {
					continue
				}
				m := t.Size(vars[j])
				if first < 0 {
					n, first = m, j
				} else if m != n {
					return ctlNext, withPos(pos, errf(name, "size of %s (%d) and size of %s (%d) must match in size", fam.labels[first], n, fam.labels[j], m))
				}
			}
		}
		for j := range np + 1 {
			if j > 0 && isLit[j-1] {
				vars[j] = t.Const(lits[j-1])
				continue
			}
			if err := checkVals(name, fam.labels[j], fam.checks[j], t.Value(vars[j]), cont[j]); err != nil {
				return ctlNext, withPos(pos, err)
			}
		}
		if n == 0 {
			f.st.target = append(f.st.target, t.Const(0))
			return ctlNext, nil
		}
		f.st.target = append(f.st.target, fam.fast(t, vars[0], [3]ad.Var(vars[1:4])))
		return ctlNext, nil
	}, nil
}

// realVarSlot returns the frame slot of e when it is a real-valued variable of the frame (a
// real scalar or container: its cell never holds ints), else −1.
func (c *compiler) realVarSlot(e Expr) int {
	id, ok := e.(*Ident)
	if !ok || id.Fun != nil || id.Decl == nil || id.Decl.Type.Base == Int || id.Decl.Type.Base == Void || id.Decl.Type.Base == Func {
		return -1
	}
	if s, ok := c.cur.slot[id.Decl]; ok {
		return s
	}
	return -1
}

// realVar returns the node and dims of the real variable in cell i (as read returns them,
// without copying the Value).
func (f *frame) realVar(i int) (ad.Var, []int) {
	c := &f.cells[i]
	if c.elems != nil && c.stale {
		v := f.read(i)
		return v.Var, v.Dims
	}
	return c.v.Var, c.v.Dims
}
