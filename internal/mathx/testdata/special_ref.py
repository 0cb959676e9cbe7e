# Reference values for special_test.go, computed with mpmath at 40 digits.
# Run: /usr/bin/python3 internal/mathx/testdata/special_ref.py
import mpmath as mp
mp.mp.dps = 40
def g(x): return mp.nstr(x, 20, min_fixed=-mp.inf, max_fixed=mp.inf) if mp.isfinite(x) else repr(x)
print("// LogNormCDF: z, log Phi(z), d/dz log Phi(z)")
for z in ['-1e4','-300','-40','-37.5','-36','-20','-5','-1','0','0.5','3','10','40']:
    z=mp.mpf(z)
    lp=lambda t: mp.log(mp.ncdf(t))
    print("{%s, %s, %s}," % (g(z), g(lp(z)), g(mp.diff(lp, z))))
print("// LogRegIncBeta: a, b, x, logI, logJ, dlogI/da, dlogI/db")
for a,b,x in [(0.5,0.5,0.3),(2,3,0.1),(2,3,0.9),(50,0.5,0.99),(0.5,50,1e-3),(100,200,0.3),(100,200,0.36),(3,0.5,0.999999),(0.01,0.02,0.5),(1e3,1e3,0.5),(7.5,0.5,0.2)]:
    a,b,x=mp.mpf(a),mp.mpf(b),mp.mpf(x)
    I=lambda a,b: mp.betainc(a,b,0,x,regularized=True)
    J=lambda a,b: mp.betainc(a,b,x,1,regularized=True)
    print("{%s, %s, %s, %s, %s, %s, %s, %s, %s}," % (g(a),g(b),g(x),g(mp.log(I(a,b))),g(mp.log(J(a,b))),
      g(mp.diff(lambda t: mp.log(I(t,b)), a)), g(mp.diff(lambda t: mp.log(I(a,t)), b)),
      g(mp.diff(lambda t: mp.log(J(t,b)), a)), g(mp.diff(lambda t: mp.log(J(a,t)), b))))
print("// LogRegIncGamma: a, x, logP, logQ, dlogP/da, dlogQ/da")
for a,x in [(0.5,0.1),(0.5,3),(2,1),(2,2.9),(2,3.1),(10,1),(10,30),(100,90),(100,101),(100,140),(0.01,1e-5),(3,1e-8),(1000,1100),(5,80)]:
    a,x=mp.mpf(a),mp.mpf(x)
    P=lambda a: mp.gammainc(a,0,x,regularized=True)
    Q=lambda a: mp.gammainc(a,x,mp.inf,regularized=True)
    print("{%s, %s, %s, %s, %s, %s}," % (g(a),g(x),g(mp.log(P(a))),g(mp.log(Q(a))),g(mp.diff(lambda t: mp.log(P(t)),a)),g(mp.diff(lambda t: mp.log(Q(t)),a))))
