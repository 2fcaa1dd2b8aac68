package storage

import (
	"github.com/dgraph-io/badger/v4"

	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Workflows (FormKiQ's /workflows, SERVICE-SPEC.md §2.5 QUEUE, §3.4
// ASYNC_COMPLETE). A workflow is a list of steps. A document enters a step
// by getting the step's actions appended to its action chain (one IDP per
// mapping, the step's action, a QUEUE action for the step's queue), each
// tagged with the workflow and step; the ordinary pipeline runs them. When
// the last of them is done (a QUEUE action by a person's decision) the step
// is finished and the document moves on: its decision routing, else the
// next step, else the workflow is COMPLETE. Every move happens inside the
// transaction that finishes the step's last action (applyFinishAction) or
// records the decision (applyWorkflowDecision), so a crash leaves the
// document either before or after a step change, never between.

// Workflow and document workflow statuses (WorkflowStatus,
// DocumentWorkflowStatus).
const (
	WorkflowActive       = "ACTIVE"
	WorkflowInactive     = "INACTIVE"
	DocWorkflowRunning   = "IN_PROGRESS"
	DocWorkflowComplete  = "COMPLETE"
	DocWorkflowFailed    = "FAILED"
	DecisionApprove      = "APPROVE"
	DecisionReject       = "REJECT"
	TransitionStep       = "STEP"
	TransitionRetry      = "RETRY"
	TransitionComplete   = "COMPLETE"
	maxTransitionsPerRun = 64 // step entries without actions one transaction may chain (a loop of empty steps)
)

// Workflow limits (API.md "Workflows").
const (
	MaxWorkflowSteps       = 50
	MaxStepConditions      = 20
	MaxConditionCriteria   = 20
	MaxCriterionValues     = 100
	MaxApprovalGroups      = 20
	MaxStepMappings        = 10
	MaxDescriptionBytes    = 1024
	MaxWorkflowTransitions = 1000 // step entries of one document in one workflow (RETRY loops end FAILED)
)

// Workflow is a workflow definition.
type Workflow struct {
	WorkflowID   string         `json:"workflowId"`
	Name         string         `json:"name"`
	Description  string         `json:"description,omitempty"`
	Status       string         `json:"status"`
	Steps        []WorkflowStep `json:"steps"`
	InsertedDate time.Time      `json:"insertedDate"`
	UserID       string         `json:"userId,omitempty"`
	// Actor is the rights of whoever set the steps: MOVE and DELETE step
	// actions act with them (actionrights.go). Never shown in the API.
	Actor *ActionActor `json:"actor,omitempty"`
}

// WorkflowStep is one step (AddWorkflowStep / WorkflowStep).
type WorkflowStep struct {
	StepID      string             `json:"stepId"`
	Description string             `json:"description,omitempty"`
	Action      *Action            `json:"action,omitempty"`
	Queue       *StepQueue         `json:"queue,omitempty"`
	Mappings    []StepMapping      `json:"mappings,omitempty"`
	Decision    *StepDecision      `json:"decision,omitempty"`
	Decisions   []StepDecisionNext `json:"decisions,omitempty"`
}

// StepQueue is a step's approval queue.
type StepQueue struct {
	QueueID        string   `json:"queueId"`
	ApprovalGroups []string `json:"approvalGroups,omitempty"`
}

// StepMapping names an IDP mapping the step runs.
type StepMapping struct {
	MappingID string `json:"mappingId"`
}

// StepDecision routes a finished step (WorkflowStepDecision).
type StepDecision struct {
	Conditions        []StepCondition `json:"conditions,omitempty"`
	DefaultTransition *StepTransition `json:"defaultTransition,omitempty"`
}

// StepCondition is one routing condition: all of All and any of Any.
type StepCondition struct {
	All        []StepCriterion `json:"all,omitempty"`
	Any        []StepCriterion `json:"any,omitempty"`
	Transition StepTransition  `json:"transition"`
}

// StepCriterion compares a document value (an attribute, its path or its
// content type) with the given values.
type StepCriterion struct {
	AttributeKey string   `json:"attributeKey,omitempty"` // source {"attributeKey"}
	Field        string   `json:"field,omitempty"`        // source "PATH" or "CONTENT_TYPE"
	Operator     string   `json:"operator"`
	StringValue  *string  `json:"stringValue,omitempty"`
	NumberValue  *float64 `json:"numberValue,omitempty"`
	BooleanValue *bool    `json:"booleanValue,omitempty"`
	StringValues []string `json:"stringValues,omitempty"`
}

// StepTransition is where a finished step goes.
type StepTransition struct {
	Type   string `json:"type"`
	StepID string `json:"stepId,omitempty"`
}

// StepDecisionNext is the deprecated decisions list entry: where an
// APPROVE or REJECT of the step's queue goes.
type StepDecisionNext struct {
	Type       string `json:"type"`
	NextStepID string `json:"nextStepId"`
}

// Criterion operators (WorkflowStepConditionOperator).
var criterionOperators = []string{"EQ", "NEQ", "CONTAINS", "NOT_CONTAINS", "STARTS_WITH", "ENDS_WITH", "GT", "GTE", "LT", "LTE",
	"EXISTS", "NOT_EXISTS", "IN", "NOT_IN", "IS_EMPTY", "IS_NOT_EMPTY"}

// DocWorkflow is a document's run through a workflow (DocumentWorkflow).
type DocWorkflow struct {
	DocumentID    string     `json:"documentId"`
	WorkflowID    string     `json:"workflowId"`
	CurrentStepID string     `json:"currentStepId,omitempty"`
	Status        string     `json:"status"`
	Message       string     `json:"message,omitempty"`
	StepSeq       int        `json:"stepSeq"` // the first action seq of the current step's entry
	ActionCount   int        `json:"actionCount"`
	Completed     int        `json:"completedActionCount"`
	Transitions   int        `json:"transitions"`
	InsertedDate  time.Time  `json:"insertedDate"`
	CompletedDate *time.Time `json:"completedDate,omitempty"`
	UserID        string     `json:"userId,omitempty"`
	// RuleID names the rule that started it ("rulesetId/ruleId"), if any.
	RuleID string `json:"ruleId,omitempty"`
}

func workflowKey(site, id string) []byte { return []byte(pfxWorkflow + sk(site) + "/" + id) }
func workflowPrefix(site string) []byte  { return []byte(pfxWorkflow + sk(site) + "/") }
func docWorkflowKey(site, doc, wf string) []byte {
	return []byte(pfxDocWorkflow + sk(site) + "/" + doc + "/" + wf)
}
func docWorkflowPrefix(site, doc string) []byte {
	return []byte(pfxDocWorkflow + sk(site) + "/" + doc + "/")
}
func workflowDocKey(site, wf, doc string) []byte {
	return []byte(pfxWorkflowDoc + sk(site) + "/" + wf + "/" + doc)
}
func workflowDocPrefix(site, wf string) []byte {
	return []byte(pfxWorkflowDoc + sk(site) + "/" + wf + "/")
}

func workflowNotFound(id string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Workflow '%s' not found", id)}
}

// CheckWorkflow validates a workflow definition's shape (what does not
// depend on stored state), with the keys of the request body.
func CheckWorkflow(w *Workflow) error {
	var errs []ValidationItem
	add := func(k, m string) { errs = append(errs, ValidationItem{Key: k, Msg: m}) }
	if strings.TrimSpace(w.Name) == "" {
		add("name", "'name' is required")
	} else {
		errs = append(errs, CheckText("name", w.Name, MaxKeyBytes)...)
	}
	errs = append(errs, CheckText("description", w.Description, MaxDescriptionBytes)...)
	switch w.Status {
	case "":
		add("status", "'status' is required")
	case WorkflowActive, WorkflowInactive:
	default:
		add("status", "invalid 'status', use ACTIVE or INACTIVE")
	}
	if len(w.Steps) == 0 {
		add("steps", "'steps' is required")
	}
	if len(w.Steps) > MaxWorkflowSteps {
		add("steps", fmt.Sprintf("a workflow has at most %d steps", MaxWorkflowSteps))
		return &ValidationError{Items: errs}
	}
	ids := map[string]bool{}
	for i := range w.Steps {
		s := &w.Steps[i]
		if s.StepID == "" {
			s.StepID = "step" + strconv.Itoa(i+1)
		}
		k := fmt.Sprintf("steps[%d]", i)
		errs = append(errs, CheckText(k+".stepId", s.StepID, MaxKeyBytes)...)
		errs = append(errs, CheckText(k+".description", s.Description, MaxDescriptionBytes)...)
		if ids[s.StepID] {
			add(k+".stepId", "duplicate 'stepId' '"+s.StepID+"'")
		}
		ids[s.StepID] = true
		if s.Action == nil && s.Queue == nil && len(s.Mappings) == 0 && s.Decision == nil {
			add(k, "a step needs an 'action', a 'queue', 'mappings' or a 'decision'")
		}
		if s.Queue != nil {
			if s.Queue.QueueID == "" {
				add(k+".queue.queueId", "'queueId' is required")
			}
			if len(s.Queue.ApprovalGroups) > MaxApprovalGroups {
				add(k+".queue.approvalGroups", fmt.Sprintf("at most %d approval groups", MaxApprovalGroups))
			}
			for _, g := range s.Queue.ApprovalGroups {
				errs = append(errs, CheckText(k+".queue.approvalGroups", g, MaxKeyBytes)...)
			}
		}
		if s.Action != nil && s.Action.Type == "QUEUE" && s.Queue != nil {
			add(k+".action", "a step has either a QUEUE action or a 'queue'")
		}
		if len(s.Mappings) > MaxStepMappings {
			add(k+".mappings", fmt.Sprintf("at most %d mappings", MaxStepMappings))
		}
		for _, m := range s.Mappings {
			if m.MappingID == "" {
				add(k+".mappings.mappingId", "'mappingId' is required")
			}
		}
		if len(s.Decisions) > 2 {
			add(k+".decisions", "at most one APPROVE and one REJECT decision")
			continue
		}
		seen := map[string]bool{}
		for _, d := range s.Decisions {
			if d.Type != DecisionApprove && d.Type != DecisionReject {
				add(k+".decisions.type", "invalid 'type', use APPROVE or REJECT")
			} else if seen[d.Type] {
				add(k+".decisions.type", "duplicate decision '"+d.Type+"'")
			}
			seen[d.Type] = true
		}
		if s.Decision != nil && len(s.Decision.Conditions) > MaxStepConditions {
			add(k+".decision.conditions", fmt.Sprintf("at most %d conditions", MaxStepConditions))
			continue
		}
		if s.Decision != nil {
			for j, c := range s.Decision.Conditions {
				ck := fmt.Sprintf("%s.decision.conditions[%d]", k, j)
				if len(c.All)+len(c.Any) == 0 {
					add(ck, "a condition needs 'all' or 'any' criteria")
				}
				if len(c.All) > MaxConditionCriteria || len(c.Any) > MaxConditionCriteria {
					add(ck, fmt.Sprintf("at most %d criteria in 'all' and in 'any'", MaxConditionCriteria))
					continue
				}
				for _, cr := range append(slices.Clone(c.All), c.Any...) {
					errs = append(errs, checkCriterion(ck, &cr)...)
				}
			}
		}
	}
	// Step references, once every id is known.
	for i, s := range w.Steps {
		k := fmt.Sprintf("steps[%d]", i)
		for _, d := range s.Decisions {
			if !ids[d.NextStepID] {
				add(k+".decisions.nextStepId", "'nextStepId' names no step of the workflow")
			}
		}
		if s.Decision == nil {
			continue
		}
		ts := []StepTransition{}
		for _, c := range s.Decision.Conditions {
			ts = append(ts, c.Transition)
		}
		if s.Decision.DefaultTransition != nil {
			ts = append(ts, *s.Decision.DefaultTransition)
		}
		for _, tr := range ts {
			switch tr.Type {
			case TransitionStep:
				if !ids[tr.StepID] {
					add(k+".decision.transition.stepId", "'stepId' names no step of the workflow")
				}
			case TransitionRetry, TransitionComplete:
			case "":
				add(k+".decision.transition.type", "'type' is required")
			default:
				add(k+".decision.transition.type", "invalid 'type', use STEP, RETRY or COMPLETE")
			}
		}
	}
	return limitsErr(errs)
}

func checkCriterion(k string, c *StepCriterion) []ValidationItem {
	var errs []ValidationItem
	if c.AttributeKey == "" && c.Field == "" {
		errs = append(errs, ValidationItem{Key: k + ".source", Msg: "'source' is required"})
	}
	errs = append(errs, CheckText(k+".source.attributeKey", c.AttributeKey, MaxKeyBytes)...)
	if !slices.Contains(criterionOperators, c.Operator) {
		errs = append(errs, ValidationItem{Key: k + ".operator", Msg: "invalid 'operator'"})
	}
	if len(c.StringValues) > MaxCriterionValues {
		errs = append(errs, ValidationItem{Key: k + ".stringValues", Msg: fmt.Sprintf("at most %d values", MaxCriterionValues)})
	}
	for _, v := range c.StringValues {
		errs = append(errs, CheckText(k+".stringValues", v, MaxKeyBytes)...)
	}
	if c.StringValue != nil {
		errs = append(errs, CheckText(k+".stringValue", *c.StringValue, MaxKeyBytes)...)
	}
	if c.NumberValue != nil && (math.IsNaN(*c.NumberValue) || math.IsInf(*c.NumberValue, 0)) {
		errs = append(errs, ValidationItem{Key: k + ".numberValue", Msg: "invalid 'numberValue'"})
	}
	return errs
}

// PutWorkflow is the payload of OpPutWorkflow: POST /workflows (Create),
// PUT /workflows/{id} (replace, or create with CreateIfMissing).
type PutWorkflow struct {
	Workflow        Workflow `json:"workflow"`
	Create          bool     `json:"create,omitempty"`
	CreateIfMissing bool     `json:"createIfMissing,omitempty"`
}

func applyPutWorkflow(t *tx, c *Command) (any, error) {
	p, err := decode[PutWorkflow](c)
	if err != nil {
		return nil, err
	}
	w := p.Workflow
	if err := checkName("workflowId", w.WorkflowID); err != nil {
		return nil, err
	}
	if err := CheckWorkflow(&w); err != nil {
		return nil, err
	}
	var old Workflow
	err = t.getJSON(workflowKey(c.Site, w.WorkflowID), &old)
	switch {
	case err == nil && p.Create:
		return nil, &ConflictError{Msg: fmt.Sprintf("workflowId '%s' already exists", w.WorkflowID)}
	case err == nil:
		// Steps change under no document: a document's current step must
		// stay what it entered.
		if t.firstKey(workflowDocPrefix(c.Site, w.WorkflowID)) != nil {
			return nil, Invalid("workflowId", "workflow is in use: its steps cannot change while documents are in it")
		}
		w.InsertedDate, w.UserID = old.InsertedDate, old.UserID
	case errors.Is(err, ErrNotFound):
		if !p.Create && !p.CreateIfMissing {
			return nil, workflowNotFound(w.WorkflowID)
		}
		w.InsertedDate, w.UserID = c.At, c.User
	default:
		return nil, err
	}
	var errs []ValidationItem
	for i, s := range w.Steps {
		k := fmt.Sprintf("steps[%d]", i)
		q := ""
		if s.Queue != nil {
			q = s.Queue.QueueID
		} else if s.Action != nil && s.Action.Type == "QUEUE" {
			q = s.Action.QueueID
		}
		if q != "" {
			if ok, err := t.exists(queueKey(c.Site, q)); err != nil {
				return nil, err
			} else if !ok {
				errs = append(errs, ValidationItem{Key: k + ".queue.queueId", Msg: "'queueId' does not exist"})
			}
		}
		for _, m := range s.Mappings {
			if ok, err := t.exists(mappingKey(c.Site, m.MappingID)); err != nil {
				return nil, err
			} else if !ok {
				errs = append(errs, ValidationItem{Key: k + ".mappings.mappingId", Msg: "'mappingId' does not exist"})
			}
		}
	}
	if len(errs) > 0 {
		return nil, &ValidationError{Items: errs}
	}
	if err := t.setJSON(workflowKey(c.Site, w.WorkflowID), w); err != nil {
		return nil, err
	}
	return nil, ensureSite(t, c)
}

// UpdateWorkflow is the payload of OpUpdateWorkflow (PATCH): nil fields
// stay.
type UpdateWorkflow struct {
	WorkflowID  string  `json:"workflowId"`
	Name        *string `json:"name,omitempty"`
	Description *string `json:"description,omitempty"`
	Status      *string `json:"status,omitempty"`
}

func applyUpdateWorkflow(t *tx, c *Command) (any, error) {
	p, err := decode[UpdateWorkflow](c)
	if err != nil {
		return nil, err
	}
	w, err := getWorkflow(t, c.Site, p.WorkflowID)
	if err != nil {
		return nil, err
	}
	if p.Name != nil {
		w.Name = *p.Name
	}
	if p.Description != nil {
		w.Description = *p.Description
	}
	if p.Status != nil {
		w.Status = *p.Status
	}
	if err := CheckWorkflow(w); err != nil {
		return nil, err
	}
	return nil, t.setJSON(workflowKey(c.Site, w.WorkflowID), w)
}

func applyDeleteWorkflow(t *tx, c *Command) (any, error) {
	p, err := decode[UpdateWorkflow](c)
	if err != nil {
		return nil, err
	}
	if _, err := getWorkflow(t, c.Site, p.WorkflowID); err != nil {
		return nil, err
	}
	if t.firstKey(workflowDocPrefix(c.Site, p.WorkflowID)) != nil {
		return nil, Invalid("workflowId", "workflow is in use: documents are in it")
	}
	var used string
	err = t.each(rulePrefixAll(c.Site), func(_, v []byte) error {
		var r Rule
		if err := json.Unmarshal(v, &r); err != nil {
			return err
		}
		if r.WorkflowID == p.WorkflowID && used == "" {
			used = r.RulesetID + "/" + r.RuleID
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if used != "" {
		return nil, Invalid("workflowId", "workflow is in use by rule '"+used+"'")
	}
	return nil, t.del(workflowKey(c.Site, p.WorkflowID))
}

// workflowUsingQueue returns the id of a workflow of the site with a step
// on queue q, or "".
func workflowUsingQueue(t *tx, site, q string) (string, error) {
	found := ""
	err := t.each(workflowPrefix(site), func(_, v []byte) error {
		var w Workflow
		if err := json.Unmarshal(v, &w); err != nil {
			return err
		}
		for _, s := range w.Steps {
			if found == "" && (s.Queue != nil && s.Queue.QueueID == q || s.Action != nil && s.Action.QueueID == q) {
				found = w.WorkflowID
			}
		}
		return nil
	})
	return found, err
}

func getWorkflow(t *tx, site, id string) (*Workflow, error) {
	var w Workflow
	if err := t.getJSON(workflowKey(site, id), &w); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, workflowNotFound(id)
		}
		return nil, err
	}
	return &w, nil
}

// StartWorkflow is the payload of OpStartWorkflow: POST
// /documents/{id}/workflows.
type StartWorkflow struct {
	DocumentID string `json:"documentId"`
	WorkflowID string `json:"workflowId"`
}

func applyStartWorkflow(t *tx, c *Command) (any, error) {
	p, err := decode[StartWorkflow](c)
	if err != nil {
		return nil, err
	}
	d, err := getLiveDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	w, err := getWorkflow(t, c.Site, p.WorkflowID)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, Invalid("workflowId", "'workflowId' does not exist")
		}
		return nil, err
	}
	if w.Status != WorkflowActive {
		return nil, Invalid("workflowId", "workflow is not ACTIVE")
	}
	var cur DocWorkflow
	err = t.getJSON(docWorkflowKey(c.Site, d.DocumentID, w.WorkflowID), &cur)
	if err == nil && cur.Status != DocWorkflowComplete {
		return nil, Invalid("workflowId", "document is already in workflow '"+w.WorkflowID+"'")
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if err := startWorkflow(t, c, d, w, ""); err != nil {
		return nil, err
	}
	return nil, putDocActions(t, d)
}

// startWorkflow puts d in w's first step (the caller writes d).
func startWorkflow(t *tx, c *Command, d *Document, w *Workflow, rule string) error {
	dw := &DocWorkflow{DocumentID: d.DocumentID, WorkflowID: w.WorkflowID, Status: DocWorkflowRunning,
		InsertedDate: c.At, UserID: c.User, RuleID: rule}
	if err := t.set(workflowDocKey(c.Site, w.WorkflowID, d.DocumentID), nil); err != nil {
		return err
	}
	return enterStep(t, c, d, w, dw, 0, 0)
}

// enterStep puts the document in step i: the step's actions are appended
// to its chain. A step without actions is finished at once (its routing
// applies); depth bounds such chains in one transaction.
func enterStep(t *tx, c *Command, d *Document, w *Workflow, dw *DocWorkflow, i, depth int) error {
	if depth > maxTransitionsPerRun || dw.Transitions >= MaxWorkflowTransitions {
		return endWorkflow(t, c, dw, DocWorkflowFailed, "the workflow moved through too many steps without actions")
	}
	s := &w.Steps[i]
	dw.CurrentStepID, dw.Transitions = s.StepID, dw.Transitions+1
	var acts []Action
	for _, m := range s.Mappings {
		raw, _ := json.Marshal(map[string]string{"mappingId": m.MappingID})
		acts = append(acts, Action{Type: "IDP", Parameters: raw})
	}
	if s.Action != nil {
		a := *s.Action
		a.Metadata = nil
		if ActsAsAdder(a.Type) {
			a.Actor = w.Actor
		}
		acts = append(acts, a)
	}
	if s.Queue != nil {
		acts = append(acts, Action{Type: "QUEUE", QueueID: s.Queue.QueueID})
	}
	for j := range acts {
		acts[j].WorkflowID, acts[j].WorkflowStepID = w.WorkflowID, s.StepID
		acts[j].Status, acts[j].Retry = ActionPending, 0
	}
	dw.StepSeq, dw.ActionCount, dw.Completed = d.ActionSeq, len(acts), 0
	if len(acts) == 0 {
		return finishStep(t, c, d, w, dw, "", depth+1)
	}
	if err := addActions(t, c, d, acts); err != nil {
		return err
	}
	return t.setJSON(docWorkflowKey(c.Site, d.DocumentID, w.WorkflowID), dw)
}

// endWorkflow records the end of a document's workflow.
func endWorkflow(t *tx, c *Command, dw *DocWorkflow, status, msg string) error {
	at := c.At
	dw.Status, dw.Message, dw.CompletedDate = status, msg, &at
	if status == DocWorkflowComplete {
		dw.CurrentStepID = ""
		if err := t.del(workflowDocKey(c.Site, dw.WorkflowID, dw.DocumentID)); err != nil {
			return err
		}
	}
	return t.setJSON(docWorkflowKey(c.Site, dw.DocumentID, dw.WorkflowID), dw)
}

// finishStep routes a finished step: decision is the queue's APPROVE or
// REJECT, "" for a step without a queue.
func finishStep(t *tx, c *Command, d *Document, w *Workflow, dw *DocWorkflow, decision string, depth int) error {
	i := slices.IndexFunc(w.Steps, func(s WorkflowStep) bool { return s.StepID == dw.CurrentStepID })
	if i < 0 {
		return endWorkflow(t, c, dw, DocWorkflowFailed, "step '"+dw.CurrentStepID+"' is no longer in the workflow")
	}
	s := &w.Steps[i]
	next := func(id string) error {
		j := slices.IndexFunc(w.Steps, func(s WorkflowStep) bool { return s.StepID == id })
		if j < 0 {
			return endWorkflow(t, c, dw, DocWorkflowFailed, "step '"+id+"' is not in the workflow")
		}
		return enterStep(t, c, d, w, dw, j, depth)
	}
	for _, dn := range s.Decisions {
		if dn.Type == decision && decision != "" {
			return next(dn.NextStepID)
		}
	}
	if decision == DecisionReject {
		return endWorkflow(t, c, dw, DocWorkflowFailed, "rejected in step '"+s.StepID+"'")
	}
	var tr *StepTransition
	if s.Decision != nil {
		attrs, err := docAttrMap(t, c.Site, d.DocumentID)
		if err != nil {
			return err
		}
		for k := range s.Decision.Conditions {
			if conditionMatches(&s.Decision.Conditions[k], d, attrs) {
				tr = &s.Decision.Conditions[k].Transition
				break
			}
		}
		if tr == nil {
			tr = s.Decision.DefaultTransition
		}
	}
	if tr == nil {
		if i+1 < len(w.Steps) {
			return enterStep(t, c, d, w, dw, i+1, depth)
		}
		return endWorkflow(t, c, dw, DocWorkflowComplete, "")
	}
	switch tr.Type {
	case TransitionStep:
		return next(tr.StepID)
	case TransitionRetry:
		return enterStep(t, c, d, w, dw, i, depth)
	}
	return endWorkflow(t, c, dw, DocWorkflowComplete, "")
}

func docAttrMap(t *tx, site, doc string) (map[string]*DocAttribute, error) {
	out := map[string]*DocAttribute{}
	err := t.each(docAttrPrefix(site, doc), func(_, v []byte) error {
		var a DocAttribute
		if err := json.Unmarshal(v, &a); err != nil {
			return err
		}
		out[a.Key] = &a
		return nil
	})
	return out, err
}

func conditionMatches(c *StepCondition, d *Document, attrs map[string]*DocAttribute) bool {
	for i := range c.All {
		if !criterionMatches(&c.All[i], d, attrs) {
			return false
		}
	}
	if len(c.Any) == 0 {
		return true
	}
	for i := range c.Any {
		if criterionMatches(&c.Any[i], d, attrs) {
			return true
		}
	}
	return false
}

// criterionMatches evaluates one criterion: string operators on every
// value of the source (one matching value is enough; NEQ, NOT_CONTAINS
// and NOT_IN need all values to pass), numeric ones on number values.
func criterionMatches(c *StepCriterion, d *Document, attrs map[string]*DocAttribute) bool {
	var strs []string
	var nums []float64
	exists := true
	switch c.Field {
	case "PATH":
		strs = []string{d.Path}
	case "CONTENT_TYPE":
		strs = []string{d.ContentType}
	default:
		a := attrs[c.AttributeKey]
		if a == nil {
			exists = false
		} else {
			strs, nums = a.Strings, a.Numbers
			if a.Boolean != nil {
				strs = append(strs, strconv.FormatBool(*a.Boolean))
			}
			for _, n := range nums {
				strs = append(strs, strconv.FormatFloat(n, 'f', -1, 64))
			}
		}
	}
	sv := ""
	if c.StringValue != nil {
		sv = *c.StringValue
	} else if c.BooleanValue != nil {
		sv = strconv.FormatBool(*c.BooleanValue)
	} else if c.NumberValue != nil {
		sv = strconv.FormatFloat(*c.NumberValue, 'f', -1, 64)
	}
	anyOf := func(f func(string) bool) bool { return slices.ContainsFunc(strs, f) }
	empty := !exists || !anyOf(func(s string) bool { return s != "" })
	switch c.Operator {
	case "EXISTS":
		return exists
	case "NOT_EXISTS":
		return !exists
	case "IS_EMPTY":
		return empty
	case "IS_NOT_EMPTY":
		return !empty
	case "EQ":
		return anyOf(func(s string) bool { return s == sv })
	case "NEQ":
		return !anyOf(func(s string) bool { return s == sv })
	case "CONTAINS":
		return anyOf(func(s string) bool { return strings.Contains(s, sv) })
	case "NOT_CONTAINS":
		return !anyOf(func(s string) bool { return strings.Contains(s, sv) })
	case "STARTS_WITH":
		return anyOf(func(s string) bool { return strings.HasPrefix(s, sv) })
	case "ENDS_WITH":
		return anyOf(func(s string) bool { return strings.HasSuffix(s, sv) })
	case "IN":
		return anyOf(func(s string) bool { return slices.Contains(c.StringValues, s) })
	case "NOT_IN":
		return !anyOf(func(s string) bool { return slices.Contains(c.StringValues, s) })
	case "GT", "GTE", "LT", "LTE":
		if c.NumberValue == nil {
			return false
		}
		v := *c.NumberValue
		return slices.ContainsFunc(nums, func(n float64) bool {
			switch c.Operator {
			case "GT":
				return n > v
			case "GTE":
				return n >= v
			case "LT":
				return n < v
			}
			return n <= v
		})
	}
	return false
}

// workflowActionDone is called after a workflow action of d changed
// status (in the same transaction): when every action of the current step
// is done the step is finished and routed; a failed one marks the
// workflow FAILED until the action is retried and completes.
func workflowActionDone(t *tx, c *Command, d *Document, a *Action) error {
	if a.WorkflowID == "" {
		return nil
	}
	var dw DocWorkflow
	if err := t.getJSON(docWorkflowKey(c.Site, d.DocumentID, a.WorkflowID), &dw); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	}
	if dw.Status == DocWorkflowComplete || dw.CurrentStepID != a.WorkflowStepID || a.Seq < dw.StepSeq {
		return nil // an action of an earlier step entry, or a finished workflow
	}
	done, failed, err := stepProgress(t, c.Site, d.DocumentID, &dw)
	if err != nil {
		return err
	}
	dw.Completed = done
	switch {
	case failed:
		dw.Status, dw.Message = DocWorkflowFailed, "an action of step '"+dw.CurrentStepID+"' failed"
		return t.setJSON(docWorkflowKey(c.Site, d.DocumentID, dw.WorkflowID), &dw)
	case done < dw.ActionCount:
		dw.Status, dw.Message = DocWorkflowRunning, ""
		return t.setJSON(docWorkflowKey(c.Site, d.DocumentID, dw.WorkflowID), &dw)
	}
	dw.Status, dw.Message = DocWorkflowRunning, ""
	w, err := getWorkflow(t, c.Site, dw.WorkflowID)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return endWorkflow(t, c, &dw, DocWorkflowFailed, "the workflow was deleted")
		}
		return err
	}
	decision := ""
	if a.Type == "QUEUE" {
		decision = a.Metadata["decision"]
	}
	return finishStep(t, c, d, w, &dw, decision, 0)
}

