package flow

import (
	"net/http"
	"strings"

	"github.com/google/uuid"

	"quire/server/internal/api"
	"quire/storage"
)

// Rulesets (FormKiQ's /rulesets; storage rulesets.go matches the rules).
// Site settings: read with READ, written with GOVERN.

type rulesetIn struct {
	Description *string  `json:"description"`
	Priority    *float64 `json:"priority"`
	Version     *float64 `json:"version"`
	Status      *string  `json:"status"`
}

func (in *rulesetIn) merge(r *storage.Ruleset) {
	if in.Description != nil {
		r.Description = *in.Description
	}
	if in.Priority != nil {
		r.Priority = *in.Priority
	}
	if in.Version != nil {
		r.Version = *in.Version
	}
	if in.Status != nil {
		r.Status = strings.ToUpper(*in.Status)
	}
}

func (s *Handlers) readRuleset(r *api.Request) (*rulesetIn, error) {
	var in struct {
		Ruleset *rulesetIn `json:"ruleset"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return nil, err
	}
	if in.Ruleset == nil {
		return nil, api.Invalid("ruleset", "'ruleset' is required")
	}
	return in.Ruleset, nil
}

func rulesetJSON(r *storage.Ruleset) map[string]any {
	return map[string]any{"rulesetId": r.RulesetID, "description": r.Description, "priority": r.Priority,
		"version": r.Version, "status": r.Status, "insertedDate": api.FormatDate(r.InsertedDate)}
}

// HandleAddRuleset serves POST /rulesets.
func (s *Handlers) HandleAddRuleset(r *api.Request) error {
	in, err := s.readRuleset(r)
	if err != nil {
		return err
	}
	rs := storage.Ruleset{RulesetID: uuid.NewString(), Status: storage.WorkflowActive, Version: 1}
	in.merge(&rs)
	if err := storage.CheckRuleset(&rs); err != nil {
		return err
	}
	if _, err := s.Apply(r, storage.OpPutRuleset, storage.PutRuleset{Ruleset: rs, Create: true}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"rulesetId": rs.RulesetID})
}

// HandleUpdateRuleset serves PATCH /rulesets/{rulesetId}.
func (s *Handlers) HandleUpdateRuleset(r *api.Request) error {
	in, err := s.readRuleset(r)
	if err != nil {
		return err
	}
	rs, err := s.DB.GetRuleset(r.Site, api.PathParam(r, "rulesetId"))
	if err != nil {
		return err
	}
	in.merge(rs)
	if err := storage.CheckRuleset(rs); err != nil {
		return err
	}
	if _, err := s.Apply(r, storage.OpPutRuleset, storage.PutRuleset{Ruleset: *rs}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Ruleset updated"})
}

// HandleGetRulesets serves GET /rulesets.
func (s *Handlers) HandleGetRulesets(r *api.Request) error {
	return api.KeyPage(r, "rs", "rulesets", func(after string, limit int) ([]storage.Ruleset, string, error) {
		return s.DB.Rulesets(r.Site, after, limit)
	}, rulesetJSON)
}

// HandleGetRuleset serves GET /rulesets/{rulesetId}.
func (s *Handlers) HandleGetRuleset(r *api.Request) error {
	rs, err := s.DB.GetRuleset(r.Site, api.PathParam(r, "rulesetId"))
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"ruleset": rulesetJSON(rs)})
}

// HandleDeleteRuleset serves DELETE /rulesets/{rulesetId}: the ruleset and
// its rules.
func (s *Handlers) HandleDeleteRuleset(r *api.Request) error {
	if _, err := s.Apply(r, storage.OpDeleteRuleset, storage.DeleteRule{RulesetID: api.PathParam(r, "rulesetId")}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Ruleset deleted"})
}

type ruleIn struct {
	Priority    *float64 `json:"priority"`
	Description *string  `json:"description"`
	WorkflowID  *string  `json:"workflowId"`
	Status      *string  `json:"status"`
	Conditions  *struct {
		Must []struct {
			Attribute    string `json:"attribute"` // deprecated name of criterion
			Criterion    string `json:"criterion"`
			AttributeKey string `json:"attributeKey"`
			FieldName    string `json:"fieldName"`
			Value        string `json:"value"`
			Operation    string `json:"operation"`
		} `json:"must"`
	} `json:"conditions"`
}

func (in *ruleIn) merge(r *storage.Rule) error {
	if in.Priority != nil {
		r.Priority = *in.Priority
	}
	if in.Description != nil {
		r.Description = *in.Description
	}
	if in.WorkflowID != nil {
		r.WorkflowID = *in.WorkflowID
	}
	if in.Status != nil {
		r.Status = strings.ToUpper(*in.Status)
	}
	if in.Conditions != nil {
		if len(in.Conditions.Must) > storage.MaxRuleConditions {
			return api.Invalid("conditions.must", "too many conditions")
		}
		r.Conditions.Must = r.Conditions.Must[:0]
		for _, m := range in.Conditions.Must {
			c := m.Criterion
			if c == "" {
				c = m.Attribute
			}
			r.Conditions.Must = append(r.Conditions.Must, storage.RuleCondition{Criterion: strings.ToUpper(c),
				AttributeKey: m.AttributeKey, FieldName: m.FieldName, Value: m.Value, Operation: strings.ToUpper(m.Operation)})
		}
	}
	return storage.CheckRule(r)
}

func (s *Handlers) readRule(r *api.Request) (*ruleIn, error) {
	var in struct {
		Rule *ruleIn `json:"rule"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return nil, err
	}
	if in.Rule == nil {
		return nil, api.Invalid("rule", "'rule' is required")
	}
	return in.Rule, nil
}

