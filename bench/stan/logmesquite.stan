// log-log regression of mesquite weight (MODELS.md §8)
data {
  int<lower=0> N;
  vector[N] weight;
  vector[N] diam1;
  vector[N] diam2;
  vector[N] canopy_height;
  vector[N] total_height;
  vector[N] density;
  vector[N] group;
}
transformed data {
  vector[N] lw = log(weight);
  vector[N] ld1 = log(diam1);
  vector[N] ld2 = log(diam2);
  vector[N] lch = log(canopy_height);
  vector[N] lth = log(total_height);
  vector[N] lde = log(density);
}
parameters {
  vector[7] beta;
  real<lower=0> sigma;
}
model {
  lw ~ normal(beta[1] + beta[2] * ld1 + beta[3] * ld2 + beta[4] * lch
              + beta[5] * lth + beta[6] * lde + beta[7] * group, sigma);
}
