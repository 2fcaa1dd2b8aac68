package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Rulesets (FormKiQ's /rulesets): a rule's conditions are matched against
// a document when it is created or updated (its record, attributes or
// content type change), in the transaction of that change, and a match
// starts the rule's workflow on the document. Rules therefore apply to
// documents created or updated after the rule exists; existing documents
// are not swept.

// Ruleset is a set of rules (Ruleset).
type Ruleset struct {
	RulesetID    string    `json:"rulesetId"`
	Description  string    `json:"description,omitempty"`
	Priority     float64   `json:"priority"`
	Version      float64   `json:"version"`
	Status       string    `json:"status"`
	InsertedDate time.Time `json:"insertedDate"`
	UserID       string    `json:"userId,omitempty"`
}

// Rule is one rule of a ruleset (Rule).
type Rule struct {
	RulesetID    string         `json:"rulesetId"`
	RuleID       string         `json:"ruleId"`
	Priority     float64        `json:"priority"`
	Description  string         `json:"description,omitempty"`
	WorkflowID   string         `json:"workflowId"`
	Status       string         `json:"status"`
	Conditions   RuleConditions `json:"conditions"`
	InsertedDate time.Time      `json:"insertedDate"`
	UserID       string         `json:"userId,omitempty"`
}

// RuleConditions are a rule's conditions: all of Must match.
type RuleConditions struct {
	Must []RuleCondition `json:"must"`
}

// RuleCondition is one condition (RuleConditionMust).
type RuleCondition struct {
	Criterion    string `json:"criterion"`
	AttributeKey string `json:"attributeKey,omitempty"`
	FieldName    string `json:"fieldName,omitempty"`
	Value        string `json:"value"`
	Operation    string `json:"operation"`
}

// Rule limits (API.md "Rulesets").
const MaxRuleConditions = 20

// RuleFields are the document fields a FIELD condition may name.
var RuleFields = []string{"path", "contentType", "userId", "deepLinkPath", "checksum"}

func rulesetKey(site, id string) []byte { return []byte(pfxRuleset + sk(site) + "/" + id) }
func rulesetPrefix(site string) []byte  { return []byte(pfxRuleset + sk(site) + "/") }
func ruleKey(site, rs, id string) []byte {
	return []byte(pfxRule + sk(site) + "/" + rs + "/" + id)
}
func rulePrefix(site, rs string) []byte { return []byte(pfxRule + sk(site) + "/" + rs + "/") }
func rulePrefixAll(site string) []byte  { return []byte(pfxRule + sk(site) + "/") }

func rulesetNotFound(id string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Ruleset '%s' not found", id)}
}

func ruleNotFound(id string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Rule '%s' not found", id)}
}

func checkStatus(key, s string) []ValidationItem {
	if s != WorkflowActive && s != WorkflowInactive {
		return []ValidationItem{{Key: key, Msg: "invalid 'status', use ACTIVE or INACTIVE"}}
	}
	return nil
}

func checkNumber(key string, v float64) []ValidationItem {
	if math.IsNaN(v) || math.IsInf(v, 0) || math.Abs(v) > 1e15 {
		return []ValidationItem{{Key: key, Msg: "invalid '" + key + "'"}}
	}
	return nil
}

// CheckRuleset validates a ruleset's fields.
func CheckRuleset(r *Ruleset) error {
	var errs []ValidationItem
	errs = append(errs, CheckText("description", r.Description, MaxDescriptionBytes)...)
	errs = append(errs, checkStatus("status", r.Status)...)
	errs = append(errs, checkNumber("priority", r.Priority)...)
	errs = append(errs, checkNumber("version", r.Version)...)
	return limitsErr(errs)
}

// CheckRule validates a rule's fields (the workflow's existence is the
// applier's).
func CheckRule(r *Rule) error {
	var errs []ValidationItem
	add := func(k, m string) { errs = append(errs, ValidationItem{Key: k, Msg: m}) }
	errs = append(errs, CheckText("description", r.Description, MaxDescriptionBytes)...)
	errs = append(errs, checkStatus("status", r.Status)...)
	errs = append(errs, checkNumber("priority", r.Priority)...)
	if r.WorkflowID == "" {
		add("workflowId", "'workflowId' is required")
	}
	errs = append(errs, CheckText("workflowId", r.WorkflowID, MaxKeyBytes)...)
	switch n := len(r.Conditions.Must); {
	case n == 0:
		add("conditions.must", "'conditions.must' is required")
	case n > MaxRuleConditions:
		add("conditions.must", fmt.Sprintf("a rule has at most %d conditions", MaxRuleConditions))
		return limitsErr(errs)
	}
	for i, m := range r.Conditions.Must {
		k := fmt.Sprintf("conditions.must[%d]", i)
		switch m.Criterion {
		case "":
			add(k+".criterion", "'criterion' is required")
		case "CONTENT_TYPE":
		case "ATTRIBUTE":
			if m.AttributeKey == "" {
				add(k+".attributeKey", "'attributeKey' is required for criterion ATTRIBUTE")
			}
		case "FIELD":
			if !slices.Contains(RuleFields, m.FieldName) {
				add(k+".fieldName", "'fieldName' must be one of "+strings.Join(RuleFields, ", "))
			}
		case "TEXT", "BARCODE":
			add(k+".criterion", "criterion '"+m.Criterion+"' is not supported: rules are matched when a document is created or updated, before its content is read")
		default:
			add(k+".criterion", "invalid 'criterion'")
		}
		switch m.Operation {
		case "":
			add(k+".operation", "'operation' is required")
		case "EQ", "CONTAINS":
		default:
			add(k+".operation", "invalid 'operation', use EQ or CONTAINS")
		}
		errs = append(errs, CheckText(k+".attributeKey", m.AttributeKey, MaxKeyBytes)...)
		errs = append(errs, CheckText(k+".value", m.Value, MaxKeyBytes)...)
	}
	return limitsErr(errs)
}

// PutRuleset is the payload of OpPutRuleset: Create for POST, else an
// update of an existing ruleset (the caller merged the fields).
type PutRuleset struct {
	Ruleset Ruleset `json:"ruleset"`
	Create  bool    `json:"create,omitempty"`
}

func applyPutRuleset(t *tx, c *Command) (any, error) {
	p, err := decode[PutRuleset](c)
	if err != nil {
		return nil, err
	}
	r := p.Ruleset
	if err := checkName("rulesetId", r.RulesetID); err != nil {
		return nil, err
	}
	if err := CheckRuleset(&r); err != nil {
		return nil, err
	}
	ok, err := t.exists(rulesetKey(c.Site, r.RulesetID))
	switch {
	case err != nil:
		return nil, err
	case ok && p.Create:
		return nil, &ConflictError{Msg: fmt.Sprintf("rulesetId '%s' already exists", r.RulesetID)}
	case !ok && !p.Create:
		return nil, rulesetNotFound(r.RulesetID)
	}
	if p.Create {
		r.InsertedDate, r.UserID = c.At, c.User
	}
	if err := t.setJSON(rulesetKey(c.Site, r.RulesetID), r); err != nil {
		return nil, err
	}
	return nil, ensureSite(t, c)
}

// DeleteRule is the payload of OpDeleteRuleset (RuleID empty) and
// OpDeleteRule.
type DeleteRule struct {
	RulesetID string `json:"rulesetId"`
	RuleID    string `json:"ruleId,omitempty"`
}

// applyDeleteRuleset removes a ruleset and its rules.
func applyDeleteRuleset(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteRule](c)
	if err != nil {
		return nil, err
	}
	if ok, err := t.exists(rulesetKey(c.Site, p.RulesetID)); err != nil {
		return nil, err
	} else if !ok {
		return nil, rulesetNotFound(p.RulesetID)
	}
	for _, k := range t.keys(rulePrefix(c.Site, p.RulesetID)) {
		if err := t.del(k); err != nil {
			return nil, err
		}
	}
	return nil, t.del(rulesetKey(c.Site, p.RulesetID))
}

