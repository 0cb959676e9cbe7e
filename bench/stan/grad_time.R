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

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
stan_dir <- dirname(script)
db <- Sys.getenv("POSTERIORDB",
                 file.path(dirname(dirname(dirname(stan_dir))), "shared", "data", "posteriordb"))
cache <- Sys.getenv("STAN_CACHE", file.path(Sys.getenv("HOME"), ".cache", "vigo-stan"))
dir.create(cache, showWarnings = FALSE, recursive = TRUE)
# Debian's r-cran-bh ships no headers; point boost_lib at a directory holding a link to the
# system Boost (see run_nuts.R).
if (!file.exists(rstan_options("boost_lib"))) {
  boost <- file.path(cache, "boost_include")
  dir.create(boost, showWarnings = FALSE)
  if (!file.exists(file.path(boost, "boost")))
    file.symlink("/usr/include/boost", file.path(boost, "boost"))
  rstan_options(boost_lib = boost)
}

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
  fit <- sampling(sm, data = data, chains = 1, iter = 600, warmup = 300,
                  seed = 1, cores = 1, refresh = 0)
  sp <- get_sampler_params(fit, inc_warmup = TRUE)[[1]]
  grads <- sum(sp[, "n_leapfrog__"])
  wall <- sum(get_elapsed_time(fit))
  cat(sprintf("%s\t%d\t%.4f\t%.4g\n", p, as.integer(grads), wall, 1e6 * wall / grads))
  flush(stdout())
}