func ruleJSON(r *storage.Rule) map[string]any {
	must := make([]map[string]any, 0, len(r.Conditions.Must))
	for _, m := range r.Conditions.Must {
		x := map[string]any{"criterion": m.Criterion, "value": m.Value, "operation": m.Operation}
		if m.AttributeKey != "" {
			x["attributeKey"] = m.AttributeKey
		}
		if m.FieldName != "" {
			x["fieldName"] = m.FieldName
		}
		must = append(must, x)
	}
	return map[string]any{"ruleId": r.RuleID, "priority": r.Priority, "description": r.Description,
		"workflowId": r.WorkflowID, "status": r.Status, "conditions": map[string]any{"must": must}}
}

// HandleAddRule serves POST /rulesets/{rulesetId}/rules.
func (s *Handlers) HandleAddRule(r *api.Request) error {
	in, err := s.readRule(r)
	if err != nil {
		return err
	}
	rule := storage.Rule{RulesetID: api.PathParam(r, "rulesetId"), RuleID: uuid.NewString(), Status: storage.WorkflowActive}
	if err := in.merge(&rule); err != nil {
		return err
	}
	if _, err := s.Apply(r, storage.OpPutRule, storage.PutRule{Rule: rule, Create: true}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"ruleId": rule.RuleID})
}

// HandleUpdateRule serves PATCH /rulesets/{rulesetId}/rules/{ruleId}.
func (s *Handlers) HandleUpdateRule(r *api.Request) error {
	in, err := s.readRule(r)
	if err != nil {
		return err
	}
	rule, err := s.DB.GetRule(r.Site, api.PathParam(r, "rulesetId"), api.PathParam(r, "ruleId"))
	if err != nil {
		return err
	}
	if err := in.merge(rule); err != nil {
		return err
	}
	if _, err := s.Apply(r, storage.OpPutRule, storage.PutRule{Rule: *rule}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Rule updated"})
}

// HandleGetRules serves GET /rulesets/{rulesetId}/rules.
func (s *Handlers) HandleGetRules(r *api.Request) error {
	rs := api.PathParam(r, "rulesetId")
	return api.KeyPage(r, "ru", "rules", func(after string, limit int) ([]storage.Rule, string, error) {
		return s.DB.Rules(r.Site, rs, after, limit)
	}, ruleJSON)
}

// HandleGetRule serves GET /rulesets/{rulesetId}/rules/{ruleId}.
func (s *Handlers) HandleGetRule(r *api.Request) error {
	rule, err := s.DB.GetRule(r.Site, api.PathParam(r, "rulesetId"), api.PathParam(r, "ruleId"))
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"rule": ruleJSON(rule)})
}

// HandleDeleteRule serves DELETE /rulesets/{rulesetId}/rules/{ruleId}.
func (s *Handlers) HandleDeleteRule(r *api.Request) error {
	p := storage.DeleteRule{RulesetID: api.PathParam(r, "rulesetId"), RuleID: api.PathParam(r, "ruleId")}
	if _, err := s.Apply(r, storage.OpDeleteRule, p); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Rule deleted"})
}
