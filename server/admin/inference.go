package admin

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"quire/server/internal/api"
	"quire/storage"
)

// Inference models (SERVICE-SPEC.md §2.10; API.md "AI models"): the models
// of the server's OpenAI-compatible endpoint in FormKiQ's Bedrock-shaped
// listing, with the values that are true of an on-prem endpoint.

// HandleGetInferenceModels serves GET /system/inferenceModels.
func (s *Handlers) HandleGetInferenceModels(r *api.Request) error {
	ids, err := s.inferenceModels(r)
	if err != nil {
		return err
	}
	agreed, err := s.DB.ModelAgreements()
	if err != nil {
		return err
	}
	require := s.Deps.RequireModelAgreement
	out := make([]map[string]any, 0, len(ids))
	for _, id := range ids {
		agreement := "AVAILABLE"
		if _, ok := agreed[id]; require && !ok {
			agreement = "NOT_AVAILABLE"
		}
		out = append(out, map[string]any{
			"name":                    id,
			"defaultModelId":          id,
			"modelLifecycleStatus":    "ACTIVE",
			"agreementAvailability":   agreement,
			"authorizationStatus":     "AUTHORIZED",
			"entitlementAvailability": "AVAILABLE",
			"regionAvailability":      "AVAILABLE",
			"modelInvocations":        []map[string]any{{"modelId": id, "invocationType": "DIRECT"}},
		})
	}
	return r.JSON(map[string]any{"inferenceModels": out})
}

// HandleAgreeInferenceModel serves POST /system/inferenceModels/agreement
// (Admins): the model must be one the endpoint offers.
func (s *Handlers) HandleAgreeInferenceModel(r *api.Request) error {
	var in struct {
		ModelID *string `json:"modelId"`
	}
	if err := r.ReadBody(&in, 64<<10); err != nil {
		return err
	}
	if in.ModelID == nil || strings.TrimSpace(*in.ModelID) == "" {
		return api.Invalid("modelId", "'modelId' is required")
	}
	ids, err := s.inferenceModels(r)
	if err != nil {
		return err
	}
	if !slices.Contains(ids, *in.ModelID) {
		return api.Invalid("modelId", fmt.Sprintf("model '%s' is not offered by the LLM endpoint", *in.ModelID))
	}
	if _, err := s.Apply(r, storage.OpAgreeModel, storage.AgreeModel{ModelID: *in.ModelID}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Agreement to model '%s' recorded", *in.ModelID)})
}

// inferenceModels asks the endpoint for its models; an endpoint that
// does not answer is a 502, not a 500.
func (s *Handlers) inferenceModels(r *api.Request) ([]string, error) {
	if s.Deps.Pipeline == nil {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(r.UserContext(), 20*time.Second)
	defer cancel()
	ids, err := s.Deps.Pipeline.Models(ctx)
	if err != nil {
		return nil, api.ErrStatus(http.StatusBadGateway, err.Error())
	}
	return ids, nil
}
