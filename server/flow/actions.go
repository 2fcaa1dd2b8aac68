package flow

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"quire/server/documents"
	"quire/server/internal/api"
	"quire/storage"
)

// actionJSON is FormKiQ's DocumentAction.
func actionJSON(a *storage.Action) map[string]any {
	m := map[string]any{
		"type":         a.Type,
		"status":       a.Status,
		"userId":       a.UserID,
		"insertedDate": api.FormatDate(a.InsertedDate),
		"retryCount":   a.RetryCount,
		"maxRetries":   a.MaxRetries,
	}
	if len(a.Parameters) > 0 {
		var p map[string]any
		if json.Unmarshal(a.Parameters, &p) == nil {
			m["parameters"] = p
		}
	}
	if a.QueueID != "" {
		m["queueId"] = a.QueueID
	}
	if a.WorkflowID != "" {
		m["workflowId"] = a.WorkflowID
	}
	if a.WorkflowStepID != "" {
		m["workflowStepId"] = a.WorkflowStepID
	}
	if a.Message != "" {
		m["message"] = a.Message
	}
	if a.StartDate != nil {
		m["startDate"] = api.FormatDate(*a.StartDate)
	}
	if a.CompletedDate != nil {
		m["completedDate"] = api.FormatDate(*a.CompletedDate)
	}
	if len(a.Metadata) > 0 {
		m["metadata"] = a.Metadata
	}
	return m
}

func (s *Handlers) HandleGetDocumentActions(r *api.Request) error {
	limit, err := api.ListLimit(r)
	if err != nil {
		return err
	}
	if _, err := s.DB.GetDocumentAny(r.Site, r.DocID()); err != nil {
		return err
	}
	acts, err := s.DB.GetActions(r.Site, r.DocID())
	if err != nil {
		return err
	}
	start := 0
	if tok := r.Query("next"); tok != "" {
		after := -1
		for i := range acts {
			if acts[i].ID() == tok {
				after = i
			}
		}
		if after < 0 {
			return api.Invalid("next", "invalid 'next' parameter")
		}
		start = after + 1
	}
	end := min(len(acts), start+limit)
	list := make([]map[string]any, 0, end-start)
	for i := start; i < end; i++ {
		list = append(list, actionJSON(&acts[i]))
	}
	out := map[string]any{"actions": list}
	if end < len(acts) {
		out["next"] = acts[end-1].ID()
	}
	// The console's OCR panel polls this: If-None-Match makes the polls
	// that find nothing new 304s.
	return r.JSONRevalidated(out)
}

