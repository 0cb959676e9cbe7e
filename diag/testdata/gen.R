# Reference values for diag's tests, from Debian's r-cran-loo 2.5.1 and r-cran-posterior 1.4.0
# (R 4.2.2). Run from diag/testdata:  Rscript gen.R
# Every number is written with sprintf("%.17g") so the Go side reads the same doubles.
suppressMessages({library(loo); library(posterior)})
w <- function(x) sprintf("%.17g", x)

## PSIS: loo::psis(log_ratios, r_eff = 1) on stored log-ratio vectors.
psis_case <- function(name, lr) {
  p <- suppressWarnings(psis(lr, r_eff = 1))
  lw <- as.vector(weights(p, log = TRUE, normalize = FALSE))
  writeLines(c(paste("k", w(p$diagnostics$pareto_k)),
               paste("ess", w(p$diagnostics$n_eff)),
               paste("tail_len", attr(p, "tail_len")),
               paste("S", length(lr)),
               "lr lw",
               paste(w(lr), w(lw))), paste0("psis_", name, ".txt"))
}
set.seed(20240601)
x <- rnorm(1000)   # q = N(0, 1), p = N(0.2, 1.1²): a good Gaussian approximation
psis_case("normal1000", dnorm(x, 0.2, 1.1, log = TRUE) - dnorm(x, log = TRUE))
x <- rnorm(4000)
psis_case("normal4000", dnorm(x, 0.2, 1.1, log = TRUE) - dnorm(x, log = TRUE))
x <- rnorm(1000)   # q = N(0, 1), p = Student t with 3 df: heavier target tails
psis_case("t1000", dt(x, 3, log = TRUE) - dnorm(x, log = TRUE))
x <- rnorm(4000)
psis_case("t4000", dt(x, 3, log = TRUE) - dnorm(x, log = TRUE))
x <- rnorm(1000)   # q = N(0, 1), p = N(0, 3²): q far too narrow, k̂ > 1
psis_case("wide1000", dnorm(x, 0, 3, log = TRUE) - dnorm(x, log = TRUE))
psis_case("lognormal4000", 4 * rnorm(4000))   # log-normal weights with σ = 4, pathological
psis_case("small25", rnorm(25))               # tail length exactly 5
psis_case("small20", rnorm(20))               # tail length 4: no smoothing, k = Inf
psis_case("flattail100", c(rnorm(80), rep(3, 20)))  # constant tail: no smoothing, k = Inf

## posterior: convergence diagnostics and summaries on stored draws.
draws_case <- function(name, m) {   # m: iterations × chains
  writeLines(apply(m, 2, function(ch) paste(w(ch), collapse = " ")), paste0("draws_", name, ".txt"))
  s <- summarise_draws(as_draws_array(array(m, dim = c(nrow(m), ncol(m), 1))))
  s <- lapply(s[-1], as.numeric)
  vals <- c(mean = s$mean, median = s$median, sd = s$sd, mad = s$mad, q5 = s$q5, q95 = s$q95,
            s_rhat = s$rhat, s_ess_bulk = s$ess_bulk, s_ess_tail = s$ess_tail,
            rhat = rhat(m), rhat_basic = rhat_basic(m), ess_bulk = ess_bulk(m),
            ess_tail = ess_tail(m), ess_basic = ess_basic(m),
            ess_q05 = ess_quantile(m, 0.05), ess_q50 = ess_quantile(m, 0.5),
            ess_q95 = ess_quantile(m, 0.95),
            mcse_mean = mcse_mean(m), mcse_sd = mcse_sd(m),
            mcse_q05 = mcse_quantile(m, 0.05), mcse_q50 = mcse_quantile(m, 0.5),
            mcse_q95 = mcse_quantile(m, 0.95))
  writeLines(paste(names(vals), w(vals)), paste0("draws_", name, "_expect.txt"))
}
ar1 <- function(n, phi, mu = 0) { x <- numeric(n); x[1] <- rnorm(1) / sqrt(1 - phi^2)
  for (i in 2:n) x[i] <- phi * x[i - 1] + rnorm(1); x + mu }
set.seed(4711)
draws_case("ar1", sapply(1:4, function(c) ar1(500, 0.8)))                 # mixing, autocorrelated
draws_case("ar1odd", sapply(1:4, function(c) ar1(301, 0.95)))             # odd length, slow
draws_case("stuck", sapply(c(0, 0, 0, 1.5), function(mu) ar1(200, 0.5, mu)))  # one chain off
draws_case("antithetic", sapply(1:2, function(c) ar1(400, -0.6)))        # ESS above N
draws_case("heavy", sapply(1:4, function(c) rt(250, 2)))                  # heavy tails
draws_case("ties", sapply(1:4, function(c) rpois(300, 3)))                # discrete, many ties
draws_case("iid1", matrix(rnorm(1000), ncol = 1))                         # one chain (VI draws)
draws_case("short", sapply(1:2, function(c) rnorm(7)))                    # 3 draws per half chain

## Distances to reference draws as targets.md defines them (type-7 quantiles at (i − ½)/1000).
set.seed(99)
x <- rnorm(1000, 0.1, 0.9)            # "method" draws
ref <- 0.3 + 1.2 * rt(4000, 5)        # "reference" draws
u <- (seq_len(1000) - 0.5) / 1000
vals <- c(w1sd = mean(abs(quantile(x, u) - quantile(ref, u))) / sd(ref),
          sdratio = sd(x) / sd(ref), meandiffsd = abs(mean(x) - mean(ref)) / sd(ref),
          w1_q10 = mean(abs(quantile(x, (1:10 - 0.5) / 10) - quantile(ref, (1:10 - 0.5) / 10))))
writeLines(c(paste(w(x), collapse = " "), paste(w(ref), collapse = " ")), "dist_xy.txt")
writeLines(paste(names(vals), w(vals)), "dist_expect.txt")
