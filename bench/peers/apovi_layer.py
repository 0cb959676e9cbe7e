#!/usr/bin/python3
"""PyTorch CPU peer for `vigo bench apovi` (issue 16 item 5): one APOVI layer's loss + backward.

One amortised layer of Rochussen (2023), as ../shared/docs/apovi.md §1.3 writes it, for S Monte
Carlo samples at once:

  inference net  g: [x_dim + y_dim] + hidden + [2D], ReLU between layers, on the raw (x_n, y_n);
                 output o = [a, b], pseudo-output v = a, pseudo-noise sd s = exp((b - 4)/2) + 1e-8,
                 precision lam = s^-2 (N x D each);
  layer input    U^(s) = [H^(s), 1] (S x N x K, K = D_in + 1), H a leaf that requires grad (the
                 gradient through U to the earlier sampled weights, as the thesis keeps it);
  conditional    P_d = I_K + U^T diag(lam_:d) U (one K x K system per unit d and sample),
                 mu_d = P_d^-1 U^T diag(lam_:d) v_:d, w_d = mu_d + R_d^-T eps (P_d = R_d R_d^T);
  KL             KL_d = 1/2 [tr P_d^-1 + mu_d^T mu_d - K - ln det P_d^-1]  (prior N(0, 1));
  output         F^(s) = U^(s) W^(s)T (S x N x D);
  loss           (1/S) sum_s [ sum_d KL_d^(s) + 1/2 sum_{n,d} F_nd^(s)2 ]   (the second term a
                 stand-in for the downstream data term, so that backward reaches every input).

The Go side (bench/apovi.go, speed part) times the same function of the same shapes on vigo's
tape. The data are generated from the formulas below, identically in Go:

  x_n    = sin(0.37 n + 0.1)           (x_dim = 1),   y_n = cos(1.3 n)   (y_dim = 1),
  H_snj  = relu(sin(0.11 (s N D_in + n D_in + j) + 0.3)),
  eps    = N(0, 1) from torch (only the draws differ from Go; the cost does not depend on them),
  inference-net weights: PyTorch's default nn.Linear initialisation (seed 1).

Run, from the repository:

    /usr/bin/python3 bench/peers/apovi_layer.py --n 30 --din 32 --dout 32 --hidden 50,50 --samples 1

It prints one JSON line: {"n", "din", "dout", "hidden", "samples", "threads", "dtype",
"median_sec", "batches", "calls_per_batch", "loss"}. median_sec is the median over batches of the
per-call mean time of one forward + backward (graph construction included, as a user writes it).

- One thread: OMP/MKL/OPENBLAS_NUM_THREADS default to 1 before torch is imported, and
  torch.set_num_threads(1).
- float64 throughout, like vigo.
- Plain eager PyTorch: no TorchScript, no torch.compile.
"""

import argparse
import json
import math
import os
import statistics
import time

_ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
_ap.add_argument("--n", type=int, default=30, help="datapoints N")
_ap.add_argument("--din", type=int, default=32, help="layer input width D_in (K = D_in + 1)")
_ap.add_argument("--dout", type=int, default=32, help="layer output width D")
_ap.add_argument("--hidden", default="50,50", help="inference-net hidden widths, comma-separated")
_ap.add_argument("--samples", type=int, default=1, help="Monte Carlo samples S")
_ap.add_argument("--batches", type=int, default=11, help="timed batches")
_ap.add_argument("--min-batch", type=float, default=0.05, help="seconds per batch at least")
_ap.add_argument("--threads", type=int, default=1)
ARGS = _ap.parse_args()

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, str(ARGS.threads))

import torch  # noqa: E402

torch.set_num_threads(ARGS.threads)
torch.set_default_dtype(torch.float64)
torch.manual_seed(1)

N, DIN, D, S = ARGS.n, ARGS.din, ARGS.dout, ARGS.samples
K = DIN + 1
HID = [int(h) for h in ARGS.hidden.split(",") if h.strip()]

idx = torch.arange(N, dtype=torch.float64)
x = torch.sin(0.37 * idx + 0.1).unsqueeze(1)
y = torch.cos(1.3 * idx).unsqueeze(1)
xy = torch.cat([x, y], dim=1)
flat = torch.arange(S * N * DIN, dtype=torch.float64).reshape(S, N, DIN)
H = torch.relu(torch.sin(0.11 * flat + 0.3)).requires_grad_(True)

sizes = [2] + HID + [2 * D]
layers = torch.nn.ModuleList(torch.nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))
EYE = torch.eye(K)


def loss_fn():
    h = xy
    for i, lin in enumerate(layers):
        h = lin(h)
        if i < len(layers) - 1:
            h = torch.relu(h)
    v, b = h[:, :D], h[:, D:]
    sd = torch.exp((b - 4.0) / 2.0) + 1e-8
    lam = sd.pow(-2)  # N x D
    U = torch.cat([H, torch.ones(S, N, 1)], dim=2)  # S x N x K
    # P[s, d] = I + U^T diag(lam[:, d]) U : S x D x K x K
    UL = U.unsqueeze(1) * lam.t().unsqueeze(0).unsqueeze(3)  # S x D x N x K
    P = EYE + UL.transpose(2, 3) @ U.unsqueeze(1)
    rhs = (UL.transpose(2, 3) @ v.t().unsqueeze(0).unsqueeze(3))  # S x D x K x 1
    R = torch.linalg.cholesky(P)
    mu = torch.cholesky_solve(rhs, R)  # S x D x K x 1
    eps = torch.randn(S, D, K, 1)
    w = mu + torch.linalg.solve_triangular(R.transpose(2, 3), eps, upper=True)
    Rinv = torch.linalg.solve_triangular(R, EYE.expand(S, D, K, K), upper=False)
    tr = Rinv.pow(2).sum(dim=(2, 3))
    logdet_sigma = -2.0 * torch.log(torch.diagonal(R, dim1=2, dim2=3)).sum(dim=2)
    kl = 0.5 * (tr + mu.squeeze(3).pow(2).sum(dim=2) - K - logdet_sigma)  # S x D
    F = U @ w.squeeze(3).transpose(1, 2)  # S x N x D
    return (kl.sum() + 0.5 * F.pow(2).sum()) / S


params = list(layers.parameters()) + [H]


def call():
    loss = loss_fn()
    torch.autograd.grad(loss, params)
    return loss.item()


t0 = time.perf_counter()
n_warm = 0
while n_warm < 5 or time.perf_counter() - t0 < 0.2:
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
    "n": N, "din": DIN, "dout": D, "hidden": HID, "samples": S, "threads": ARGS.threads,
    "dtype": "float64", "median_sec": statistics.median(means), "batches": ARGS.batches,
    "calls_per_batch": k, "loss": last,
}))
