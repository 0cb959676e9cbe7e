# Reference values for dist/ref_values_test.go: log densities and log CDFs in mpmath at
# 40 digits from the textbook formulas, each cross-checked against scipy.stats (which
# fixes the parameterisation) where scipy is accurate in double precision.
# Regenerate: /usr/bin/python3 dist/testdata/ref.py > dist/ref_values_test.go
import mpmath as mp
import numpy as np
from scipy import stats
mp.mp.dps = 40

def g(x):
    x = mp.mpf(x)
    if mp.isinf(x):
        return "math.Inf(-1)" if x < 0 else "math.Inf(1)"
    return mp.nstr(x, 20, min_fixed=-mp.inf, max_fixed=mp.inf) if abs(x) > 1e-5 or x == 0 else mp.nstr(x, 20)

def check(name, ours, sp, tol=1e-9):
    ours, sp = float(ours), float(sp)
    if np.isfinite(sp) and abs(ours - sp) > tol * max(1, abs(sp)):
        raise SystemExit("%s: mpmath %r vs scipy %r" % (name, ours, sp))

L = mp.log
def lcdf(F): return L(F) if F > 0 else -mp.inf

rows = {}
def add(kind, params, x, lp, lc, ls):
    rows.setdefault(kind, []).append("{%s, %s, %s, %s, %s}," % (
        "[]float64{" + ", ".join(g(p) for p in params) + "}", g(x), g(lp), g(lc), g(ls)))

# Normal(mu, sigma)
for mu, s, x in [(0, 1, 0.5), (1.5, 0.3, -2), (0, 1, -30), (0, 1, 9), (-3, 20, 100)]:
    mu, s, x = mp.mpf(mu), mp.mpf(s), mp.mpf(x)
    z = (x - mu) / s
    lp = -z**2 / 2 - L(s) - L(2 * mp.pi) / 2
    check("normal", lp, stats.norm(float(mu), float(s)).logpdf(float(x)))
    add("Normal", [mu, s], x, lp, L(mp.ncdf(z)), L(mp.ncdf(-z)))

# StudentT(nu, mu, sigma)
def tcdf(nu, t):
    x = nu / (nu + t * t)
    half = mp.betainc(nu / 2, mp.mpf(1) / 2, 0, x, regularized=True) / 2
    return half if t < 0 else 1 - half
for nu, mu, s, x in [(3, 0, 1, 0.5), (1.5, 2, 0.5, -4), (30, -1, 2, 3), (0.7, 0, 1, 200), (4, 0, 1, -1e3)]:
    nu, mu, s, x = map(mp.mpf, (nu, mu, s, x))
    z = (x - mu) / s
    lp = mp.loggamma((nu + 1) / 2) - mp.loggamma(nu / 2) - L(nu * mp.pi) / 2 - L(s) - (nu + 1) / 2 * L(1 + z**2 / nu)
    check("t", lp, stats.t(float(nu), float(mu), float(s)).logpdf(float(x)))
    add("StudentT", [nu, mu, s], x, lp, L(tcdf(nu, z)), L(tcdf(nu, -z)))

# Cauchy(mu, sigma)
for mu, s, x in [(0, 1, 0.5), (1, 3, -1e6), (-2, 0.1, 40)]:
    mu, s, x = map(mp.mpf, (mu, s, x))
    z = (x - mu) / s
    lp = -L(mp.pi) - L(s) - L(1 + z**2)
    check("cauchy", lp, stats.cauchy(float(mu), float(s)).logpdf(float(x)))
    add("Cauchy", [mu, s], x, lp, L(mp.mpf(1) / 2 + mp.atan(z) / mp.pi), L(mp.mpf(1) / 2 - mp.atan(z) / mp.pi))

# Laplace(mu, sigma) = double_exponential
for mu, s, x in [(0, 1, 0.5), (1, 2, -30), (-1, 0.5, 20)]:
    mu, s, x = map(mp.mpf, (mu, s, x))
    z = (x - mu) / s
    lp = -L(2) - L(s) - abs(z)
    F = mp.exp(z) / 2 if z < 0 else 1 - mp.exp(-z) / 2
    check("laplace", lp, stats.laplace(float(mu), float(s)).logpdf(float(x)))
    add("Laplace", [mu, s], x, lp, L(F), L(1 - F))