// PutRule is the payload of OpPutRule: Create for POST, else an update of
// an existing rule (the caller merged the fields).
type PutRule struct {
	Rule   Rule `json:"rule"`
	Create bool `json:"create,omitempty"`
}

func applyPutRule(t *tx, c *Command) (any, error) {
	p, err := decode[PutRule](c)
	if err != nil {
		return nil, err
	}
	r := p.Rule
	if err := checkName("ruleId", r.RuleID); err != nil {
		return nil, err
	}
	if ok, err := t.exists(rulesetKey(c.Site, r.RulesetID)); err != nil {
		return nil, err
	} else if !ok {
		return nil, rulesetNotFound(r.RulesetID)
	}
	if err := CheckRule(&r); err != nil {
		return nil, err
	}
	if ok, err := t.exists(workflowKey(c.Site, r.WorkflowID)); err != nil {
		return nil, err
	} else if !ok {
		return nil, Invalid("workflowId", "'workflowId' does not exist")
	}
	var old Rule
	err = t.getJSON(ruleKey(c.Site, r.RulesetID, r.RuleID), &old)
	switch {
	case err == nil && p.Create:
		return nil, &ConflictError{Msg: fmt.Sprintf("ruleId '%s' already exists", r.RuleID)}
	case errors.Is(err, ErrNotFound) && !p.Create:
		return nil, ruleNotFound(r.RuleID)
	case err != nil && !errors.Is(err, ErrNotFound):
		return nil, err
	}
	if p.Create {
		r.InsertedDate, r.UserID = c.At, c.User
	} else {
		r.InsertedDate, r.UserID = old.InsertedDate, old.UserID
	}
	return nil, t.setJSON(ruleKey(c.Site, r.RulesetID, r.RuleID), r)
}

