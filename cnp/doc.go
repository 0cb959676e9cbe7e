// Package cnp holds the convolutional conditional neural processes (ConvCNPs; Gordon,
// Bruinsma, Foong, Requeima, Dubois & Turner 2020, "Convolutional conditional neural
// processes", ICLR) that Rochussen (2023, "Amortised Inference in Bayesian Neural Networks",
// arXiv:2309.03018) compares APOVI with, built as the thesis's code builds them (reference
// sheet ../shared/docs/apovi.md §1.5, §1.6, §2, §3, discrepancies D5–D8):
//
//   - OffGrid, the 1-D model of the regression experiment (E2): SetConv encoder onto a uniform
//     grid, a CNN, SetConv decoders to the targets, heteroscedastic Gaussian output;
//   - Grid, the image model of the completion experiment (E3): a positive-weight,
//     positive-bias masked convolution encoder, residual depthwise-separable blocks and a
//     per-pixel MLP, Gaussian output with a sigmoid mean and a floored scale (the two
//     positivity constraints are npf's, where the thesis's code leaves the bias raw and the
//     scale unfloored; see Grid).
//
// Both are trained by maximum likelihood on context/target splits (the NPML objective, with
// the thesis's normalisations) with Adam through Train. Everything runs on vigo's tape (package
// ad) in float64; the convolutions are custom tape nodes (an im2col for the 1-D CNN, a direct
// depthwise stencil for the 2-D one) whose gradients are tested against finite differences.
package cnp
