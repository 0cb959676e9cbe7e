// latent GP Poisson regression, non-centred f = L * f_tilde (MODELS.md §5)
data {
  int<lower=1> N;
  real x[N];
  int<lower=0> k[N];
}
parameters {
  real<lower=0> rho;
  real<lower=0> alpha;
  vector[N] f_tilde;
}
transformed parameters {
  vector[N] f;
  {
    matrix[N, N] C = cov_exp_quad(x, alpha, rho);
    for (i in 1:N) C[i, i] += 1e-10;
    f = cholesky_decompose(C) * f_tilde;
  }
}
model {
  rho ~ gamma(25, 4);
  alpha ~ normal(0, 2);
  f_tilde ~ normal(0, 1);
  k ~ poisson_log(f);
}