// stepProgress counts the current step entry's actions that are done (the
// last retry of each COMPLETE, ASYNC_COMPLETE or SKIPPED) and reports
// whether one failed.
func stepProgress(t *tx, site, doc string, dw *DocWorkflow) (int, bool, error) {
	acts, err := loadActions(t, site, doc)
	if err != nil {
		return 0, false, err
	}
	last := map[int]string{}
	for _, a := range acts {
		if a.Seq >= dw.StepSeq && a.WorkflowID == dw.WorkflowID && a.WorkflowStepID == dw.CurrentStepID {
			last[a.Seq] = a.Status // retries come after the action they retry
		}
	}
	done, failed := 0, false
	for _, s := range last {
		switch s {
		case ActionComplete, ActionAsyncComplete, ActionSkipped:
			done++
		case ActionFailed, ActionMaxRetries:
			failed = true
		}
	}
	return done, failed, nil
}

// WorkflowDecision is the payload of OpWorkflowDecision: a person's
// APPROVE or REJECT of a document waiting in its workflow step's queue.
// Decider is the caller's rights (a step's approvalGroups).
type WorkflowDecision struct {
	DocumentID string       `json:"documentId"`
	WorkflowID string       `json:"workflowId"`
	Decision   string       `json:"decision"`
	Comments   string       `json:"comments,omitempty"`
	Decider    *ActionActor `json:"decider,omitempty"`
}

