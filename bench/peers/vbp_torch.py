#!/usr/bin/python3
"""PyTorch CPU peer for `vigo bench uci --speed` (issue 6 item 5).

Trains the same one-hidden-layer ReLU network with mean-field Gaussian weights and biases as
vigo's bnn package, on one UCI split, with either

  vbp   variance backpropagation: closed-form moments, ReLU gate relaxed to
        Bernoulli(sigmoid(C*E[f])), C = 100; closed-form expected Gaussian log-likelihood;
  mfvi  Monte Carlo with the local reparameterisation trick (one draw per data point and unit,
        the output drawn too),

and reports the seconds per epoch. An epoch is what vigo's bnn.FitRegression does: shuffle,
one Adam step (lr 0.01) per minibatch on (KL - (N/B) * sum of expected log-likelihoods) / N,
then the Type-II maximum-likelihood update of the noise precision
beta = N / sum_n [(y_n - E[f_n])^2 + var[f_n]] in a no-grad pass over the training set
(chunks of 64 rows; the Monte Carlo method draws the hidden layer once per row).
Prior N(0, 1/10) on every weight and bias; initialisation as the VBP reference code: means
N(0, 1/fan_in), biases 0, log-variances N(-9, 0.001^2).

Run (Debian's python3-torch 1.13; `apt-get install -y python3-torch`), from the repository:

    /usr/bin/python3 bench/peers/vbp_torch.py --data ../shared/data/uci/power-plant --method vbp
    /usr/bin/python3 bench/peers/vbp_torch.py --data ../shared/data/uci/protein-tertiary-structure \
        --method mfvi --hidden 100 --batch 128 --epochs 3 --dtype float32

It prints one JSON line: {"method", "data", "rows", "hidden", "batch", "dtype", "threads",
"epochs", "sec_per_epoch" (list), "median_sec_per_epoch" (over the epochs after the first, which
warms up), "beta", "test_ll"}; test_ll is the
per-point test log-likelihood in original units (a sanity check that the peer trains, not a
benchmark number). `vigo bench uci --speed --torch bench/peers/vbp_torch.py` runs it for
power and protein and writes the comparison table.

- One thread: OMP/MKL/OPENBLAS_NUM_THREADS default to 1 before torch is imported, and
  torch.set_num_threads(1) (override with --threads).
- float64 by default, as vigo computes; --dtype float32 shows PyTorch's faster single precision.
- Plain eager PyTorch, as a user would write it: no TorchScript, no torch.compile.
"""

import argparse
import json
import math
import os
import statistics
import time

_ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
_ap.add_argument("--data", required=True, help="UCI data set directory (data.txt, index_*.txt)")
_ap.add_argument("--split", type=int, default=0)
_ap.add_argument("--method", choices=["vbp", "mfvi"], default="vbp")
_ap.add_argument("--hidden", type=int, default=50)
_ap.add_argument("--batch", type=int, default=128)
_ap.add_argument("--epochs", type=int, default=3)
_ap.add_argument("--threads", type=int, default=1)
_ap.add_argument("--dtype", choices=["float64", "float32"], default="float64")
_ap.add_argument("--seed", type=int, default=1)
ARGS = _ap.parse_args()

for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, str(ARGS.threads))

import torch  # noqa: E402

torch.set_num_threads(ARGS.threads)
DT = torch.float64 if ARGS.dtype == "float64" else torch.float32
LOG_2PI = math.log(2 * math.pi)
C = 100.0
ALPHA = 10.0


def read_ints(path):
    with open(path) as f:
        return [int(float(s)) for s in f.read().split()]


def load(d, split):
    rows = []
    with open(os.path.join(d, "data.txt")) as f:
        for line in f:
            fs = line.split()
            if fs:
                rows.append([float(v) for v in fs])
    data = torch.tensor(rows, dtype=torch.float64)
    feat = read_ints(os.path.join(d, "index_features.txt"))
    targ = read_ints(os.path.join(d, "index_target.txt"))[0]
    tr = torch.tensor(read_ints(os.path.join(d, f"index_train_{split}.txt")))
    te = torch.tensor(read_ints(os.path.join(d, f"index_test_{split}.txt")))
    X, y = data[:, feat], data[:, targ]
    mx, sx = X[tr].mean(0), X[tr].std(0, unbiased=False)
    sx[sx == 0] = 1
    my, sy = y[tr].mean(), y[tr].std(unbiased=False)
    norm = lambda idx: ((X[idx] - mx) / sx, (y[idx] - my) / sy)  # noqa: E731
    return norm(tr), norm(te), float(sy)


