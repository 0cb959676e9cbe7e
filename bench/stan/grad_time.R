# Stan's own gradient cost, timed inside its sampler (vigo bench stan --rstan).
#
# Usage (from the repository root):
#   Rscript bench/stan/grad_time.R [posterior ...]
# For each posterior, the Stan program of bench/stan/ is compiled (cached in STAN_CACHE) and
# sampled with one chain of 300 warmup + 300 draws, seed 1, cores 1 (enough for an adapted step size;
# diamonds runs at the maximum tree depth, 1023 gradients per iteration); the line printed is
#   posterior, gradient evaluations (sum of n_leapfrog__ over warmup and draws), sampler wall
#   seconds (get_elapsed_time: warmup + sampling), and microseconds per gradient evaluation =
#   wall / evaluations (this includes NUTS's own bookkeeping per leapfrog step, a small share
#   for all but the cheapest models — it is the cost a Stan user sees per gradient).
# Data come from ../shared/data/posteriordb (override with POSTERIORDB).
suppressPackageStartupMessages({
  library(rstan)
  library(jsonlite)
})

cache_default <- file.path(Sys.getenv("HOME"), ".cache", "vigo-stan")
source(file.path(dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)))), "common.R"))

for (p in wanted) {
  spec <- posteriors[[p]]
  if (is.null(spec)) stop("unknown posterior ", p)
  sm <- compiled(spec[1])
  data <- read_data(spec[2])
  fit <- sampling(sm, data = data, chains = 1, iter = 600, warmup = 300,
                  seed = 1, cores = 1, refresh = 0)
  sp <- get_sampler_params(fit, inc_warmup = TRUE)[[1]]
  grads <- sum(sp[, "n_leapfrog__"])
  wall <- sum(get_elapsed_time(fit))
  cat(sprintf("%s\t%d\t%.4f\t%.4g\n", p, as.integer(grads), wall, 1e6 * wall / grads))
  flush(stdout())
}