// ErrNoDecisionAwaited is the refusal of a decision on a document that is
// not waiting in its step's queue (already decided, finished, or not
// there yet).
func errNoDecisionAwaited(doc, wf, why string) error {
	return Invalid("decision", fmt.Sprintf("document '%s' awaits no decision in workflow '%s': %s", doc, wf, why))
}

func applyWorkflowDecision(t *tx, c *Command) (any, error) {
	p, err := decode[WorkflowDecision](c)
	if err != nil {
		return nil, err
	}
	d, err := getLiveDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	var dw DocWorkflow
	if err := t.getJSON(docWorkflowKey(c.Site, d.DocumentID, p.WorkflowID), &dw); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, &NotFoundError{Msg: fmt.Sprintf("Document %s is not in workflow '%s'", p.DocumentID, p.WorkflowID)}
		}
		return nil, err
	}
	if dw.Status != DocWorkflowRunning {
		return nil, errNoDecisionAwaited(p.DocumentID, p.WorkflowID, "the workflow is "+dw.Status)
	}
	acts, err := loadActions(t, c.Site, d.DocumentID)
	if err != nil {
		return nil, err
	}
	var qa *Action
	for i := range acts {
		a := &acts[i]
		if a.Type == "QUEUE" && a.WorkflowID == dw.WorkflowID && a.WorkflowStepID == dw.CurrentStepID && a.Seq >= dw.StepSeq && a.Status == ActionInQueue {
			qa = a
		}
	}
	if qa == nil {
		return nil, errNoDecisionAwaited(p.DocumentID, p.WorkflowID, "step '"+dw.CurrentStepID+"' has no queue waiting for one")
	}
	w, err := getWorkflow(t, c.Site, dw.WorkflowID)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if w != nil {
		if i := slices.IndexFunc(w.Steps, func(s WorkflowStep) bool { return s.StepID == dw.CurrentStepID }); i >= 0 {
			if q := w.Steps[i].Queue; q != nil && len(q.ApprovalGroups) > 0 && !mayDecide(p.Decider, q.ApprovalGroups) {
				return nil, &AccessError{Msg: "fkq access denied: a decision in step '" + dw.CurrentStepID + "' needs one of the groups " + strings.Join(q.ApprovalGroups, ", ")}
			}
		}
	}
	return nil, decideQueued(t, c, d, qa, p.Decision, p.Comments)
}

