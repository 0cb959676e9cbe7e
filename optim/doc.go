// Package optim holds first-order stochastic optimisers that update caller-owned parameter
// slices in place: Adam, RMSprop, Adagrad, SGD with (Nesterov) momentum and Stan's ADVI step-size
// sequence, plus step-size schedules and gradient clipping.
//
// Convention: every optimiser minimises. Step(params, grad) moves params against grad, so a
// variational fit passes the gradient of −ELBO (the loss). Step never writes to grad:
// clipping is applied on the fly.
//
// Each optimiser is built from a Config whose zero value means the documented defaults
// (field by field: a zero field takes its default). Hyperparameters live in the Config;
// the mutable state (step count and moment vectors) marshals to bytes or JSON and restores
// bit for bit, so a resumed run reproduces an uninterrupted one exactly. Restoring needs an
// optimiser built with the same Config and length.
//
// Cost: one Step is O(n) with two passes over the gradient when ClipNorm is set and one
// otherwise; it does not allocate.
package optim
