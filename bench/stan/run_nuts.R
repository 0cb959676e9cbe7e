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

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
stan_dir <- dirname(script)
db <- Sys.getenv("POSTERIORDB",
                 file.path(dirname(dirname(dirname(stan_dir))), "shared", "data", "posteriordb"))
cache <- Sys.getenv("STAN_CACHE", file.path(tempdir(), "stan_cache"))
dir.create(cache, showWarnings = FALSE, recursive = TRUE)
# Debian's r-cran-bh ships no headers (it depends on libboost-dev), so rstan's
# boost_lib option is empty: point it at a directory holding only a link to
# the system Boost (not -I/usr/include itself, which upsets #include_next).
if (!file.exists(rstan_options("boost_lib"))) {
  boost <- file.path(cache, "boost_include")
  dir.create(boost, showWarnings = FALSE)
  if (!file.exists(file.path(boost, "boost")))
    file.symlink("/usr/include/boost", file.path(boost, "boost"))
  rstan_options(boost_lib = boost)
}

# posterior name -> (Stan program, data file)
posteriors <- list(
  "eight_schools-eight_schools_noncentered" = c("eight_schools_noncentered", "eight_schools"),
  "low_dim_gauss_mix-low_dim_gauss_mix"     = c("low_dim_gauss_mix", "low_dim_gauss_mix"),
  "garch-garch11"                           = c("garch11", "garch"),
  "hmm_example-hmm_example"                 = c("hmm_example", "hmm_example"),
  "arK-arK"                                 = c("arK", "arK"),
  "mesquite-logmesquite"                    = c("logmesquite", "mesquite"),
  "sblrc-blr"                               = c("blr", "sblrc"),
  "kidiq-kidscore_momhsiq"                  = c("kidscore_momhsiq", "kidiq"),
  "nes2000-nes"                             = c("nes", "nes2000"),
  "gp_pois_regr-gp_pois_regr"               = c("gp_pois_regr", "gp_pois_regr"),
  "earnings-logearn_interaction"            = c("logearn_interaction", "earnings"),
  "diamonds-diamonds"                       = c("diamonds", "diamonds")
)

seed <- as.integer(Sys.getenv("SEED", "1"))
wanted <- commandArgs(trailingOnly = TRUE)
if (length(wanted) == 0) wanted <- names(posteriors)

read_data <- function(name) {
  tmp <- tempfile()
  dir.create(tmp)
  unzip(file.path(db, "data", paste0(name, ".json.zip")), exdir = tmp)
  fromJSON(file.path(tmp, paste0(name, ".json")), simplifyVector = TRUE)
}

compiled <- function(prog) {
  rds <- file.path(cache, paste0(prog, ".rds"))
  if (file.exists(rds)) return(readRDS(rds))
  sm <- stan_model(file.path(stan_dir, paste0(prog, ".stan")), model_name = prog)
  saveRDS(sm, rds)
  sm
}

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
