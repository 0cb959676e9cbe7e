#!/usr/bin/python3
"""PyTorch CPU peer for vigo's gradient benchmarks (issue 2 item 7, DESIGN.md section 3).

Times forward + backward of four log densities in float64 on one thread and prints a markdown
table; with --check prints log densities and full gradients at the fixed parameter point as
JSON for the Go cross-check tests (bench/analytic_test.go). Data and parameter point are the
closed-form formulas in README.md, the same as bench/data.go.

    /usr/bin/python3 bench/peers/torch_grad.py            # timing table
    /usr/bin/python3 bench/peers/torch_grad.py --check    # JSON check values
"""

import argparse
import json
import math
import os
import statistics
import sys
import time

# One thread for every pool torch may use (intra-op OpenMP, MKL/OpenBLAS); must precede import.
for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(1)
DT = torch.float64
LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def features(n, d):
    """x_ij = sin(0.37*(i*d + j) + 0.1), as an n x d tensor (observation-major)."""
    k = torch.arange(n * d, dtype=DT)
    return torch.sin(0.37 * k + 0.1).reshape(n, d)


def param_point(dim):
    """p_k = 0.3*cos(0.7*k + 0.2), k = 0..dim-1."""
    k = torch.arange(dim, dtype=DT)
    return 0.3 * torch.cos(0.7 * k + 0.2)


def std_normal_prior(*ts):
    """Sum of log N(t | 0, 1) over every entry of the tensors, constants kept."""
    n = sum(t.numel() for t in ts)
    return -0.5 * sum((t * t).sum() for t in ts) - n * LOG_SQRT_2PI


class Logistic:
    """Bayesian logistic regression: theta = (alpha, beta[d]), N(0,1) priors."""

    def __init__(self, n, d):
        self.name = f"logistic regression N={n:,} D={d}"
        self.key = f"logistic_{n}x{d}"
        self.x = features(n, d)
        i = torch.arange(n, dtype=DT)
        self.y = (torch.sin(1.3 * i) > 0).to(DT)
        p = param_point(d + 1)
        self.alpha = p[0].clone().requires_grad_()
        self.beta = p[1:].clone().requires_grad_()
        self.params = (self.alpha, self.beta)

    def logp(self):
        eta = torch.mv(self.x, self.beta) + self.alpha
        # sum_i y_i*eta_i - log(1 + exp(eta_i)), in torch's stable fused kernel
        ll = -F.binary_cross_entropy_with_logits(eta, self.y, reduction="sum")
        return ll + std_normal_prior(self.alpha, self.beta)


class MLP:
    """Regression with an in -> hidden (ReLU) -> 1 network, N(y | f(x), 1), N(0,1) priors.

    Parameter order (flat, as in bench.MLPLayout): W1 (hidden x in, row-major), b1, W2, b2.
    """

    def __init__(self, n, n_in=8, hidden=50):
        self.name = f"MLP {n_in}→{hidden}→1 N={n:,}"
        self.key = f"mlp_{n}"
        self.x = features(n, n_in)
        i = torch.arange(n, dtype=DT)
        self.y = self.x[:, 0] * self.x[:, 1] + 0.5 * torch.sin(1.3 * i)
        p = param_point(hidden * n_in + 2 * hidden + 1)
        o = hidden * n_in
        self.w1 = p[:o].reshape(hidden, n_in).clone().requires_grad_()
        self.b1 = p[o:o + hidden].clone().requires_grad_()
        self.w2 = p[o + hidden:o + 2 * hidden].clone().requires_grad_()
        self.b2 = p[o + 2 * hidden:].clone().requires_grad_()
        self.params = (self.w1, self.b1, self.w2, self.b2)
        self.n = n

    def logp(self):
        h = torch.relu(torch.addmm(self.b1, self.x, self.w1.t()))
        f = torch.mv(h, self.w2) + self.b2
        r = self.y - f
        ll = -0.5 * (r * r).sum() - self.n * LOG_SQRT_2PI
        return ll + std_normal_prior(*self.params)


