package stan

// odeSigs returns the built-in signatures of this group (see Builtins): the ODE solvers
// integrate_ode_rk45/_bdf (the pre-2.24 interface the corpus uses: state and parameters as
// real arrays, data x_r and x_i) and ode_rk45/ode_bdf(/_tol) with up to five trailing
// arguments passed to the right-hand side.
func odeSigs() []Sig {
	fn := Arg{Class: Exact, Type: Type{Base: Func}}
	var s []Sig
	for _, name := range []string{"integrate_ode_rk45", "integrate_ode_bdf", "integrate_ode_adams"} {
		base := []Arg{fn, ex(tArrReal), aReal, ex(tArrReal), ex(tArrReal), exData(tArrReal), exData(tArrInt)}
		s = append(s, Sig{Name: name, Args: base, Ret: tArrReal2, Fn: odeOld(name)})
		// max_num_steps is a real here, as in stanc3 (the corpus passes 5e2).
		tol := append(append([]Arg(nil), base...), exData(TReal), exData(TReal), exData(TReal))
		s = append(s, Sig{Name: name, Args: tol, Ret: tArrReal2, Fn: odeOld(name)})
	}
	for _, name := range []string{"ode_rk45", "ode_bdf", "ode_adams", "ode_ckrk"} {
		base := []Arg{fn, aVector, aReal, ex(tArrReal)}
		tol := append(append([]Arg(nil), base...), exData(TReal), exData(TReal), exData(TInt))
		for k := 0; k <= 5; k++ {
			for _, b := range [][]Arg{base, tol} {
				args := append([]Arg(nil), b...)
				for range k {
					args = append(args, aAny)
				}
				n := name
				if len(b) == len(tol) {
					n = name + "_tol"
				}
				s = append(s, Sig{Name: n, Args: args, Ret: tArrVector, Fn: odeNew(n, len(b) == len(tol))})
			}
		}
	}
	return s
}
