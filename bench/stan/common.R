# Shared by run_nuts.R and grad_time.R: where the data and the compiled models live, the
# posterior → (Stan program, data) table, and the two loaders. Sourced after the caller has
# loaded rstan and jsonlite and set `cache_default`.

args <- commandArgs(trailingOnly = FALSE)
script <- normalizePath(sub("^--file=", "", args[grep("^--file=", args)]))
stan_dir <- dirname(script)
db <- Sys.getenv("POSTERIORDB",
                 file.path(dirname(dirname(dirname(stan_dir))), "shared", "data", "posteriordb"))
cache <- Sys.getenv("STAN_CACHE", cache_default)
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

wanted <- commandArgs(trailingOnly = TRUE)
if (length(wanted) == 0) wanted <- names(posteriors)

# A posterior outside the table comes from the posteriordb-full snapshot (override with
# POSTERIORDB_FULL): its posteriors/NAME.json names the program (models-rstan/, the version
# rstan 2.21 parses) and the data. Its entry is c(program, data, "full").
db_full <- Sys.getenv("POSTERIORDB_FULL",
                      file.path(dirname(dirname(dirname(stan_dir))), "shared", "data", "posteriordb-full"))
for (p in wanted) {
  if (is.null(posteriors[[p]])) {
    info <- file.path(db_full, "posteriors", paste0(p, ".json"))
    if (file.exists(info)) {
      pi <- fromJSON(info)
      posteriors[[p]] <- c(pi$model_name, pi$data_name, "full")
    }
  }
}

# spec_db is the posteriordb directory a table entry's data and posterior file come from.
spec_db <- function(spec) if (length(spec) >= 3 && spec[3] == "full") db_full else db

read_data <- function(name, root = db) {
  tmp <- tempfile()
  dir.create(tmp)
  unzip(file.path(root, "data", paste0(name, ".json.zip")), exdir = tmp)
  fromJSON(file.path(tmp, paste0(name, ".json")), simplifyVector = TRUE)
}

compiled <- function(prog, full = FALSE) {
  rds <- file.path(cache, paste0(if (full) "full-" else "", prog, ".rds"))
  if (file.exists(rds)) return(readRDS(rds))
  src <- if (full) file.path(db_full, "models-rstan", paste0(prog, ".stan")) else file.path(stan_dir, paste0(prog, ".stan"))
  sm <- stan_model(src, model_name = prog)
  saveRDS(sm, rds)
  sm
}