class EightSchools:
    """Non-centred eight schools on u = (theta_trans[8], mu, log tau), Jacobian included."""

    def __init__(self):
        self.name = "eight schools (non-centred)"
        self.key = "eight_schools"
        self.y = torch.tensor([28, 8, -3, 7, -1, 1, 18, 12], dtype=DT)
        self.sigma = torch.tensor([15, 10, 16, 11, 9, 11, 10, 18], dtype=DT)
        self.u = param_point(10).requires_grad_()
        self.params = (self.u,)

    def logp(self):
        tt, mu, lt = self.u[:8], self.u[8], self.u[9]
        tau = torch.exp(lt)
        theta = mu + tau * tt
        z = (self.y - theta) / self.sigma
        lp = -0.5 * (tt * tt).sum() - 8 * LOG_SQRT_2PI
        lp = lp - 0.5 * (z * z).sum() - torch.log(self.sigma).sum() - 8 * LOG_SQRT_2PI
        lp = lp - 0.5 * (mu / 5) ** 2 - math.log(5) - LOG_SQRT_2PI
        lp = lp - math.log(math.pi) - math.log(5) - torch.log1p((tau / 5) ** 2)
        return lp + lt


def gradient(m):
    lp = m.logp()
    return lp, torch.autograd.grad(lp, m.params)


def flat_grad(m):
    lp, g = gradient(m)
    return lp.item(), torch.cat([t.reshape(-1) for t in g]).tolist()


def time_grad(m, samples, min_sample_s):
    """Median CPU seconds per gradient: warm up, then time `samples` batches of calls.

    The clock is the process's CPU time (time.process_time, all threads: with one torch thread,
    the gradient's), not wall time, so that on a shared machine the time spent waiting for a
    core is not counted — the unit of Stan's own timing (clock()) and of vigo bench ad's."""
    t0 = time.process_time()
    calls = 0
    while calls < 5 or time.process_time() - t0 < 0.2:  # warm-up: >= 5 calls and >= 0.2 CPU s
        gradient(m)
        calls += 1
    per_call = (time.process_time() - t0) / calls
    inner = max(1, int(min_sample_s / per_call))
    times = []
    for _ in range(samples):
        t0 = time.process_time()
        for _ in range(inner):
            gradient(m)
        times.append((time.process_time() - t0) / inner)
    return statistics.median(times)


def fmt_time(s):
    us = s * 1e6
    if us >= 1000:
        return f"{us / 1000:.2f} ms"
    return f"{us:.1f} µs"


def models():
    return [Logistic(1000, 10), Logistic(100_000, 50), MLP(10_000), EightSchools()]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="print check values as JSON and exit")
    ap.add_argument("--samples", type=int, default=21, help="timed batches per row (median)")
    ap.add_argument("--min-sample", type=float, default=0.05,
                    help="minimum CPU seconds per timed batch")
    ap.add_argument("--json", action="store_true",
                    help="print the timings as JSON {key: seconds per gradient} (for vigo bench ad)")
    args = ap.parse_args()

    if args.json:
        out = {"torch": torch.__version__, "threads": torch.get_num_threads()}
        for m in models():
            out[m.key] = time_grad(m, args.samples, args.min_sample)
        json.dump(out, sys.stdout)
        print()
        return

    if args.check:
        out = {"torch": torch.__version__, "point": "p_k = 0.3*cos(0.7*k + 0.2)"}
        for m in models():
            lp, g = flat_grad(m)
            out[m.key] = {"name": m.name, "logp": lp, "grad": g}
        json.dump(out, sys.stdout, indent=1)
        print()
        return

    print(f"PyTorch {torch.__version__}, float64, {torch.get_num_threads()} thread, "
          f"median of {args.samples} batches (each ≥ {args.min_sample} CPU s) after warm-up\n")
    print("| gradient of | time per gradient | log density at p | ∇ at p (first 3) |")
    print("|---|---:|---:|---|")
    for m in models():
        t = time_grad(m, args.samples, args.min_sample)
        lp, g = flat_grad(m)
        g3 = ", ".join(f"{v:.10g}" for v in g[:3])
        print(f"| {m.name} | {fmt_time(t)} | {lp:.12g} | {g3} |")


if __name__ == "__main__":
    main()