# Logistic(mu, sigma)
for mu, s, x in [(0, 1, 0.5), (1, 2, -60), (-1, 0.5, 30)]:
    mu, s, x = map(mp.mpf, (mu, s, x))
    z = (x - mu) / s
    lp = -z - 2 * L(1 + mp.exp(-z)) - L(s)
    F = 1 / (1 + mp.exp(-z))
    check("logistic", lp, stats.logistic(float(mu), float(s)).logpdf(float(x)))
    add("Logistic", [mu, s], x, lp, L(F), L(1 - F))

# LogNormal(mu, sigma)
for mu, s, x in [(0, 1, 0.5), (1, 0.25, 20), (-1, 2, 1e-9)]:
    mu, s, x = map(mp.mpf, (mu, s, x))
    z = (L(x) - mu) / s
    lp = -L(x) - L(s) - L(2 * mp.pi) / 2 - z**2 / 2
    check("lognormal", lp, stats.lognorm(float(s), scale=float(mp.exp(mu))).logpdf(float(x)))
    add("LogNormal", [mu, s], x, lp, L(mp.ncdf(z)), L(mp.ncdf(-z)))

# Exponential(rate)
for lam, x in [(1, 0.5), (3, 1e-10), (0.01, 500)]:
    lam, x = mp.mpf(lam), mp.mpf(x)
    lp = L(lam) - lam * x
    check("exp", lp, stats.expon(scale=float(1 / lam)).logpdf(float(x)))
    add("Exponential", [lam], x, lp, L(1 - mp.exp(-lam * x)), -lam * x)

# Gamma(shape, rate)
for a, b, x in [(2, 3, 0.5), (0.5, 1, 1e-4), (10, 0.5, 60), (100, 10, 9), (3, 2, 0)]:
    a, b, x = map(mp.mpf, (a, b, x))
    lp = a * L(b) - mp.loggamma(a) + (a - 1) * L(x) - b * x if x > 0 else -mp.inf
    check("gamma", lp, stats.gamma(float(a), scale=float(1 / b)).logpdf(float(x)))
    P = mp.gammainc(a, 0, b * x, regularized=True)
    add("Gamma", [a, b], x, lp, lcdf(P), L(mp.gammainc(a, b * x, mp.inf, regularized=True)))

# InverseGamma(shape, scale)
for a, b, x in [(2, 3, 0.5), (0.5, 1, 100), (10, 0.5, 0.01)]:
    a, b, x = map(mp.mpf, (a, b, x))
    lp = a * L(b) - mp.loggamma(a) - (a + 1) * L(x) - b / x
    check("invgamma", lp, stats.invgamma(float(a), scale=float(b)).logpdf(float(x)))
    add("InverseGamma", [a, b], x, lp, L(mp.gammainc(a, b / x, mp.inf, regularized=True)),
        L(mp.gammainc(a, 0, b / x, regularized=True)))

# Beta(alpha, beta)
for a, b, x in [(2, 3, 0.25), (0.5, 0.5, 0.999), (50, 5, 0.3), (1.5, 200, 0.001)]:
    a, b, x = map(mp.mpf, (a, b, x))
    lp = (a - 1) * L(x) + (b - 1) * L(1 - x) - (mp.loggamma(a) + mp.loggamma(b) - mp.loggamma(a + b))
    check("beta", lp, stats.beta(float(a), float(b)).logpdf(float(x)))
    add("Beta", [a, b], x, lp, L(mp.betainc(a, b, 0, x, regularized=True)), L(mp.betainc(a, b, x, 1, regularized=True)))

# Uniform(min, max)
for lo, hi, x in [(0, 1, 0.25), (-2, 3, 2.5)]:
    lo, hi, x = map(mp.mpf, (lo, hi, x))
    check("uniform", -L(hi - lo), stats.uniform(float(lo), float(hi - lo)).logpdf(float(x)))
    add("Uniform", [lo, hi], x, -L(hi - lo), L((x - lo) / (hi - lo)), L((hi - x) / (hi - lo)))