// mayDecide reports whether the decider is in one of groups (site admins
// and governors always are).
func mayDecide(a *ActionActor, groups []string) bool {
	if a == nil {
		return true // the server's own commands
	}
	if a.Exempt() {
		return true
	}
	return slices.ContainsFunc(a.Groups, func(g string) bool { return slices.Contains(groups, g) })
}

// decideQueued records a decision on a QUEUE action that is IN_QUEUE:
// the document leaves the queue, the action is ASYNC_COMPLETE with the
// decision in its metadata, and its workflow step is routed. A QUEUE
// action outside a workflow that is rejected FAILS instead (the chain
// stops until it is retried).
func decideQueued(t *tx, c *Command, d *Document, a *Action, decision, comments string) error {
	if ok, err := t.exists(queueDocKey(c.Site, a.QueueID, d.DocumentID)); err != nil {
		return err
	} else if ok {
		if err := t.del(queueDocKey(c.Site, a.QueueID, d.DocumentID)); err != nil {
			return err
		}
	}
	at := c.At
	a.CompletedDate = &at
	if a.Metadata == nil {
		a.Metadata = map[string]string{}
	}
	a.Metadata["decision"], a.Metadata["decidedBy"] = decision, c.User
	if decision == DecisionReject && a.WorkflowID == "" {
		a.Status, a.Message = ActionFailed, "rejected by "+c.User
		if comments != "" {
			a.Message += ": " + comments
		}
	} else {
		a.Status, a.Message = ActionAsyncComplete, comments
	}
	if err := t.setJSON(actionKey(c.Site, d.DocumentID, a.Seq, a.Retry), a); err != nil {
		return err
	}
	if err := workflowActionDone(t, c, d, a); err != nil {
		return err
	}
	return putDocActions(t, d)
}

