// GARCH(1,1) with flat priors; beta1's upper bound depends on alpha1 (MODELS.md §4)
data {
  int<lower=0> T;
  real y[T];
  real<lower=0> sigma1;
}
parameters {
  real mu;
  real<lower=0> alpha0;
  real<lower=0, upper=1> alpha1;
  real<lower=0, upper=(1 - alpha1)> beta1;
}
model {
  real s[T];
  s[1] = sigma1;
  for (t in 2:T)
    s[t] = sqrt(alpha0 + alpha1 * square(y[t - 1] - mu) + beta1 * square(s[t - 1]));
  y ~ normal(mu, s);
}
