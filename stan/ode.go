package stan

import (
	"math"

	"github.com/vigo-bayes/vigo/ad"
)

// ODE solvers.
//
// Every solver integrates the initial value problem y' = f(t, y, θ), y(t0) = y0 with the
// adaptive Dormand–Prince 5(4) pair (Dormand & Prince 1980, "A family of embedded Runge–Kutta
// formulae", J. Comp. Appl. Math. 6; Hairer, Nørsett & Wanner, "Solving Ordinary Differential
// Equations I", §II.5, the step-size controller of §II.4), together with the forward
// sensitivity equations S' = J_y S + J_θ for S = ∂y/∂(y0, θ) (Hairer et al. §I.14), where
// J_y and J_θ come from reverse-mode passes over the user's right-hand side evaluated on a
// separate tape (one pass per state component). The solution at the output times is one
// Custom node whose partials are S, so the tape records one node per solve.
//
// The _bdf and _adams variants use the same explicit solver: the posteriordb programs that
// call them (one_comp_mm_elim_abs: one state with Michaelis–Menten elimination) are not stiff,
// but their values then agree with Stan's CVODES solution only to the tolerances. The error is
// controlled on the state and the sensitivities together, at the caller's tolerances (Stan's
// defaults 1e-6, 1e-6 and 1e6 steps).

// odeProblem is one call of an ODE solver.
type odeProblem struct {
	c    *Ctx
	name string // the built-in, for errors
	fn   string // the user's right-hand side
	n    int    // states
	// params are the parameter-dependent inputs whose sensitivities are computed, in order:
	// the initial state (if not data) and each parameter-dependent real argument.
	params []ad.Var
	m      int // total size of params
	y0Sens bool
	// mkArgs builds the right-hand side's arguments on tape t2 from (t, y) and the inputs.
	mkArgs func(t2 *ad.Tape, t float64, y []float64) ([]Value, ad.Var, []ad.Var)
	t2     *ad.Tape
	jy, jp []float64 // Jacobians of the last evaluation (n×n, n×(m−n·y0Sens))
}

// rhs writes dz/dt for the augmented state z = [y, S] (S row-major n×m) into dz.
func (p *odeProblem) rhs(t float64, z, dz []float64) error {
	n, m := p.n, p.m
	t2 := p.t2
	t2.Reset()
	args, yv, pv := p.mkArgs(t2, t, z[:n])
	out, err := p.c.Call(t2, p.fn, args)
	if err != nil {
		return err
	}
	if out.Len() != n {
		return errf(p.name, "the right-hand side %s returned %d values, but the state has size %d", p.fn, out.Len(), n)
	}
	f := t2.Value(out.Var)
	copy(dz[:n], f)
	if m == 0 {
		return nil
	}
	np := m
	if p.y0Sens {
		np -= n
	}
	for i := range n {
		t2.Backward(t2.Index(out.Var, i))
		if g := t2.Grad(yv); g != nil {
			copy(p.jy[i*n:(i+1)*n], g)
		}
		off := 0
		for _, v := range pv {
			g := t2.Grad(v)
			copy(p.jp[i*np+off:i*np+off+len(g)], g)
			off += len(g)
		}
	}
	// S' = J_y S + [0 | J_θ].
	s, ds := z[n:], dz[n:]
	for i := range n {
		for k := range m {
			acc := 0.0
			for j := range n {
				acc += p.jy[i*n+j] * s[j*m+k]
			}
			ds[i*m+k] = acc
		}
		base := 0
		if p.y0Sens {
			base = n
		}
		for k := range np {
			ds[i*m+base+k] += p.jp[i*np+k]
		}
	}
	return nil
}

// Dormand–Prince 5(4) coefficients (Hairer, Nørsett & Wanner, Table II.5.2).
var (
	dpC = [7]float64{0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1, 1}
	dpA = [7][6]float64{
		{},
		{1.0 / 5},
		{3.0 / 40, 9.0 / 40},
		{44.0 / 45, -56.0 / 15, 32.0 / 9},
		{19372.0 / 6561, -25360.0 / 2187, 64448.0 / 6561, -212.0 / 729},
		{9017.0 / 3168, -355.0 / 33, 46732.0 / 5247, 49.0 / 176, -5103.0 / 18656},
		{35.0 / 384, 0, 500.0 / 1113, 125.0 / 192, -2187.0 / 6784, 11.0 / 84},
	}
	// dpE are the error weights b − b̂.
	dpE = [7]float64{71.0 / 57600, 0, -71.0 / 16695, 71.0 / 1920, -17253.0 / 339200, 22.0 / 525, -1.0 / 40}
)

