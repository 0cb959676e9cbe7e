# Stan's gradient cost for the rows of vigo bench ad (bench/adbench.go), timed inside its
# sampler in the same run as vigo's (vigo bench ad --stan).
#
# Usage (from the repository root):
#   Rscript bench/stan/ad_grad.R [case ...]
# Cases: logistic_1000x10, logistic_100000x50 (logistic_glm.stan on the data of
# bench.Logistic(N, D), regenerated here with the same formulas: x_ij = sin(0.37·(i·D + j) +
# 0.1), y_i = 1 if sin(1.3·i) > 0, i and j from 0) and eight_schools
# (eight_schools_noncentered.stan on posteriordb's data). Each is sampled with one chain, seed
# 1, cores 1: 300 warmup + 300 draws (logistic_100000x50, whose gradients take milliseconds:
# 25 + 25 with max_treedepth 6, at most 63 gradients per iteration — enough gradients to time
# them, not to sample well). The line printed is as grad_time.R's: case, gradient evaluations (sum of
# n_leapfrog__ over warmup and draws), sampler seconds (get_elapsed_time: in rstan 2.21 the
# process CPU time, clock(), not wall time), and
# microseconds per gradient = seconds / evaluations (NUTS's own bookkeeping per leapfrog step
# included: the cost a Stan user sees per gradient).
suppressPackageStartupMessages({
  library(rstan)
  library(jsonlite)
})

cache_default <- file.path(Sys.getenv("HOME"), ".cache", "vigo-stan")
source(file.path(dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)))), "common.R"))

logistic_data <- function(n, d) {
  k <- outer(0:(n - 1), 0:(d - 1), function(i, j) i * d + j)
  list(N = n, D = d, X = sin(0.37 * k + 0.1), y = as.integer(sin(1.3 * (0:(n - 1))) > 0))
}

cases <- list(
  logistic_1000x10   = list(prog = "logistic_glm", data = function() logistic_data(1000, 10), warmup = 300, depth = 10),
  logistic_100000x50 = list(prog = "logistic_glm", data = function() logistic_data(100000, 50), warmup = 25, depth = 6),
  eight_schools      = list(prog = "eight_schools_noncentered", data = function() read_data("eight_schools"), warmup = 300, depth = 10)
)
if (length(wanted) == 0) wanted <- names(cases)

for (name in wanted) {
  c <- cases[[name]]
  if (is.null(c)) stop("unknown case ", name)
  sm <- compiled(c$prog)
  fit <- sampling(sm, data = c$data(), chains = 1, iter = 2 * c$warmup, warmup = c$warmup,
                  seed = 1, cores = 1, refresh = 0, control = list(max_treedepth = c$depth))
  sp <- get_sampler_params(fit, inc_warmup = TRUE)[[1]]
  grads <- sum(sp[, "n_leapfrog__"])
  wall <- sum(get_elapsed_time(fit))
  cat(sprintf("%s\t%d\t%.4f\t%.4g\n", name, as.integer(grads), wall, 1e6 * wall / grads))
  flush(stdout())
}
