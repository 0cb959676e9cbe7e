# Stan NUTS for vigo bench flows: one posterior, one seed, the draws written to a file.
#
# Usage (vigo bench flows --stan-nuts bench/stan/flows_nuts.R calls it):
#   Rscript bench/stan/flows_nuts.R POSTERIOR SEED OUT.csv
# Samples POSTERIOR (a name of common.R's table) with 4 chains x (1000 warmup +
# 1000 draws), adapt_delta 0.8, max_treedepth 10, cores 1 (vigo bench's
# settings, as run_nuts.R), writes the kept draws of the reported quantities
# (the names in posteriors/NAME.json "dimensions") to OUT.csv with a first
# column "chain", and prints one tab-separated line: wall seconds of sampling
# (all chains, warmup included, compilation excluded) and gradient evaluations
# (sum of n_leapfrog__ over warmup and draws).
# Data come from ../shared/data/posteriordb (override with POSTERIORDB);
# compiled models are cached in STAN_CACHE (default ~/.cache/vigo-stan).
suppressPackageStartupMessages({
  library(rstan)
  library(jsonlite)
})

cache_default <- file.path(Sys.getenv("HOME"), ".cache", "vigo-stan")
source(file.path(dirname(normalizePath(sub("^--file=", "", grep("^--file=", commandArgs(trailingOnly = FALSE), value = TRUE)))), "common.R"))
if (length(wanted) != 3) stop("usage: flows_nuts.R POSTERIOR SEED OUT.csv")
p <- wanted[1]
seed <- as.integer(wanted[2])
out <- wanted[3]
spec <- posteriors[[p]]
if (is.null(spec)) stop("no Stan program for posterior ", p, " in common.R")
full <- length(spec) >= 3 && spec[3] == "full"
sm <- compiled(spec[1], full)
data <- read_data(spec[2], spec_db(spec))
t0 <- proc.time()[["elapsed"]]
fit <- sampling(sm, data = data, chains = 4, iter = 2000, warmup = 1000,
                seed = seed, cores = 1, refresh = 0,
                control = list(adapt_delta = 0.8, max_treedepth = 10))
wall <- proc.time()[["elapsed"]] - t0
sp_all <- get_sampler_params(fit, inc_warmup = TRUE)
grads <- sum(sapply(sp_all, function(s) sum(s[, "n_leapfrog__"])))
dims <- fromJSON(file.path(spec_db(spec), "posteriors", paste0(p, ".json")))$dimensions
arr <- as.array(fit) # iterations x chains x variables
vars <- dimnames(arr)[[3]]
keep <- vars[sub("\\[.*$", "", vars) %in% names(dims)]
rows <- do.call(rbind, lapply(seq_len(dim(arr)[2]), function(c) {
  cbind(chain = c, arr[, c, keep, drop = FALSE][, 1, ])
}))
colnames(rows) <- c("chain", keep)
write.csv(rows, out, row.names = FALSE, quote = FALSE)
cat(sprintf("%.3f\t%d\n", wall, as.integer(grads)))