// solve integrates z from t0 through the output times ts, calling emit at each, the way Stan's
// rk45 does: Boost.Odeint's integrate_times over a dense-output Dormand–Prince stepper with
// its default error checker and step adjuster (Ahnert & Mulansky 2011, "Odeint — solving
// ordinary differential equations in C++", AIP Conf. Proc. 1389), an initial step of 0.1, and
// output values from the pair's continuous extension (Hairer et al. §II.6, the dense output
// of DOPRI5). Reproducing Stan's step sequence makes the solution agree with Stan's to
// rounding, not merely to the tolerance:
//
//	err   = max_i |e_i| / (atol + rtol·(|z_i| + h·|z'_i|))            (at the step's start)
//	err > 1:   reject, h ← h·max(0.9·err^{−1/3}, 1/5)
//	err < ½:   accept, h ← h·0.9·max(err, 5⁻⁵)^{−1/5}               (else accept, keep h)
func (p *odeProblem) solve(z []float64, t0 float64, ts []float64, rtol, atol float64, maxSteps int, emit func(k int, z []float64)) error {
	d := len(z)
	var ks [7][]float64
	for i := range ks {
		ks[i] = make([]float64, d)
	}
	tmp, znew, zold, out, k1old := make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
	t, h := t0, 0.1
	last := ts[len(ts)-1]
	if err := p.rhs(t, z, ks[0]); err != nil {
		return err
	}
	told := t
	steps := 0
	k := 0
	const eps = 0x1p-52
	for {
		// Emit every output time the last step covered (odeint's less_eq_with_sign).
		for k < len(ts) && ts[k]-t <= eps {
			dopriDense(out, zold, k1old, ks[2], ks[3], ks[4], ks[5], ks[0], told, t, ts[k])
			emit(k, out)
			k++
			steps = 0
		}
		if k == len(ts) {
			return nil
		}
		if !(t+h-last <= eps) {
			h = last - t
		}
		for {
			if steps >= maxSteps {
				return errf(p.name, "Failed to integrate to next output time (%s) in less than max_num_steps steps", fmtReal(ts[k]))
			}
			for s := 1; s < 7; s++ {
				for i := range d {
					acc := 0.0
					for j := range s {
						acc += dpA[s][j] * ks[j][i]
					}
					tmp[i] = z[i] + h*acc
				}
				if s == 6 {
					copy(znew, tmp)
				}
				if err := p.rhs(t+dpC[s]*h, tmp, ks[s]); err != nil {
					return err
				}
			}
			errn := 0.0
			for i := range d {
				e := 0.0
				for s := range 7 {
					e += dpE[s] * ks[s][i]
				}
				sc := atol + rtol*(math.Abs(z[i])+math.Abs(h)*math.Abs(ks[0][i]))
				errn = math.Max(errn, math.Abs(h*e)/sc)
			}
			if math.IsNaN(errn) {
				return errf(p.name, "the solution became NaN at t = %s", fmtReal(t))
			}
			if errn > 1 {
				h *= math.Max(0.9*math.Pow(errn, -1.0/3), 0.2)
				steps++
				continue
			}
			steps++
			copy(zold, z)
			copy(z, znew)
			told, t = t, t+h
			// FSAL: the last stage is f at the new point, the next step's first stage; the
			// old first stage is kept for the dense output.
			copy(k1old, ks[0])
			ks[0], ks[6] = ks[6], ks[0]
			if errn < 0.5 {
				h *= 0.9 * math.Pow(math.Max(errn, 1.0/3125), -0.2)
			}
			break
		}
	}
}

// dopriDense writes the continuous extension of the last Dormand–Prince step (from told with
// state zold to tnew) at t into out: z(told + θh) = zold + h Σ b_i(θ) k_i with Shampine's
// fourth-order dense-output weights (Hairer et al. §II.6), as Boost.Odeint's
// runge_kutta_dopri5::calc_state.
func dopriDense(out, zold, k1, k3, k4, k5, k6, k7 []float64, told, tnew, t float64) {
	const (
		b1 = 35.0 / 384
		b3 = 500.0 / 1113
		b4 = 125.0 / 192
		b5 = -2187.0 / 6784
		b6 = 11.0 / 84
	)
	h := tnew - told
	th := (t - told) / h
	x1 := 5 * (2558722523 - 31403016*th) / 11282082432
	x3 := 100 * (882725551 - 15701508*th) / 32700410799
	x4 := 25 * (443332067 - 31403016*th) / 1880347072
	x5 := 32805 * (23143187 - 3489224*th) / 199316789632
	x6 := 55 * (29972135 - 7076736*th) / 822651844
	x7 := 10 * (7414447 - 829305*th) / 29380423
	thm1 := th - 1
	thsq := th * th
	A := thsq * (3 - 2*th)
	B := thsq * thm1
	C := thsq * thm1 * thm1
	D := th * thm1 * thm1
	w1 := A*b1 - C*x1 + D
	w3 := A*b3 + C*x3
	w4 := A*b4 - C*x4
	w5 := A*b5 + C*x5
	w6 := A*b6 - C*x6
	w7 := B + C*x7
	for i := range out {
		out[i] = zold[i] + h*(w1*k1[i]+w3*k3[i]+w4*k4[i]+w5*k5[i]+w6*k6[i]+w7*k7[i])
	}
}

