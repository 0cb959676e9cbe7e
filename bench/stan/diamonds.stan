// diamonds: centred-design normal regression (MODELS.md §2)
data {
  int<lower=1> N;
  vector[N] Y;
  int<lower=1> K;
  matrix[N, K] X;
  int prior_only;
}
transformed data {
  int Kc = K - 1;
  matrix[N, Kc] Xc;
  vector[Kc] means_X;
  for (j in 2:K) {
    means_X[j - 1] = mean(X[, j]);
    Xc[, j - 1] = X[, j] - means_X[j - 1];
  }
}
parameters {
  vector[Kc] b;
  real Intercept;
  real<lower=0> sigma;
}
model {
  target += normal_lpdf(b | 0, 1);
  target += student_t_lpdf(Intercept | 3, 8, 10);
  target += student_t_lpdf(sigma | 3, 0, 10) - student_t_lccdf(0 | 3, 0, 10);
  if (!prior_only) target += normal_lpdf(Y | Intercept + Xc * b, sigma);
}