func applyDeleteRule(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteRule](c)
	if err != nil {
		return nil, err
	}
	if ok, err := t.exists(rulesetKey(c.Site, p.RulesetID)); err != nil {
		return nil, err
	} else if !ok {
		return nil, rulesetNotFound(p.RulesetID)
	}
	if ok, err := t.exists(ruleKey(c.Site, p.RulesetID, p.RuleID)); err != nil {
		return nil, err
	} else if !ok {
		return nil, ruleNotFound(p.RuleID)
	}
	return nil, t.del(ruleKey(c.Site, p.RulesetID, p.RuleID))
}

// applyRules matches the site's active rules against d (created or
// updated in this transaction) and starts the workflows of the matching
// ones: in every ACTIVE ruleset (by priority, then id), the first ACTIVE
// rule (by priority, then id) whose conditions all hold starts its
// workflow, unless the workflow is not ACTIVE or the document has been in
// it already. It reports whether it started one (the caller writes d).
// Artifacts and documents in the trash are left alone.
func applyRules(t *tx, c *Command, d *Document) (bool, error) {
	if d.ArtifactOf != "" || d.DeletedDate != nil {
		return false, nil
	}
	var sets []Ruleset
	if err := t.scanCached(rulesetPrefix(c.Site), func(_, v []byte) error {
		var r Ruleset
		if err := json.Unmarshal(v, &r); err != nil {
			return err
		}
		if r.Status == WorkflowActive {
			sets = append(sets, r)
		}
		return nil
	}); err != nil {
		return false, err
	}
	slices.SortStableFunc(sets, func(a, b Ruleset) int { return cmpPriority(a.Priority, b.Priority, a.RulesetID, b.RulesetID) })
	var attrs map[string]*DocAttribute
	started := false
	for _, rs := range sets {
		var rules []Rule
		if err := t.scanCached(rulePrefix(c.Site, rs.RulesetID), func(_, v []byte) error {
			var r Rule
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			if r.Status == WorkflowActive {
				rules = append(rules, r)
			}
			return nil
		}); err != nil {
			return false, err
		}
		slices.SortStableFunc(rules, func(a, b Rule) int { return cmpPriority(a.Priority, b.Priority, a.RuleID, b.RuleID) })
		for _, r := range rules {
			if attrs == nil {
				var err error
				if attrs, err = docAttrMap(t, c.Site, d.DocumentID); err != nil {
					return false, err
				}
			}
			if !ruleMatches(&r, d, attrs) {
				continue
			}
			ok, err := t.exists(docWorkflowKey(c.Site, d.DocumentID, r.WorkflowID))
			if err != nil {
				return false, err
			}
			w, err := getWorkflow(t, c.Site, r.WorkflowID)
			if errors.Is(err, ErrNotFound) {
				break
			}
			if err != nil {
				return false, err
			}
			if !ok && w.Status == WorkflowActive {
				if err := startWorkflow(t, c, d, w, rs.RulesetID+"/"+r.RuleID); err != nil {
					return false, err
				}
				started = true
			}
			break // the first matching rule of a ruleset decides
		}
	}
	return started, nil
}