// odeRun checks the times, solves and returns the T×n solution as one node (type typ).
func (p *odeProblem) run(y0 []float64, t0 float64, ts []float64, rtol, atol float64, maxSteps int, typ Type) (Value, error) {
	n, m := p.n, p.m
	if math.IsNaN(t0) || math.IsInf(t0, 0) {
		return Value{}, errf(p.name, "initial time is %s, but must be finite!", fmtReal(t0))
	}
	for i, x := range y0 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return Value{}, errf(p.name, "initial state[%d] is %s, but must be finite!", i+1, fmtReal(x))
		}
	}
	for k, tk := range ts {
		prev := t0
		if k > 0 {
			prev = ts[k-1]
		}
		if !(tk > prev) || math.IsInf(tk, 0) {
			if k == 0 {
				return Value{}, errf(p.name, "times is %s, but must be greater than initial time %s", fmtReal(tk), fmtReal(t0))
			}
			return Value{}, errf(p.name, "times is not a valid sorted vector. times[%d] = %s, but should be greater than times[%d] = %s", k+1, fmtReal(tk), k, fmtReal(prev))
		}
	}
	if !(rtol > 0) || !(atol > 0) || maxSteps <= 0 {
		return Value{}, errf(p.name, "relative_tolerance (%s), absolute_tolerance (%s) and max_num_steps (%d) must be positive", fmtReal(rtol), fmtReal(atol), maxSteps)
	}
	T := len(ts)
	p.t2 = &ad.Tape{}
	p.jy = make([]float64, n*n)
	p.jp = make([]float64, n*m)
	z := make([]float64, n+n*m)
	copy(z, y0)
	if p.y0Sens {
		for i := range n {
			z[n+i*m+i] = 1
		}
	}
	vals := make([]float64, T*n)
	sens := make([]float64, T*n*m)
	err := p.solve(z, t0, ts, rtol, atol, maxSteps, func(k int, z []float64) {
		copy(vals[k*n:(k+1)*n], z[:n])
		copy(sens[k*n*m:(k+1)*n*m], z[n:])
	})
	if err != nil {
		return Value{}, err
	}
	dims := []int{T, n}
	if m == 0 {
		return Value{Type: typ, Dims: dims, Var: p.c.T.ConstRef(vals)}, nil
	}
	node := p.c.T.Custom(odeBack{}, T*n, T*n*m, p.params...)
	copy(node.Value(), vals)
	copy(node.Aux(), sens)
	return Value{Type: typ, Dims: dims, Var: node.Var()}, nil
}

// odeBack: aux holds S at every output, (T·n)×m row-major; p̄_k += Σ_r ȳ_r S_{r,k}.
type odeBack struct{}

func (odeBack) Backward(c ad.Custom) {
	t := c.Tape()
	g, s := c.Grad(), c.Aux()
	m := len(s) / len(g)
	off := 0
	for a := range c.NumArgs() {
		v := c.Arg(a)
		ga := t.Grad(v)
		size := t.Size(v)
		if ga != nil {
			for r, gr := range g {
				if gr == 0 {
					continue
				}
				row := s[r*m+off : r*m+off+size]
				for k := range ga {
					ga[k] += gr * row[k]
				}
			}
		}
		off += size
	}
}

// odeTol reads the optional (rtol, atol, max_num_steps) at args[i:], or Stan's defaults.
func odeTol(c *Ctx, args []Value, i int, has bool) (float64, float64, int) {
	if !has {
		return 1e-6, 1e-6, 1000000
	}
	steps := scalarOf(c, args[i+2]) // an int, or a real for integrate_ode_*
	if !(steps >= 1) {
		steps = 0
	}
	return scalarOf(c, args[i]), scalarOf(c, args[i+1]), int(math.Min(steps, math.MaxInt32))
}