func (s *Handlers) HandleAddDocumentActions(r *api.Request) error {
	var in struct {
		Actions *[]documents.ActionIn `json:"actions"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if in.Actions == nil || len(*in.Actions) == 0 {
		return api.Invalid("actions", "'actions' is required")
	}
	if _, err := s.DB.GetDocument(r.Site, r.DocID()); err != nil {
		return err
	}
	acts, errs := s.Documents.ConvertActions(r, *in.Actions)
	if len(errs) > 0 {
		return &storage.ValidationError{Items: errs}
	}
	s.StampActionRights(r, acts)
	if _, err := s.Apply(r, storage.OpAddActions, storage.AddActions{DocumentID: r.DocID(), Actions: acts}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Actions saved"})
}

// HandleRetryDocumentActions serves POST /documents/{id}/actions/retry:
// every failed action again (FormKiQ), or with Quire's optional body
// {"actionTypes": [...]} only those types, a finished one run again
// (API.md "Retrying one kind of action").
func (s *Handlers) HandleRetryDocumentActions(r *api.Request) error {
	var in struct {
		ActionTypes []string `json:"actionTypes"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil && !errors.Is(err, api.ErrNoBody) {
		return err
	}
	if len(in.ActionTypes) > storage.MaxActionsPerRequest {
		return api.Invalid("actionTypes", fmt.Sprintf("at most %d action types", storage.MaxActionsPerRequest))
	}
	var types []string
	for _, t := range in.ActionTypes {
		u := strings.ToUpper(t)
		switch {
		case !s.Deps.Actions.Known(u):
			return api.Invalid("actionTypes", "invalid action type '"+t+"'")
		case slices.Contains(types, u):
			return api.Invalid("actionTypes", "action type '"+t+"' is listed twice")
		}
		types = append(types, u)
	}
	_, err := s.Apply(r, storage.OpRetryActions, storage.RetryActions{DocumentID: r.DocID(), Actor: s.ActorOf(r), Types: types})
	if errors.Is(err, storage.ErrNoFailedAction) {
		return api.ErrStatus(http.StatusNotFound, "Failed action not found")
	}
	if err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Actions retrying"})
}

// HandleGetDocumentFulltext returns the text the FULLTEXT action kept,
// with the document's fields.
func (s *Handlers) HandleGetDocumentFulltext(r *api.Request) error {
	d, err := s.DB.GetDocument(r.Site, r.DocID())
	if err != nil {
		return err
	}
	notFound := &storage.NotFoundError{Msg: "Document " + d.DocumentID + " not found."}
	// What the fulltext index holds: the text and tags set through the
	// API when there are (fulltextwrites.go), else the FULLTEXT text and
	// the document's tags.
	v, err := s.DB.ViewForIndex(r.Site, d.DocumentID)
	if err != nil {
		return err
	}
	if v == nil || v.NoText {
		return notFound
	}
	text := ""
	if v.Text != nil {
		text = *v.Text
	} else {
		tr, err := s.DB.Text(r.Site, d.DocumentID, storage.TextFulltext)
		if err != nil {
			return err
		}
		if tr == nil {
			return notFound
		}
		text = tr.Text
	}
	out := api.DocumentJSON(d)
	out["content"] = text
	out["metadata"] = api.MetadataMap(d.Metadata)
	tm := map[string]any{}
	for _, t := range v.Tags {
		if len(t.Values) > 0 {
			tm[t.Key] = t.Values
		} else {
			tm[t.Key] = t.Value
		}
	}
	out["tags"] = tm
	return r.JSON(out)
}

// HandleGetDocumentOcr returns the OCR text of the document's content.
func (s *Handlers) HandleGetDocumentOcr(r *api.Request) error {
	d, err := s.DB.GetDocument(r.Site, r.DocID())
	if err != nil {
		return err
	}
	tr, err := s.DB.Text(r.Site, d.DocumentID, storage.TextOCR)
	if err != nil {
		return err
	}
	status := ""
	acts, err := s.DB.GetActions(r.Site, d.DocumentID)
	if err != nil {
		return err
	}
	for _, a := range acts {
		if a.Type == "OCR" {
			status = ocrStatus(a.Status)
		}
	}
	if tr == nil {
		if status == "" || status == "SUCCESSFUL" {
			return &storage.NotFoundError{Msg: "OCR for document " + d.DocumentID + " not found"}
		}
		return r.JSON(map[string]any{"documentId": d.DocumentID, "ocrStatus": status, "ocrEngine": "tesseract"})
	}
	out := map[string]any{
		"documentId": d.DocumentID, "ocrEngine": tr.Engine, "ocrStatus": "SUCCESSFUL",
		"contentType": "text/plain", "isBase64": false, "userId": tr.UserID, "insertedDate": api.FormatDate(tr.InsertedDate),
	}
	switch strings.ToUpper(r.Query("outputType")) {
	case "KEY_VALUE":
		// The pairs the OCR found in the layout (ocrParseTypes FORMS),
		// else the text's "Key: value" lines.
		kv, err := s.ocrResult(r.Site, d.DocumentID, "keyValues", tr)
		if err != nil {
			return err
		}
		if kv != nil {
			out["keyValues"] = kv
		} else {
			out["keyValues"] = ocrKeyValues(tr.Text)
		}
	case "TABLES":
		// The tables the OCR found (ocrParseTypes TABLES); none when it
		// was not asked to look for them.
		tables, err := s.ocrResult(r.Site, d.DocumentID, "tables", tr)
		if err != nil {
			return err
		}
		if tables == nil {
			tables = json.RawMessage("[]")
		}
		out["tables"] = tables
	default:
		out["data"] = tr.Text
	}
	return r.JSON(out)
}

// ocrResult returns the OCR result name (tables, keyValues) recorded by
// the OCR whose text tr is, or nil: the text and the results of one OCR
// are recorded by the same command, at the same time, and a later OCR of
// new content that did not look for them leaves an earlier one's results
// in place, which are not this text's.
func (s *Handlers) ocrResult(site, id, name string, tr *storage.TextRecord) (json.RawMessage, error) {
	res, err := s.DB.Results(site, id, "ocr")
	if err != nil {
		return nil, err
	}
	for _, r := range res {
		if r.Name == name && r.InsertedDate.Equal(tr.InsertedDate) {
			return r.Value, nil
		}
	}
	return nil, nil
}

func ocrStatus(action string) string {
	switch action {
	case storage.ActionComplete:
		return "SUCCESSFUL"
	case storage.ActionFailed, storage.ActionMaxRetries:
		return "FAILED"
	case storage.ActionSkipped:
		return "SKIPPED"
	}
	return "REQUESTED"
}

// ocrKeyValues reads "Key: value" lines of OCR text as key/values.
func ocrKeyValues(text string) []map[string]any {
	out := []map[string]any{}
	for _, line := range strings.Split(text, "\n") {
		k, v, ok := strings.Cut(line, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if ok && k != "" && v != "" && len(k) < 64 {
			out = append(out, map[string]any{"key": k, "values": []string{v}})
		}
	}
	return out
}

// HandleGetMalwareScan serves GET /documents/{id}/malwareScan: the scans of
// ANTIVIRUS and MALWARE_SCAN actions, newest first.
func (s *Handlers) HandleGetMalwareScan(r *api.Request) error {
	d, err := s.DB.GetDocument(r.Site, r.DocID())
	if err != nil {
		return err
	}
	res, err := s.DB.Results(r.Site, d.DocumentID, "malwareScan")
	if err != nil {
		return err
	}
	list := make([]json.RawMessage, 0, len(res))
	for i := len(res) - 1; i >= 0; i-- {
		list = append(list, res[i].Value)
	}
	return r.JSON(map[string]any{"malwareScanResults": list})
}

// ResultList serves the LLM results of a document: kind's results (of one
// prompt entity when the route names it) under the field list.
func (s *Handlers) ResultList(kind, list string, named bool) api.Handler {
	return func(r *api.Request) error {
		d, err := s.DB.GetDocument(r.Site, r.DocID())
		if err != nil {
			return err
		}
		res, err := s.DB.Results(r.Site, d.DocumentID, kind)
		if err != nil {
			return err
		}
		name := ""
		if named {
			name = api.PathParam(r, "llmPromptEntityName")
		}
		category := r.Query("analysisCategory")
		out := make([]map[string]any, 0, len(res))
		for _, x := range res {
			if name != "" && x.Name != name {
				continue
			}
			var m map[string]any
			if json.Unmarshal(x.Value, &m) != nil {
				continue
			}
			if category != "" && m["analysisCategory"] != category {
				continue
			}
			m["userId"] = x.UserID
			if named && kind == "aiPrompt" {
				delete(m, "llmPromptEntityName")
			}
			out = append(out, m)
		}
		return r.JSON(map[string]any{list: out})
	}
}

// AddActionFor serves the endpoints that request one action: POST
// /documents/{id}/ocr, PUT /documents/{id}/antivirus and /malwareScan.
func (s *Handlers) AddActionFor(typ, msg string) api.Handler {
	return func(r *api.Request) error {
		params := map[string]any{}
		if typ == "OCR" {
			var in struct {
				ParseTypes                     []string `json:"parseTypes"`
				AddPdfDetectedCharactersAsText *bool    `json:"addPdfDetectedCharactersAsText"`
				OcrEngine                      string   `json:"ocrEngine"`
				OcrNumberOfPages               string   `json:"ocrNumberOfPages"`
				OcrOutputType                  string   `json:"ocrOutputType"`
				TextractQueries                any      `json:"textractQueries"`
				OcrLanguages                   any      `json:"ocrLanguages"` // Quire extension
			}
			if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
				return err
			}
			if len(in.ParseTypes) > 0 {
				params["ocrParseTypes"] = strings.Join(in.ParseTypes, ",")
			}
			if in.AddPdfDetectedCharactersAsText != nil {
				params["addPdfDetectedCharactersAsText"] = strconv.FormatBool(*in.AddPdfDetectedCharactersAsText)
			}
			if in.OcrEngine != "" {
				params["ocrEngine"] = in.OcrEngine
			}
			if in.OcrNumberOfPages != "" {
				params["ocrNumberOfPages"] = in.OcrNumberOfPages
			}
			if in.OcrOutputType != "" {
				params["ocrOutputType"] = in.OcrOutputType
			}
			if in.TextractQueries != nil {
				params["ocrTextractQueries"] = in.TextractQueries
			}
			if in.OcrLanguages != nil {
				params["ocrLanguages"] = in.OcrLanguages
			}
		}
		if _, err := s.DB.GetDocument(r.Site, r.DocID()); err != nil {
			return err
		}
		raw, _ := json.Marshal(params)
		acts, errs := s.Documents.ConvertActions(r, []documents.ActionIn{{Type: typ, Parameters: raw}})
		if len(errs) > 0 {
			return &storage.ValidationError{Items: errs}
		}
		if _, err := s.Apply(r, storage.OpAddActions, storage.AddActions{DocumentID: r.DocID(), Actions: acts}); err != nil {
			return err
		}
		return r.JSON(api.MessageBody{Message: msg})
	}
}
