package flow

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"quire/server/documents"
	"quire/server/internal/api"
	"quire/storage"
)

// Workflows (FormKiQ's /workflows, /documents/{id}/workflows; storage
// workflows.go has the step engine). Definitions are site settings: read
// with READ, written with GOVERN. Documents enter a workflow by POST
// /documents/{id}/workflows (WRITE on the document's folder) or by a rule
// (rulesets.go).

// workflowIn is AddWorkflowRequest / SetWorkflowRequest.
type workflowIn struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Status      string   `json:"status"`
	Steps       []stepIn `json:"steps"`
}

type stepIn struct {
	StepID      string                     `json:"stepId"`
	Description string                     `json:"description"`
	Action      *documents.ActionIn        `json:"action"`
	Queue       *storage.StepQueue         `json:"queue"`
	Mappings    []storage.StepMapping      `json:"mappings"`
	Decision    *decisionIn                `json:"decision"`
	Decisions   []storage.StepDecisionNext `json:"decisions"`
}

type decisionIn struct {
	Conditions []struct {
		All        []criterionIn          `json:"all"`
		Any        []criterionIn          `json:"any"`
		Transition storage.StepTransition `json:"transition"`
	} `json:"conditions"`
	DefaultTransition *storage.StepTransition `json:"defaultTransition"`
}

type criterionIn struct {
	Source       json.RawMessage `json:"source"`
	Operator     string          `json:"operator"`
	StringValue  *string         `json:"stringValue"`
	NumberValue  *float64        `json:"numberValue"`
	BooleanValue *bool           `json:"booleanValue"`
	StringValues []string        `json:"stringValues"`
}

// criterion converts a criterion's source: {"attributeKey"} or PATH or
// CONTENT_TYPE. The attribute value comparison source is refused.
func (c *criterionIn) criterion(key string) (storage.StepCriterion, error) {
	out := storage.StepCriterion{Operator: strings.ToUpper(c.Operator), StringValue: c.StringValue,
		NumberValue: c.NumberValue, BooleanValue: c.BooleanValue, StringValues: c.StringValues}
	src := strings.TrimSpace(string(c.Source))
	switch {
	case src == "" || src == "null":
		return out, api.Invalid(key+".source", "'source' is required")
	case src[0] == '"':
		var f string
		_ = json.Unmarshal(c.Source, &f)
		if f != "PATH" && f != "CONTENT_TYPE" {
			return out, api.Invalid(key+".source", "invalid 'source', use PATH, CONTENT_TYPE or {\"attributeKey\"}")
		}
		out.Field = f
	case src[0] == '{':
		var o struct {
			AttributeKey string `json:"attributeKey"`
			SourceType   string `json:"sourceType"`
		}
		if json.Unmarshal(c.Source, &o) != nil {
			return out, api.Invalid(key+".source", "invalid 'source'")
		}
		if o.SourceType != "" {
			return out, api.Invalid(key+".source", "source type '"+o.SourceType+"' is not supported")
		}
		if o.AttributeKey == "" {
			return out, api.Invalid(key+".source.attributeKey", "'attributeKey' is required")
		}
		out.AttributeKey = o.AttributeKey
	default:
		return out, api.Invalid(key+".source", "invalid 'source'")
	}
	return out, nil
}

