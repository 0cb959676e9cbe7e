// Bayesian logistic regression of vigo bench ad (bench/adbench.go, logisticAD): intercept
// alpha and D coefficients beta with N(0, 1) priors, the likelihood as Stan's fused GLM
// function (the same one-node form as vigo's density.BernoulliLogitGLM).
data {
  int<lower=1> N;
  int<lower=1> D;
  matrix[N, D] X;
  int<lower=0, upper=1> y[N];
}
parameters {
  real alpha;
  vector[D] beta;
}
model {
  alpha ~ std_normal();
  beta ~ std_normal();
  y ~ bernoulli_logit_glm(X, alpha, beta);
}