# Half forms: 2·p(x) on x ≥ 0.
for s, x in [(1, 0.5), (2.5, 10), (0.1, 4)]:
    s, x = mp.mpf(s), mp.mpf(x)
    lp = L(2) - (x / s)**2 / 2 - L(s) - L(2 * mp.pi) / 2
    check("halfnormal", lp, stats.halfnorm(scale=float(s)).logpdf(float(x)))
    add("HalfNormal", [s], x, lp, L(mp.erf(x / s / mp.sqrt(2))), L(mp.erfc(x / s / mp.sqrt(2))))
for s, x in [(1, 0.5), (2.5, 1e4)]:
    s, x = mp.mpf(s), mp.mpf(x)
    lp = L(2) - L(mp.pi) - L(s) - L(1 + (x / s)**2)
    check("halfcauchy", lp, stats.halfcauchy(scale=float(s)).logpdf(float(x)))
    add("HalfCauchy", [s], x, lp, L(2 * mp.atan(x / s) / mp.pi), L(1 - 2 * mp.atan(x / s) / mp.pi))
for nu, s, x in [(3, 1, 0.5), (7, 2, 30), (1.2, 0.5, 1e-3)]:
    nu, s, x = map(mp.mpf, (nu, s, x))
    z = x / s
    lp = L(2) + mp.loggamma((nu + 1) / 2) - mp.loggamma(nu / 2) - L(nu * mp.pi) / 2 - L(s) - (nu + 1) / 2 * L(1 + z**2 / nu)
    check("halft", lp, L(2) + float(stats.t(float(nu), 0, float(s)).logpdf(float(x))))
    tail = mp.betainc(nu / 2, mp.mpf(1) / 2, 0, nu / (nu + z * z), regularized=True)
    add("HalfStudentT", [nu, s], x, lp, L(1 - tail), L(tail))

print("""// Code generated by dist/testdata/ref.py; DO NOT EDIT.
// Regenerate: /usr/bin/python3 dist/testdata/ref.py > dist/ref_values_test.go
// (mpmath 40-digit formulas, parameterisation cross-checked against scipy.stats).

package dist

import "math"

// refRow is one reference point: parameters in struct-field order, x, log p(x), log F(x),
// log(1 − F(x)).
type refRow struct {
	params             []float64
	x, lp, lcdf, lccdf float64
}

var _ = math.Inf

var refContinuous = map[string][]refRow{""")
for k, v in rows.items():
    print('\t"%s": {' % k)
    for r in v:
        print("\t\t" + r)
    print("\t},")
print("}")

# Discrete: kind, params, k, log p(k).
drows = {}
def dadd(kind, params, k, lp):
    drows.setdefault(kind, []).append("{[]float64{%s}, %d, %s}," % (", ".join(g(p) for p in params), k, g(lp)))
for eta, y in [(0.3, 1), (0.3, 0), (-40, 1), (25, 0)]:
    eta = mp.mpf(eta)
    p = 1 / (1 + mp.exp(-eta))
    lp = L(p) if y == 1 else L(1 - p)
    if abs(eta) < 10:  # scipy works with p, which rounds for large |eta|
        check("bern", lp, stats.bernoulli(float(p)).logpmf(y))
    dadd("BernoulliLogit", [eta], y, lp)
for n, eta, k in [(10, 0.3, 4), (100, -2, 0), (1000, 1.5, 800), (5, 30, 5)]:
    eta = mp.mpf(eta)
    p = 1 / (1 + mp.exp(-eta))
    lp = L(mp.binomial(n, k)) + k * L(p) + (n - k) * L(1 - p)
    if abs(eta) < 10:
        check("binom", lp, stats.binom(n, float(p)).logpmf(k))
    dadd("BinomialLogit", [n, eta], k, lp)
for eta, k in [(0.3, 2), (-5, 0), (5, 100), (10, 30000)]:
    eta = mp.mpf(eta)
    lp = k * eta - mp.exp(eta) - mp.loggamma(k + 1)
    check("pois", lp, stats.poisson(float(mp.exp(eta))).logpmf(k))
    dadd("PoissonLog", [eta], k, lp)
def nb2(mu, phi, k):
    return mp.loggamma(k + phi) - mp.loggamma(phi) - mp.loggamma(k + 1) + k * L(mu / (mu + phi)) + phi * L(phi / (mu + phi))
