# Stan NUTS reference run for vigo's posteriordb bench (issue 5).
#
# Usage (from the repository root):
#   Rscript bench/stan/run_nuts.R [posterior ...] >> bench/results/stan_nuts.tsv
# With no arguments every posterior is run, fastest first. Each posterior is
# sampled with 4 chains x (1000 warmup + 1000 draws), adapt_delta 0.8,
# max_treedepth 10, seed 1, cores 1 (vigo bench's settings), and one
# tab-separated line is printed:
#   posterior, seed, wall s (sampling only, all chains), gradient evaluations
#   (sum of n_leapfrog__ over warmup and draws), gradient evaluations in the
#   draws only, min ESS-bulk over the reported quantities (and which one),
#   ESS-bulk per 1000 gradient evaluations (all, and draws only), divergences,
#   draws at max tree depth.
# Data come from ../shared/data/posteriordb (override with POSTERIORDB).
# SEED (default 1) sets the seed; STAN_CACHE keeps compiled models between runs.
suppressPackageStartupMessages({
  library(rstan)
  library(jsonlite)
  library(posterior)
})

cache_default <- file.path(tempdir(), "stan_cache")
source(file.path(dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)))), "common.R"))
seed <- as.integer(Sys.getenv("SEED", "1"))

for (p in wanted) {
  spec <- posteriors[[p]]
  if (is.null(spec)) stop("unknown posterior ", p)
  sm <- compiled(spec[1])
  data <- read_data(spec[2])
  t0 <- proc.time()[["elapsed"]]
  fit <- sampling(sm, data = data, chains = 4, iter = 2000, warmup = 1000,
                  seed = seed, cores = 1, refresh = 0,
                  control = list(adapt_delta = 0.8, max_treedepth = 10))
  wall <- proc.time()[["elapsed"]] - t0
  sp_all <- get_sampler_params(fit, inc_warmup = TRUE)
  sp_post <- get_sampler_params(fit, inc_warmup = FALSE)
  grads <- sum(sapply(sp_all, function(s) sum(s[, "n_leapfrog__"])))
  grads_post <- sum(sapply(sp_post, function(s) sum(s[, "n_leapfrog__"])))
  div <- sum(sapply(sp_post, function(s) sum(s[, "divergent__"])))
  maxd <- sum(sapply(sp_post, function(s) sum(s[, "treedepth__"] >= 10)))
  # reported quantities: the names in posteriors/NAME.json "dimensions"
  dims <- fromJSON(file.path(db, "posteriors", paste0(p, ".json")))$dimensions
  arr <- as_draws_array(as.array(fit))
  vars <- variables(arr)
  base <- sub("\\[.*$", "", vars)
  keep <- vars[base %in% names(dims)]
  s <- summarise_draws(subset_draws(arr, variable = keep), "ess_bulk")
  i <- which.min(s$ess_bulk)
  ess <- s$ess_bulk[i]
  cat(sprintf("%s\t%d\t%.2f\t%d\t%d\t%.0f (%s)\t%.3g\t%.3g\t%d\t%d\n", p, seed, wall,
              as.integer(grads), as.integer(grads_post), ess, s$variable[i],
              1000 * ess / grads, 1000 * ess / grads_post, as.integer(div),
              as.integer(maxd)))
  flush(stdout())
}
