package ad

import (
	"fmt"
	"math"

	"github.com/vigo-bayes/vigo/internal/mathx"
)

// binary records an elementwise binary op with broadcasting of a length-1 operand.
func (t *Tape) binary(o op, a, b Var) (Var, *node, []float64, []float64) {
	na, nb := len(t.nd(a).val), len(t.nd(b).val)
	n := na
	if na != nb {
		switch {
		case na == 1:
			n = nb
		case nb == 1:
		default:
			panic(fmt.Sprintf("ad: elementwise op on sizes %d and %d", na, nb))
		}
	}
	rows, cols := n, 1
	if n == na {
		rows, cols = t.Shape(a)
	} else {
		rows, cols = t.Shape(b)
	}
	v, nd := t.newNode(o, a.id, b.id, rows, cols)
	return v, nd, t.nodes[a.id].val, t.nodes[b.id].val
}

// at returns x[i] with length-1 broadcasting.
func at(x []float64, i int) float64 {
	if len(x) == 1 {
		return x[0]
	}
	return x[i]
}

// Add returns a + b elementwise (a length-1 operand broadcasts).
func (t *Tape) Add(a, b Var) Var {
	v, n, x, y := t.binary(opAdd, a, b)
	switch {
	case len(x) == len(y):
		y = y[:len(x)]
		for i := range x {
			n.val[i] = x[i] + y[i]
		}
	case len(x) == 1:
		for i, yi := range y {
			n.val[i] = x[0] + yi
		}
	default:
		for i, xi := range x {
			n.val[i] = xi + y[0]
		}
	}
	return v
}

// Sub returns a − b elementwise.
func (t *Tape) Sub(a, b Var) Var {
	v, n, x, y := t.binary(opSub, a, b)
	switch {
	case len(x) == len(y):
		y = y[:len(x)]
		for i := range x {
			n.val[i] = x[i] - y[i]
		}
	case len(x) == 1:
		for i, yi := range y {
			n.val[i] = x[0] - yi
		}
	default:
		for i, xi := range x {
			n.val[i] = xi - y[0]
		}
	}
	return v
}

// Mul returns a ⊙ b elementwise.
func (t *Tape) Mul(a, b Var) Var {
	v, n, x, y := t.binary(opMul, a, b)
	if len(x) == len(y) {
		y = y[:len(x)]
		for i := range x {
			n.val[i] = x[i] * y[i]
		}
		return v
	}
	for i := range n.val {
		n.val[i] = at(x, i) * at(y, i)
	}
	return v
}

// Div returns a / b elementwise.
func (t *Tape) Div(a, b Var) Var {
	v, n, x, y := t.binary(opDiv, a, b)
	for i := range n.val {
		n.val[i] = at(x, i) / at(y, i)
	}
	return v
}

// Pow returns a^b elementwise. ∂/∂a = b·a^(b−1), ∂/∂b = a^b·log a.
func (t *Tape) Pow(a, b Var) Var {
	v, n, x, y := t.binary(opPow, a, b)
	for i := range n.val {
		n.val[i] = math.Pow(at(x, i), at(y, i))
	}
	return v
}

func (t *Tape) unary(o op, a Var) (Var, *node, []float64) {
	r, c := t.Shape(a)
	v, n := t.newNode(o, a.id, -1, r, c)
	return v, n, t.nodes[a.id].val
}

// AddC returns a + c for a constant c.
func (t *Tape) AddC(a Var, c float64) Var {
	v, n, x := t.unary(opAddC, a)
	n.c = c
	for i, xi := range x {
		n.val[i] = xi + c
	}
	return v
}

// MulC returns c·a for a constant c.
func (t *Tape) MulC(a Var, c float64) Var {
	v, n, x := t.unary(opMulC, a)
	n.c = c
	for i, xi := range x {
		n.val[i] = xi * c
	}
	return v
}

// PowC returns a^c for a constant exponent c.
func (t *Tape) PowC(a Var, c float64) Var {
	v, n, x := t.unary(opPowC, a)
	n.c = c
	for i, xi := range x {
		n.val[i] = math.Pow(xi, c)
	}
	return v
}

// Neg returns −a.
func (t *Tape) Neg(a Var) Var {
	v, n, x := t.unary(opNeg, a)
	for i, xi := range x {
		n.val[i] = -xi
	}
	return v
}

// unaryFunc records y = f(x) elementwise for the ops whose backward rule is in chain.
func (t *Tape) unaryFunc(o op, a Var, f func(float64) float64) Var {
	v, n, x := t.unary(o, a)
	for i, xi := range x {
		n.val[i] = f(xi)
	}
	return v
}

// Exp returns eᵃ.
func (t *Tape) Exp(a Var) Var { return t.unaryFunc(opExp, a, math.Exp) }

// Log returns log a.
func (t *Tape) Log(a Var) Var { return t.unaryFunc(opLog, a, math.Log) }

// Log1p returns log(1+a), accurate for small a.
func (t *Tape) Log1p(a Var) Var { return t.unaryFunc(opLog1p, a, math.Log1p) }

// Expm1 returns eᵃ−1, accurate for small a.
func (t *Tape) Expm1(a Var) Var { return t.unaryFunc(opExpm1, a, math.Expm1) }

// Sqrt returns √a.
func (t *Tape) Sqrt(a Var) Var { return t.unaryFunc(opSqrt, a, math.Sqrt) }

// Square returns a².
func (t *Tape) Square(a Var) Var {
	v, n, x := t.unary(opSquare, a)
	for i, xi := range x {
		n.val[i] = xi * xi
	}
	return v
}

// Abs returns |a|; its derivative at 0 is taken as 0.
func (t *Tape) Abs(a Var) Var { return t.unaryFunc(opAbs, a, math.Abs) }

// Softplus returns log(1+eᵃ), computed without overflow.
func (t *Tape) Softplus(a Var) Var { return t.unaryFunc(opSoftplus, a, mathx.Log1pExp) }

// Sigmoid returns 1/(1+e⁻ᵃ).
func (t *Tape) Sigmoid(a Var) Var { return t.unaryFunc(opSigmoid, a, mathx.Logistic) }

// LogSigmoid returns log σ(a) = −softplus(−a).
func (t *Tape) LogSigmoid(a Var) Var { return t.unaryFunc(opLogSigmoid, a, mathx.LogLogistic) }

// Tanh returns tanh a.
func (t *Tape) Tanh(a Var) Var { return t.unaryFunc(opTanh, a, math.Tanh) }

// Relu returns max(a, 0); its derivative at 0 is taken as 0.
func (t *Tape) Relu(a Var) Var {
	v, n, x := t.unary(opRelu, a)
	for i, xi := range x {
		n.val[i] = max(xi, 0)
	}
	return v
}

// Lgamma returns log|Γ(a)|; ∂/∂a = ψ(a) (digamma).
func (t *Tape) Lgamma(a Var) Var { return t.unaryFunc(opLgamma, a, mathx.Lgamma) }

// Map records a custom elementwise function y = f(a): it returns the new node, its value
// slice and a slice for dy/da, both of len(a), for the caller to fill before the next op.
// This is the elementwise counterpart of Fused.
func (t *Tape) Map(a Var) (y Var, val, deriv []float64) {
	v, n, _ := t.unary(opMap, a)
	n.aux = t.mem.allocZero(len(n.val))
	return v, n.val, n.aux
}