// workflowFromBody reads and converts a workflow definition; the step
// actions are checked as on the action routes (but MOVE, DELETE and QUEUE
// belong in workflows).
func (s *Handlers) workflowFromBody(r *api.Request, id string) (*storage.Workflow, error) {
	var in workflowIn
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return nil, err
	}
	if len(in.Steps) > storage.MaxWorkflowSteps {
		return nil, api.Invalid("steps", fmt.Sprintf("a workflow has at most %d steps", storage.MaxWorkflowSteps))
	}
	w := &storage.Workflow{WorkflowID: id, Name: strings.TrimSpace(in.Name), Description: in.Description,
		Status: strings.ToUpper(in.Status), Actor: s.ActorOf(r)}
	var errs []storage.ValidationItem
	for i, st := range in.Steps {
		k := fmt.Sprintf("steps[%d]", i)
		step := storage.WorkflowStep{StepID: st.StepID, Description: st.Description, Queue: st.Queue,
			Mappings: st.Mappings, Decisions: st.Decisions}
		for j := range step.Decisions {
			step.Decisions[j].Type = strings.ToUpper(step.Decisions[j].Type)
		}
		if st.Action != nil {
			acts, e := s.Documents.ConvertActions(r, []documents.ActionIn{*st.Action})
			for _, x := range e {
				errs = append(errs, storage.ValidationItem{Key: k + ".action." + x.Key, Msg: x.Msg})
			}
			if len(acts) == 1 {
				step.Action = &acts[0]
			}
		}
		if st.Decision != nil {
			if len(st.Decision.Conditions) > storage.MaxStepConditions {
				return nil, api.Invalid(k+".decision.conditions", fmt.Sprintf("at most %d conditions", storage.MaxStepConditions))
			}
			dec := &storage.StepDecision{DefaultTransition: st.Decision.DefaultTransition}
			for j, c := range st.Decision.Conditions {
				if len(c.All) > storage.MaxConditionCriteria || len(c.Any) > storage.MaxConditionCriteria {
					return nil, api.Invalid(fmt.Sprintf("%s.decision.conditions[%d]", k, j), fmt.Sprintf("at most %d criteria in 'all' and in 'any'", storage.MaxConditionCriteria))
				}
				sc := storage.StepCondition{Transition: c.Transition}
				for _, list := range []struct {
					in  []criterionIn
					out *[]storage.StepCriterion
				}{{c.All, &sc.All}, {c.Any, &sc.Any}} {
					for _, cr := range list.in {
						x, err := cr.criterion(fmt.Sprintf("%s.decision.conditions[%d]", k, j))
						if err != nil {
							return nil, err
						}
						*list.out = append(*list.out, x)
					}
				}
				dec.Conditions = append(dec.Conditions, sc)
			}
			step.Decision = dec
		}
		w.Steps = append(w.Steps, step)
	}
	if len(errs) > 0 {
		return nil, &storage.ValidationError{Items: errs}
	}
	if err := storage.CheckWorkflow(w); err != nil {
		return nil, err
	}
	return w, nil
}

// HandleAddWorkflow serves POST /workflows.
func (s *Handlers) HandleAddWorkflow(r *api.Request) error {
	w, err := s.workflowFromBody(r, uuid.NewString())
	if err != nil {
		return err
	}
	if _, err := s.Apply(r, storage.OpPutWorkflow, storage.PutWorkflow{Workflow: *w, Create: true}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"workflowId": w.WorkflowID})
}