// odeOld implements integrate_ode_*(f, y0, t0, ts, θ, x_r, x_i [, rtol, atol, max_steps]) with
// f(real t, array[] real y, array[] real θ, array[] real x_r, array[] int x_i).
func odeOld(name string) Impl {
	return func(c *Ctx, args []Value) (Value, error) {
		if c.Call == nil {
			return Value{}, errf(name, "no user-function caller in this context")
		}
		fnv, y0, t0, ts, theta, xr, xi := args[0], args[1], args[2], args[3], args[4], args[5], args[6]
		if !constant(c, t0) || !constant(c, ts) {
			return Value{}, errf(name, "parameter-dependent initial or output times are not supported")
		}
		rtol, atol, maxSteps := odeTol(c, args, 7, len(args) == 10)
		n := y0.Len()
		p := &odeProblem{c: c, name: name, fn: fnv.Name, n: n}
		y0v := realVar(c, y0)
		thv := realVar(c, theta)
		if !c.T.IsConst(y0v) {
			p.params, p.y0Sens, p.m = append(p.params, y0v), true, n
		}
		thSens := !c.T.IsConst(thv)
		if thSens {
			p.params = append(p.params, thv)
			p.m += c.T.Size(thv)
		}
		thVals := c.T.Value(thv)
		xrVals := vals(c, xr)
		xiV := xi
		thDims, xrDims := theta.Dims, xr.Dims
		p.mkArgs = func(t2 *ad.Tape, t float64, y []float64) ([]Value, ad.Var, []ad.Var) {
			yv := t2.Input(y)
			var th ad.Var
			var pv []ad.Var
			if thSens {
				th = t2.Input(thVals)
				pv = []ad.Var{th}
			} else {
				th = t2.ConstRef(thVals)
			}
			return []Value{
				realV(t2.Const(t)),
				{Type: tArrReal, Dims: []int{n}, Var: yv},
				{Type: tArrReal, Dims: thDims, Var: th},
				{Type: tArrReal, Dims: xrDims, Var: t2.ConstRef(xrVals)},
				xiV,
			}, yv, pv
		}
		return p.run(c.T.Value(y0v), scalarOf(c, t0), vals(c, ts), rtol, atol, maxSteps, tArrReal2)
	}
}

// odeNew implements ode_*(f, y0, t0, ts, ...) and ode_*_tol(f, y0, t0, ts, rtol, atol,
// max_steps, ...) with f(real t, vector y, ...): every parameter-dependent real argument gets
// sensitivities.
func odeNew(name string, tol bool) Impl {
	return func(c *Ctx, args []Value) (Value, error) {
		if c.Call == nil {
			return Value{}, errf(name, "no user-function caller in this context")
		}
		fnv, y0, t0, ts := args[0], args[1], args[2], args[3]
		if !constant(c, t0) || !constant(c, ts) {
			return Value{}, errf(name, "parameter-dependent initial or output times are not supported")
		}
		rest := args[4:]
		rtol, atol, maxSteps := 1e-6, 1e-6, 1000000
		if tol {
			rtol, atol, maxSteps = odeTol(c, args, 4, true)
			rest = args[7:]
		}
		n := y0.Len()
		p := &odeProblem{c: c, name: name, fn: fnv.Name, n: n}
		if !c.T.IsConst(y0.Var) {
			p.params, p.y0Sens, p.m = append(p.params, y0.Var), true, n
		}
		sensArg := make([]bool, len(rest))
		for i, a := range rest {
			if a.Type.Base != Int && a.Type.Base != Func && !c.T.IsConst(a.Var) {
				sensArg[i] = true
				p.params = append(p.params, a.Var)
				p.m += c.T.Size(a.Var)
			}
		}
		restVals := make([][]float64, len(rest))
		for i, a := range rest {
			if a.Type.Base != Int && a.Type.Base != Func {
				restVals[i] = c.T.Value(a.Var)
			}
		}
		p.mkArgs = func(t2 *ad.Tape, t float64, y []float64) ([]Value, ad.Var, []ad.Var) {
			yv := t2.Input(y)
			out := make([]Value, 0, 2+len(rest))
			out = append(out, realV(t2.Const(t)), Value{Type: TVector, Dims: []int{n}, Var: yv})
			var pv []ad.Var
			for i, a := range rest {
				if restVals[i] == nil {
					out = append(out, a)
					continue
				}
				var v ad.Var
				if sensArg[i] {
					v = t2.Input(restVals[i])
					pv = append(pv, v)
				} else {
					v = t2.ConstRef(restVals[i])
				}
				if a.Type.Base == Matrix && a.Type.Array == 0 {
					v = t2.AsMatrix(v, a.Dims[0], a.Dims[1])
				}
				out = append(out, Value{Type: a.Type, Dims: a.Dims, Var: v})
			}
			return out, yv, pv
		}
		return p.run(c.T.Value(y0.Var), scalarOf(c, t0), vals(c, ts), rtol, atol, maxSteps, tArrVector)
	}
}
