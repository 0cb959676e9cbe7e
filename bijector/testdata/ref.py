# Reference values for bijector_test.go TestReferenceValues: Stan's simplex and
# cholesky_factor_corr transforms in 40-digit arithmetic (run: /usr/bin/python3 testdata/ref.py).
from mpmath import mp, mpf, tanh, sqrt, exp, log, matrix, det, diff
mp.dps = 40
def inv_logit(y): return 1/(1+exp(-y))
def simplex(u):  # Stan reference manual stick-breaking, direct form
    K = len(u)+1; x = []; s = mpf(0)
    for k in range(K-1):   # 0-based k, 1-based k+1
        z = inv_logit(u[k] - log(K-(k+1)))
        x.append((1-s)*z); s += x[-1]
    x.append(1-s); return x
def simplex_lj(u):
    K = len(u)+1; s = mpf(0); lj = mpf(0)
    for k in range(K-1):
        z = inv_logit(u[k] - log(K-(k+1)))
        lj += log(z) + log(1-z) + log(1-s); s += (1-s)*z
    return lj
def corr(u, K):  # Stan Math cholesky_corr_constrain loop
    L = [[mpf(0)]*K for _ in range(K)]; L[0][0] = mpf(1); p = 0
    for i in range(1, K):
        ss = mpf(0)
        for j in range(i):
            z = tanh(u[p]); p += 1
            L[i][j] = z*sqrt(1-ss); ss += L[i][j]**2
        L[i][i] = sqrt(1-ss)
    return L
def corr_lj(u, K):
    lj = sum(log(1-tanh(v)**2) for v in u); p = 0
    for i in range(1, K):
        ss = mpf(0)
        for j in range(i):
            if j > 0: lj += log(1-ss)/2
            z = tanh(u[p]); p += 1
            Lij = z*sqrt(1-ss); ss += Lij**2
    return lj
def num_logdet(f, u):
    n = len(u); J = matrix(n, n)
    for c in range(n):
        for r in range(n):
            J[r, c] = diff(lambda t: f([u[i] if i != c else t for i in range(n)])[r], u[c])
    return log(abs(det(J)))
us = [mpf('0.3'), mpf('-1.2'), mpf('2.0')]
print('simplex x', [mp.nstr(v, 20) for v in simplex(us)])
print('simplex lj', mp.nstr(simplex_lj(us), 20), 'numeric', mp.nstr(num_logdet(lambda v: simplex(v)[:3], us), 20))
uc = [mpf('0.5'), mpf('-0.7'), mpf('1.1')]
L = corr(uc, 3)
print('corr L', [mp.nstr(L[i][j], 20) for i in range(3) for j in range(3)])
print('corr lj', mp.nstr(corr_lj(uc, 3), 20), 'numeric', mp.nstr(num_logdet(lambda v: [corr(v,3)[1][0], corr(v,3)[2][0], corr(v,3)[2][1]], uc), 20))