for mu, phi, k in [(3, 2, 4), (0.5, 0.1, 0), (100, 1e8, 90), (20, 1e-3, 7)]:
    mu, phi = mp.mpf(mu), mp.mpf(phi)
    lp = nb2(mu, phi, k)
    check("nb2", lp, stats.nbinom(float(phi), float(phi / (mu + phi))).logpmf(k), 1e-7)
    dadd("NegBinomial2", [mu, phi], k, lp)
    dadd("NegBinomial2Log", [L(mu), phi], k, lp)
print("""
// refDiscrete holds parameters, k and log p(k).
type refDiscreteRow struct {
	params []float64
	k      int
	lp     float64
}

var refDiscrete = map[string][]refDiscreteRow{""")
for k, v in drows.items():
    print('\t"%s": {' % k)
    for r in v:
        print("\t\t" + r)
    print("\t},")
print("}")

# Multivariate.
eta = [mp.mpf(v) for v in ["0.5", "-1", "2", "0"]]
lse = L(sum(mp.exp(e) for e in eta))
print("\n// CategoricalLogit η = {0.5, -1, 2, 0}: log p(y) for y = 0..3.")
print("var refCategorical = []float64{%s}" % ", ".join(g(e - lse) for e in eta))
check("cat", eta[2] - lse, float(stats.multinomial(1, [float(mp.exp(e - lse)) for e in eta]).logpmf([0, 0, 1, 0])))

alpha = [mp.mpf(v) for v in ["0.5", "2", "3.5"]]
theta = [mp.mpf(v) for v in ["0.2", "0.3", "0.5"]]
lp = mp.loggamma(sum(alpha)) - sum(mp.loggamma(a) for a in alpha) + sum((a - 1) * L(t) for a, t in zip(alpha, theta))
check("dir", lp, stats.dirichlet([float(a) for a in alpha]).logpdf([float(t) for t in theta]))
print("\n// Dirichlet α = {0.5, 2, 3.5} at θ = {0.2, 0.3, 0.5}.")
print("const refDirichlet = %s" % g(lp))

mu = mp.matrix([["0.5"], ["-1"], ["2"]])
Lm = mp.matrix([["1.5", "0", "0"], ["0.3", "0.8", "0"], ["-0.4", "0.2", "2.0"]])
y = mp.matrix([["1"], ["0.5"], ["-1"]])
S = Lm * Lm.T
r = y - mu
lp = -mp.mpf(3) / 2 * L(2 * mp.pi) - L(mp.det(S)) / 2 - (r.T * mp.inverse(S) * r)[0] / 2
check("mvn", lp, stats.multivariate_normal([float(v) for v in mu], [[float(S[i, j]) for j in range(3)] for i in range(3)]).logpdf([float(v) for v in y]))
print("\n// MultiNormalCholesky μ = {0.5, -1, 2}, L = {{1.5,0,0},{0.3,0.8,0},{-0.4,0.2,2}} at y = {1, 0.5, -1}.")
print("const refMultiNormal = %s" % g(lp))

# LKJ normaliser from Lewandowski, Kurowicka & Joe (2009) eq. 16, independent of the
# ball-integral form used in the Go code:
# c_K = 2^{sum_{k=1}^{K-1} (2eta-2+K-k)(K-k)} * prod_{k=1}^{K-1} B(eta+(K-k-1)/2, eta+(K-k-1)/2)^{K-k}.
def lkj_logc(eta, K):
    s = 0
    for k in range(1, K):
        b = eta + mp.mpf(K - k - 1) / 2
        s += (2 * eta - 2 + K - k) * (K - k) * L(2) + (K - k) * (2 * mp.loggamma(b) - mp.loggamma(2 * b))
    return s
print("\n// LKJ log normalisers log c_K(η) (Lewandowski et al. 2009 eq. 16): K, η, log c.")
print("var refLKJNorm = [][3]float64{")
for K, e in [(2, 1), (2, 2.5), (3, 1), (3, 0.7), (5, 4), (10, 1.5)]:
    print("\t{%d, %s, %s}," % (K, g(e), g(lkj_logc(mp.mpf(e), K))))
print("}")