class Net:
    """Mean-field Gaussian 1-hidden-layer ReLU net; parameters are leaf tensors."""

    def __init__(self, d, h, gen):
        def leaf(t):
            return t.to(DT).requires_grad_()

        self.mu1 = leaf(torch.randn(d, h, generator=gen, dtype=torch.float64) / math.sqrt(d))
        self.rho1 = leaf(-9 + 0.001 * torch.randn(d, h, generator=gen, dtype=torch.float64))
        self.mub1 = leaf(torch.zeros(h, dtype=torch.float64))
        self.rhob1 = leaf(-9 + 0.001 * torch.randn(h, generator=gen, dtype=torch.float64))
        self.mu2 = leaf(torch.randn(h, 1, generator=gen, dtype=torch.float64) / math.sqrt(h))
        self.rho2 = leaf(-9 + 0.001 * torch.randn(h, 1, generator=gen, dtype=torch.float64))
        self.mub2 = leaf(torch.zeros(1, dtype=torch.float64))
        self.rhob2 = leaf(-9 + 0.001 * torch.randn(1, dtype=torch.float64))
        self.params = [self.mu1, self.rho1, self.mub1, self.rhob1,
                       self.mu2, self.rho2, self.mub2, self.rhob2]

    def kl(self):
        kl = 0
        for mu, rho in zip(self.params[0::2], self.params[1::2]):
            kl = kl + 0.5 * (ALPHA * (mu * mu + rho.exp()) - rho - 1 - math.log(ALPHA)).sum()
        return kl

    def moments(self, x, method):
        """Output mean and variance; mfvi draws the hidden layer (local reparameterisation)."""
        s1, s2 = self.rho1.exp(), self.rho2.exp()
        mf = torch.addmm(self.mub1, x, self.mu1)
        vf = torch.addmm(self.rhob1.exp(), x * x, s1)
        if method == "vbp":
            p = torch.sigmoid(C * mf)
            mh = p * mf
            vh = p * vf + p * (1 - p) * mf * mf
            mo = torch.addmm(self.mub2, mh, self.mu2)
            vo = torch.addmm(self.rhob2.exp(), vh, self.mu2 * self.mu2 + s2) + (mh * mh) @ s2
        else:
            h = torch.relu(mf + vf.sqrt() * torch.randn_like(mf))
            mo = torch.addmm(self.mub2, h, self.mu2)
            vo = torch.addmm(self.rhob2.exp(), h * h, s2)
        return mo.squeeze(1), vo.squeeze(1)


def main():
    (Xtr, ytr), (Xte, yte), sy = load(ARGS.data, ARGS.split)
    Xtr, ytr, Xte, yte = Xtr.to(DT), ytr.to(DT), Xte.to(DT), yte.to(DT)
    n, d = Xtr.shape
    gen = torch.Generator().manual_seed(ARGS.seed)
    torch.manual_seed(ARGS.seed)
    net = Net(d, ARGS.hidden, gen)
    opt = torch.optim.Adam(net.params, lr=0.01)
    beta = 1.0
    times = []
    for _ in range(ARGS.epochs):
        t0 = time.perf_counter()
        perm = torch.randperm(n)
        for lo in range(0, n, ARGS.batch):
            idx = perm[lo:lo + ARGS.batch]
            x, y = Xtr[idx], ytr[idx]
            mo, vo = net.moments(x, ARGS.method)
            if ARGS.method == "vbp":
                sq = (y - mo) ** 2 + vo
            else:
                sq = (y - (mo + vo.sqrt() * torch.randn_like(mo))) ** 2
            ell = (0.5 * (math.log(beta) - LOG_2PI) - 0.5 * beta * sq).sum() * (n / len(idx))
            loss = (net.kl() - ell) / n
            opt.zero_grad()
            loss.backward()
            opt.step()
        with torch.no_grad():
            ss = 0.0
            for lo in range(0, n, 64):
                mo, vo = net.moments(Xtr[lo:lo + 64], ARGS.method)
                ss += float(((ytr[lo:lo + 64] - mo) ** 2 + vo).sum())
            beta = n / ss
        times.append(time.perf_counter() - t0)
    with torch.no_grad():  # sanity check only: one draw (mfvi) or the closed form (vbp)
        mo, vo = net.moments(Xte, ARGS.method)
        v = vo + 1 / beta
        ll = (-0.5 * (LOG_2PI + v.log() + (yte - mo) ** 2 / v)).mean() - math.log(sy)
    print(json.dumps({
        "method": ARGS.method, "data": os.path.basename(os.path.normpath(ARGS.data)), "rows": n,
        "hidden": ARGS.hidden, "batch": ARGS.batch, "dtype": ARGS.dtype, "threads": ARGS.threads,
        "torch": torch.__version__, "epochs": ARGS.epochs, "sec_per_epoch": times,
        "median_sec_per_epoch": statistics.median(times[1:] if len(times) > 1 else times),
        "beta": beta, "test_ll": float(ll),
    }))


if __name__ == "__main__":
    main()
