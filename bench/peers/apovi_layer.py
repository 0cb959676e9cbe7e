#!/usr/bin/python3
"""PyTorch CPU peer for `vigo bench apovi` (issue 16 item 5): one APOVI layer's loss + backward.

One hidden amortised layer of Rochussen (2023), as ../shared/docs/apovi.md §1.3 writes it, the
same computation as vigo's BenchmarkGipLayer* (apovi/bench_test.go):

  inputs         H (N x D_in, the layer input, a leaf that requires grad: the thesis keeps the
                 gradient through U to the earlier sampled weights) and the raw inference-net
                 output O = [a, b] (N x 2D, a leaf that requires grad);
  pseudo-lik.    v = a, s = exp((b - 4)/2) + 1e-8, lam = s^-2 (NormalActivation);
  conditional    U = [H, 1] (N x K, K = D_in + 1); per unit d:
                 P_d = I_K + U^T diag(lam_:d) U, mu_d = P_d^-1 U^T diag(lam_:d) v_:d,
                 w_d = mu_d + R_d^-T eps_d with P_d = R_d R_d^T (D separate K x K systems);
  KL             KL_d = 1/2 [tr P_d^-1 + mu_d^T mu_d - K + ln det P_d]  (prior N(0, 1));
  loss           sum_{d,k} w_dk + sum_d KL_d   (weights and biases summed, as the Go benchmark).

Data as in the Go benchmark (the values differ, the cost does not depend on them):
H ~ U[0, 1), O ~ 0.1 N(0, 1), eps ~ N(0, 1), torch seed 2.

Run, from the repository:

    /usr/bin/python3 bench/peers/apovi_layer.py --n 392 --din 50 --dout 50

It prints one JSON line: {"n", "din", "dout", "threads", "dtype", "median_sec", "batches",
"calls_per_batch", "loss"}. median_sec is the median over batches of the per-call mean time of
one forward + backward (graph construction included, as a user writes it).

- One thread: OMP/MKL/OPENBLAS_NUM_THREADS default to 1 before torch is imported, and
  torch.set_num_threads(1).
- float64 throughout, like vigo.
- Plain eager PyTorch, batched over the D units (one batched Cholesky, batched triangular
  solves): no TorchScript, no torch.compile.
"""

import argparse
import json
import math
import os
import statistics
import time

_ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
_ap.add_argument("--n", type=int, default=392, help="data points N")
_ap.add_argument("--din", type=int, default=50, help="layer input width D_in (K = D_in + 1)")
_ap.add_argument("--dout", type=int, default=50, help="layer output width D")
_ap.add_argument("--batches", type=int, default=7, help="timed batches")
_ap.add_argument("--min-batch", type=float, default=0.2, help="seconds per batch at least")
_ap.add_argument("--threads", type=int, default=1)
ARGS = _ap.parse_args()

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, str(ARGS.threads))

import torch  # noqa: E402

torch.set_num_threads(ARGS.threads)
torch.set_default_dtype(torch.float64)
torch.manual_seed(2)

N, DIN, D = ARGS.n, ARGS.din, ARGS.dout
K = DIN + 1
H = torch.rand(N, DIN).requires_grad_(True)
O = (0.1 * torch.randn(N, 2 * D)).requires_grad_(True)
EYE = torch.eye(K)


def loss_fn():
    v, b = O[:, :D], O[:, D:]
    sd = torch.exp((b - 4.0) / 2.0) + 1e-8
    lam = sd.pow(-2)  # N x D
    U = torch.cat([H, torch.ones(N, 1)], dim=1)  # N x K
    UL = U.unsqueeze(0) * lam.t().unsqueeze(2)  # D x N x K: diag(lam_d) U
    P = EYE + UL.transpose(1, 2) @ U  # D x K x K
    rhs = UL.transpose(1, 2) @ v.t().unsqueeze(2)  # D x K x 1
    R = torch.linalg.cholesky(P)
    mu = torch.cholesky_solve(rhs, R)  # D x K x 1
    eps = torch.randn(D, K, 1)
    w = mu + torch.linalg.solve_triangular(R.transpose(1, 2), eps, upper=True)
    Rinv = torch.linalg.solve_triangular(R, EYE.expand(D, K, K), upper=False)
    tr = Rinv.pow(2).sum(dim=(1, 2))
    logdet_p = 2.0 * torch.log(torch.diagonal(R, dim1=1, dim2=2)).sum(dim=1)
    kl = 0.5 * (tr + mu.squeeze(2).pow(2).sum(dim=1) - K + logdet_p)  # D
    return w.sum() + kl.sum()


def call():
    loss = loss_fn()
    torch.autograd.grad(loss, [H, O])
    return loss.item()


t0 = time.perf_counter()
n_warm = 0
while n_warm < 3 or time.perf_counter() - t0 < 0.2:
    last = call()
    n_warm += 1
t0 = time.perf_counter()
call()
one = max(time.perf_counter() - t0, 1e-7)
k = max(1, math.ceil(ARGS.min_batch / one))
means = []
for _ in range(ARGS.batches):
    t0 = time.perf_counter()
    for _ in range(k):
        last = call()
    means.append((time.perf_counter() - t0) / k)
print(json.dumps({
    "n": N, "din": DIN, "dout": D, "threads": ARGS.threads, "dtype": "float64",
    "median_sec": statistics.median(means), "batches": ARGS.batches, "calls_per_batch": k,
    "loss": last,
}))
