package apovi

import (
	"errors"
	"math/rand/v2"

	"github.com/vigo-bayes/vigo/ad"
)

var errTODO = errors.New("apovi: not implemented yet (skeleton)")

// Loss records the per-dataset loss of obj; see Model.Loss.
func (m *APOVI) Loss(t *ad.Tape, p ad.Var, obj Objective, ctx, tgt Dataset, S int, r *rand.Rand) (ad.Var, error) {
	return ad.Var{}, errTODO
}

// Predict draws S posterior samples given ctx; see Model.Predict.
func (m *APOVI) Predict(ctx Dataset, xTest []float64, S int, r *rand.Rand) (*Prediction, error) {
	return nil, errTODO
}

// Loss records the per-dataset loss of obj; see Model.Loss.
func (m *AMFVI) Loss(t *ad.Tape, p ad.Var, obj Objective, ctx, tgt Dataset, S int, r *rand.Rand) (ad.Var, error) {
	return ad.Var{}, errTODO
}

// Predict draws S posterior samples given ctx; see Model.Predict.
func (m *AMFVI) Predict(ctx Dataset, xTest []float64, S int, r *rand.Rand) (*Prediction, error) {
	return nil, errTODO
}

// Loss records the per-dataset loss of obj; see Model.Loss.
func (m *POVI) Loss(t *ad.Tape, p ad.Var, obj Objective, ctx, tgt Dataset, S int, r *rand.Rand) (ad.Var, error) {
	return ad.Var{}, errTODO
}

// Predict draws S posterior samples; see Model.Predict.
func (m *POVI) Predict(ctx Dataset, xTest []float64, S int, r *rand.Rand) (*Prediction, error) {
	return nil, errTODO
}

var (
	_ Model = (*APOVI)(nil)
	_ Model = (*AMFVI)(nil)
	_ Model = (*POVI)(nil)
)