// HandleSetWorkflow serves PUT /workflows/{workflowId}[?createIfMissing=true].
func (s *Handlers) HandleSetWorkflow(r *api.Request) error {
	create := false
	switch v := r.Query("createIfMissing"); v {
	case "", "false":
	case "true":
		create = true
	default:
		return api.Invalid("createIfMissing", "invalid 'createIfMissing' parameter")
	}
	w, err := s.workflowFromBody(r, api.PathParam(r, "workflowId"))
	if err != nil {
		return err
	}
	if _, err := s.Apply(r, storage.OpPutWorkflow, storage.PutWorkflow{Workflow: *w, CreateIfMissing: create}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Workflow set"})
}

// HandleUpdateWorkflow serves PATCH /workflows/{workflowId}.
func (s *Handlers) HandleUpdateWorkflow(r *api.Request) error {
	var in struct {
		Name        *string `json:"name"`
		Description *string `json:"description"`
		Status      *string `json:"status"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if in.Status != nil {
		up := strings.ToUpper(*in.Status)
		in.Status = &up
	}
	if in.Name != nil {
		n := strings.TrimSpace(*in.Name)
		in.Name = &n
	}
	p := storage.UpdateWorkflow{WorkflowID: api.PathParam(r, "workflowId"), Name: in.Name, Description: in.Description, Status: in.Status}
	if _, err := s.Apply(r, storage.OpUpdateWorkflow, p); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Workflow updated"})
}

// HandleDeleteWorkflow serves DELETE /workflows/{workflowId}.
func (s *Handlers) HandleDeleteWorkflow(r *api.Request) error {
	if _, err := s.Apply(r, storage.OpDeleteWorkflow, storage.UpdateWorkflow{WorkflowID: api.PathParam(r, "workflowId")}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Workflow deleted"})
}

func (s *Handlers) workflowSummary(site string, w *storage.Workflow) map[string]any {
	return map[string]any{"workflowId": w.WorkflowID, "name": w.Name, "description": w.Description,
		"status": w.Status, "insertedDate": api.FormatDate(w.InsertedDate), "userId": w.UserID,
		"inUse": s.DB.WorkflowInUse(site, w.WorkflowID)}
}

// HandleGetWorkflows serves GET /workflows[?status=].
func (s *Handlers) HandleGetWorkflows(r *api.Request) error {
	status := strings.ToUpper(r.Query("status"))
	if status != "" && status != storage.WorkflowActive && status != storage.WorkflowInactive {
		return api.Invalid("status", "invalid 'status' parameter, use ACTIVE or INACTIVE")
	}
	return api.KeyPage(r, "wf", "workflows", func(after string, limit int) ([]storage.Workflow, string, error) {
		return s.DB.Workflows(r.Site, after, limit)
	}, func(w *storage.Workflow) map[string]any {
		if status != "" && w.Status != status {
			return nil
		}
		return s.workflowSummary(r.Site, w)
	})
}

func stepJSON(st *storage.WorkflowStep) map[string]any {
	m := map[string]any{"stepId": st.StepID}
	if st.Description != "" {
		m["description"] = st.Description
	}
	if st.Action != nil {
		a := map[string]any{"type": st.Action.Type}
		if len(st.Action.Parameters) > 0 {
			var p map[string]any
			if json.Unmarshal(st.Action.Parameters, &p) == nil {
				a["parameters"] = p
			}
		}
		if st.Action.QueueID != "" {
			a["queueId"] = st.Action.QueueID
		}
		m["action"] = a
	}
	if st.Queue != nil {
		q := map[string]any{"queueId": st.Queue.QueueID}
		if len(st.Queue.ApprovalGroups) > 0 {
			q["approvalGroups"] = st.Queue.ApprovalGroups
		}
		m["queue"] = q
	}
	if len(st.Mappings) > 0 {
		m["mappings"] = st.Mappings
	}
	if st.Decision != nil {
		conds := make([]map[string]any, 0, len(st.Decision.Conditions))
		for _, c := range st.Decision.Conditions {
			cm := map[string]any{"transition": c.Transition}
			for k, list := range map[string][]storage.StepCriterion{"all": c.All, "any": c.Any} {
				if len(list) == 0 {
					continue
				}
				out := make([]map[string]any, 0, len(list))
				for _, cr := range list {
					x := map[string]any{"operator": cr.Operator}
					if cr.Field != "" {
						x["source"] = cr.Field
					} else {
						x["source"] = map[string]any{"attributeKey": cr.AttributeKey}
					}
					if cr.StringValue != nil {
						x["stringValue"] = *cr.StringValue
					}
					if cr.NumberValue != nil {
						x["numberValue"] = *cr.NumberValue
					}
					if cr.BooleanValue != nil {
						x["booleanValue"] = *cr.BooleanValue
					}
					if len(cr.StringValues) > 0 {
						x["stringValues"] = cr.StringValues
					}
					out = append(out, x)
				}
				cm[k] = out
			}
			conds = append(conds, cm)
		}
		d := map[string]any{}
		if len(conds) > 0 {
			d["conditions"] = conds
		}
		if st.Decision.DefaultTransition != nil {
			d["defaultTransition"] = st.Decision.DefaultTransition
		}
		m["decision"] = d
	}
	if len(st.Decisions) > 0 {
		m["decisions"] = st.Decisions
	}
	return m
}

// HandleGetWorkflow serves GET /workflows/{workflowId}.
func (s *Handlers) HandleGetWorkflow(r *api.Request) error {
	w, err := s.DB.GetWorkflow(r.Site, api.PathParam(r, "workflowId"))
	if err != nil {
		return err
	}
	out := s.workflowSummary(r.Site, w)
	steps := make([]map[string]any, 0, len(w.Steps))
	for i := range w.Steps {
		steps = append(steps, stepJSON(&w.Steps[i]))
	}
	out["steps"] = steps
	return r.JSON(out)
}

// HandleGetWorkflowDocuments serves GET /workflows/{workflowId}/documents:
// the documents in the workflow (not COMPLETE) the caller may read.
func (s *Handlers) HandleGetWorkflowDocuments(r *api.Request) error {
	id := api.PathParam(r, "workflowId")
	return api.KeyPage(r, "wd", "documents", func(after string, limit int) ([]string, string, error) {
		return s.DB.WorkflowDocuments(r.Site, id, after, limit)
	}, func(doc *string) map[string]any {
		d, err := s.DB.GetDocument(r.Site, *doc)
		if err != nil || !s.DocAllows(r, d.Path, storage.FolderRead) {
			return nil
		}
		return api.DocumentJSON(d)
	})
}

func (s *Handlers) docWorkflowJSON(site string, dw *storage.DocWorkflow) map[string]any {
	m := map[string]any{"workflowId": dw.WorkflowID, "status": dw.Status, "actionCount": dw.ActionCount,
		"completedActionCount": dw.Completed, "insertedDate": api.FormatDate(dw.InsertedDate), "userId": dw.UserID}
	if dw.CurrentStepID != "" {
		m["currentStepId"] = dw.CurrentStepID
	}
	if w, err := s.DB.GetWorkflow(site, dw.WorkflowID); err == nil {
		m["name"], m["description"] = w.Name, w.Description
	}
	if dw.CompletedDate != nil {
		m["completedDate"] = api.FormatDate(*dw.CompletedDate)
	}
	if dw.Message != "" {
		m["message"] = dw.Message
	}
	if dw.RuleID != "" {
		m["ruleId"] = dw.RuleID
	}
	return m
}

// HandleGetDocumentWorkflows serves GET /documents/{documentId}/workflows.
func (s *Handlers) HandleGetDocumentWorkflows(r *api.Request) error {
	if _, err := s.DB.GetDocument(r.Site, r.DocID()); err != nil {
		return err
	}
	return api.KeyPage(r, "dw", "workflows", func(after string, limit int) ([]storage.DocWorkflow, string, error) {
		return s.DB.DocWorkflows(r.Site, r.DocID(), after, limit)
	}, func(dw *storage.DocWorkflow) map[string]any { return s.docWorkflowJSON(r.Site, dw) })
}

// HandleGetDocumentWorkflow serves GET /documents/{documentId}/workflows/{workflowId}.
func (s *Handlers) HandleGetDocumentWorkflow(r *api.Request) error {
	if _, err := s.DB.GetDocument(r.Site, r.DocID()); err != nil {
		return err
	}
	dw, err := s.DB.DocWorkflow(r.Site, r.DocID(), api.PathParam(r, "workflowId"))
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"workflow": s.docWorkflowJSON(r.Site, dw)})
}

// HandleAddDocumentWorkflow serves POST /documents/{documentId}/workflows.
func (s *Handlers) HandleAddDocumentWorkflow(r *api.Request) error {
	var in struct {
		WorkflowID string `json:"workflowId"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if in.WorkflowID == "" {
		return api.Invalid("workflowId", "'workflowId' is required")
	}
	if err := storage.CheckText("workflowId", in.WorkflowID, storage.MaxKeyBytes); len(err) > 0 {
		return &storage.ValidationError{Items: err}
	}
	if _, err := s.Apply(r, storage.OpStartWorkflow, storage.StartWorkflow{DocumentID: r.DocID(), WorkflowID: in.WorkflowID}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(api.MessageBody{Message: "Document added to workflow"})
}

// decisionIn reads {"decision":"APPROVE"|"REJECT","comments"}.
func (s *Handlers) readDecision(r *api.Request) (string, string, error) {
	var in struct {
		Decision string `json:"decision"`
		Comments string `json:"comments"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return "", "", err
	}
	in.Decision = strings.ToUpper(in.Decision)
	switch in.Decision {
	case "":
		return "", "", api.Invalid("decision", "'decision' is required")
	case storage.DecisionApprove, storage.DecisionReject:
	default:
		return "", "", api.Invalid("decision", "invalid 'decision', use APPROVE or REJECT")
	}
	if e := storage.CheckText("comments", in.Comments, storage.MaxDescriptionBytes); len(e) > 0 {
		return "", "", &storage.ValidationError{Items: e}
	}
	return in.Decision, in.Comments, nil
}

// HandleWorkflowDecision serves POST
// /documents/{documentId}/workflow/{workflowId}/decisions.
func (s *Handlers) HandleWorkflowDecision(r *api.Request) error {
	decision, comments, err := s.readDecision(r)
	if err != nil {
		return err
	}
	p := storage.WorkflowDecision{DocumentID: r.DocID(), WorkflowID: api.PathParam(r, "workflowId"), Decision: decision,
		Comments: comments, Decider: s.ActorOf(r)}
	if _, err := s.Apply(r, storage.OpWorkflowDecision, p); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(api.MessageBody{Message: "Decision saved"})
}
