// two-state Gaussian HMM, forward algorithm (MODELS.md §12)
data {
  int<lower=0> N;
  int<lower=1> K;
  real y[N];
}
parameters {
  simplex[K] theta1;
  simplex[K] theta2;
  positive_ordered[K] mu;
}
model {
  vector[K] log_A[K];
  vector[K] gamma_prev;
  vector[K] gamma_cur;
  vector[K] acc;
  log_A[1] = log(theta1);
  log_A[2] = log(theta2);
  target += normal_lpdf(mu[1] | 3, 1);
  target += normal_lpdf(mu[2] | 10, 1);
  for (k in 1:K) gamma_prev[k] = normal_lpdf(y[1] | mu[k], 1);
  for (t in 2:N) {
    for (k in 1:K) {
      for (j in 1:K) acc[j] = gamma_prev[j] + log_A[j][k];
      gamma_cur[k] = log_sum_exp(acc) + normal_lpdf(y[t] | mu[k], 1);
    }
    gamma_prev = gamma_cur;
  }
  target += log_sum_exp(gamma_prev);
}