// clearWorkflows removes a purged document's workflow records (keys: its
// docWorkflowPrefix keys, gathered by the purge, purge.go).
func clearWorkflows(t *tx, site, doc string, keys [][]byte) error {
	return eachGathered(t, keys, func(k []byte, dw *DocWorkflow) error {
		if err := t.del(workflowDocKey(site, dw.WorkflowID, doc)); err != nil {
			return err
		}
		return t.del(k)
	})
}

// GetWorkflow returns one workflow.
func (d *DB) GetWorkflow(site, id string) (*Workflow, error) {
	var w *Workflow
	err := d.view(func(t *tx) error {
		var err error
		w, err = getWorkflow(t, site, id)
		return err
	})
	return w, err
}

// Workflows lists a site's workflows by id after after.
func (d *DB) Workflows(site, after string, limit int) ([]Workflow, string, error) {
	return listPage(d, workflowPrefix(site), after, limit, func(w *Workflow) string { return w.WorkflowID })
}

// WorkflowInUse reports whether documents are in the workflow.
func (d *DB) WorkflowInUse(site, id string) bool {
	used := false
	_ = d.view(func(t *tx) error { used = t.firstKey(workflowDocPrefix(site, id)) != nil; return nil })
	return used
}

// WorkflowDocuments lists the ids of the documents in a workflow (not
// COMPLETE) after after.
func (d *DB) WorkflowDocuments(site, id, after string, limit int) ([]string, string, error) {
	var out []string
	var next string
	err := d.view(func(t *tx) error {
		if _, err := getWorkflow(t, site, id); err != nil {
			return err
		}
		prefix := workflowDocPrefix(site, id)
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		opts.Prefix = prefix
		it := t.txn.NewIterator(opts)
		defer it.Close()
		seek := slices.Clip(prefix)
		if after != "" {
			seek = append(seek, after+"\x00"...)
		}
		for it.Seek(seek); it.ValidForPrefix(prefix); it.Next() {
			if limit > 0 && len(out) == limit {
				next = out[len(out)-1]
				break
			}
			out = append(out, string(it.Item().Key()[len(prefix):]))
		}
		return nil
	})
	return out, next, err
}

// DocWorkflows lists a document's workflows by workflow id after after.
func (d *DB) DocWorkflows(site, doc, after string, limit int) ([]DocWorkflow, string, error) {
	return listPage(d, docWorkflowPrefix(site, doc), after, limit, func(w *DocWorkflow) string { return w.WorkflowID })
}

// DocWorkflow returns one document's run through a workflow.
func (d *DB) DocWorkflow(site, doc, wf string) (*DocWorkflow, error) {
	var dw DocWorkflow
	err := d.view(func(t *tx) error { return t.getJSON(docWorkflowKey(site, doc, wf), &dw) })
	if errors.Is(err, ErrNotFound) {
		return nil, &NotFoundError{Msg: fmt.Sprintf("Document %s is not in workflow '%s'", doc, wf)}
	}
	if err != nil {
		return nil, err
	}
	return &dw, nil
}
