package storage

import (
	"encoding/json"
	"errors"
	"time"
)

// ModelAgreement records that an admin accepted the usage agreement of
// an inference model (POST /system/inferenceModels/agreement). With
// llm.require_agreement set, LLM actions use only agreed models.
type ModelAgreement struct {
	ModelID      string    `json:"modelId"`
	UserID       string    `json:"userId,omitempty"`
	InsertedDate time.Time `json:"insertedDate"`
}

// AgreeModel is the payload of OpAgreeModel.
type AgreeModel struct {
	ModelID string `json:"modelId"`
}

func applyAgreeModel(t *tx, c *Command) (any, error) {
	p, err := decode[AgreeModel](c)
	if err != nil {
		return nil, err
	}
	if p.ModelID == "" {
		return nil, Invalid("modelId", "'modelId' is required")
	}
	if err := checkName("modelId", p.ModelID); err != nil {
		return nil, err
	}
	if ok, err := t.exists(modelAgreementKey(p.ModelID)); err != nil || ok {
		return nil, err // agreeing again keeps the first record
	}
	return nil, t.setJSON(modelAgreementKey(p.ModelID), ModelAgreement{ModelID: p.ModelID, UserID: c.User, InsertedDate: c.At})
}

// ModelAgreed reports whether the model's agreement was accepted.
func (d *DB) ModelAgreed(model string) (bool, error) {
	if model == "" || len(model) > MaxKeyBytes {
		return false, nil
	}
	var ok bool
	err := d.view(func(t *tx) error {
		var err error
		ok, err = t.exists(modelAgreementKey(model))
		return err
	})
	return ok, err
}

// ModelAgreements returns every accepted agreement by model id.
func (d *DB) ModelAgreements() (map[string]ModelAgreement, error) {
	out := map[string]ModelAgreement{}
	err := d.view(func(t *tx) error {
		return t.each([]byte(pfxModelAgreement), func(_, v []byte) error {
			var a ModelAgreement
			if err := json.Unmarshal(v, &a); err != nil {
				return err
			}
			out[a.ModelID] = a
			return nil
		})
	})
	if errors.Is(err, ErrNotFound) {
		err = nil
	}
	return out, err
}