func cmpPriority(a, b float64, ida, idb string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return strings.Compare(ida, idb)
}

func ruleMatches(r *Rule, d *Document, attrs map[string]*DocAttribute) bool {
	for _, m := range r.Conditions.Must {
		var vals []string
		switch m.Criterion {
		case "CONTENT_TYPE":
			vals = []string{d.ContentType}
		case "FIELD":
			switch m.FieldName {
			case "path":
				vals = []string{d.Path}
			case "contentType":
				vals = []string{d.ContentType}
			case "userId":
				vals = []string{d.UserID}
			case "deepLinkPath":
				vals = []string{d.DeepLinkPath}
			case "checksum":
				vals = []string{d.Checksum}
			}
		case "ATTRIBUTE":
			if a := attrs[m.AttributeKey]; a != nil {
				vals = append(vals, a.Strings...)
				for _, n := range a.Numbers {
					vals = append(vals, formatNum(n))
				}
				if a.Boolean != nil {
					vals = append(vals, fmt.Sprint(*a.Boolean))
				}
			}
		}
		ok := slices.ContainsFunc(vals, func(v string) bool {
			if m.Operation == "CONTAINS" {
				return strings.Contains(v, m.Value)
			}
			return v == m.Value
		})
		if !ok {
			return false
		}
	}
	return true
}

func formatNum(n float64) string { return strconv.FormatFloat(n, 'f', -1, 64) }

// GetRuleset returns one ruleset.
func (d *DB) GetRuleset(site, id string) (*Ruleset, error) {
	var r Ruleset
	err := d.view(func(t *tx) error { return t.getJSON(rulesetKey(site, id), &r) })
	if errors.Is(err, ErrNotFound) {
		return nil, rulesetNotFound(id)
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// Rulesets lists a site's rulesets by id after after.
func (d *DB) Rulesets(site, after string, limit int) ([]Ruleset, string, error) {
	return listPage(d, rulesetPrefix(site), after, limit, func(r *Ruleset) string { return r.RulesetID })
}

// GetRule returns one rule of a ruleset.
func (d *DB) GetRule(site, rs, id string) (*Rule, error) {
	if _, err := d.GetRuleset(site, rs); err != nil {
		return nil, err
	}
	var r Rule
	err := d.view(func(t *tx) error { return t.getJSON(ruleKey(site, rs, id), &r) })
	if errors.Is(err, ErrNotFound) {
		return nil, ruleNotFound(id)
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// Rules lists a ruleset's rules by id after after.
func (d *DB) Rules(site, rs, after string, limit int) ([]Rule, string, error) {
	if _, err := d.GetRuleset(site, rs); err != nil {
		return nil, "", err
	}
	return listPage(d, rulePrefix(site, rs), after, limit, func(r *Rule) string { return r.RuleID })
}
