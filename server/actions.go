package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"quire/storage"
)

// actionTypes are the action types Quire runs: FormKiQ's, plus
// METADATA_EXTRACTION (in FormKiQ's server enum) and EVENTBUS (Quire's
// neutral name for EVENTBRIDGE). FormKiQ accepts MOVE, DELETE and QUEUE
// only in workflows; Quire also accepts them on a document (API.md).
var actionTypes = map[string]bool{
	"ANTIVIRUS": true, "DOCUMENTTAGGING": true, "FULLTEXT": true, "MOVE": true, "DELETE": true,
	"CHECKSUM": true, "NOTIFICATION": true, "OCR": true, "QUEUE": true, "WEBHOOK": true, "IDP": true,
	"PUBLISH": true, "PDFEXPORT": true, "EVENTBRIDGE": true, "EVENTBUS": true, "RESIZE": true,
	"LLMPROMPT": true, "DATA_CLASSIFICATION": true, "MALWARE_SCAN": true, "METADATA_EXTRACTION": true,
}

// convertActions validates actions as given to POST /documents, PATCH and
// POST /documents/{id}/actions, with FormKiQ's messages.
func (s *Server) convertActions(r *reqCtx, in []actionIn) ([]storage.Action, []storage.ValidationItem) {
	var errs []storage.ValidationItem
	var out []storage.Action
	for _, a := range in {
		t := strings.ToUpper(a.Type)
		if t == "" {
			errs = append(errs, storage.ValidationItem{Key: "type", Msg: "'type' is required"})
			continue
		}
		if !actionTypes[t] {
			errs = append(errs, storage.ValidationItem{Key: "type", Msg: "invalid action type '" + a.Type + "'"})
			continue
		}
		params := map[string]any{}
		if len(a.Parameters) > 0 && string(a.Parameters) != "null" {
			if a.Parameters[0] != '{' || json.Unmarshal(a.Parameters, &params) != nil {
				errs = append(errs, storage.ValidationItem{Key: "parameters", Msg: "invalid 'parameters'"})
				continue
			}
		}
		ps := actionParams(params)
		if e := s.checkActionParams(r, t, a.QueueID, ps); len(e) > 0 {
			errs = append(errs, e...)
			continue
		}
		var raw json.RawMessage
		if len(params) > 0 {
			raw, _ = json.Marshal(params)
		}
		out = append(out, storage.Action{Type: t, Status: storage.ActionPending, Parameters: raw, QueueID: a.QueueID})
	}
	return out, errs
}

// actionParams holds action parameters as strings (FormKiQ's are strings;
// numbers and booleans are accepted as their JSON text).
type actionParams map[string]any

func (p actionParams) get(k string) string {
	switch v := p[k].(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(v)
	default:
		b, _ := json.Marshal(v)
		return string(b)
	}
}

func (s *Server) checkActionParams(r *reqCtx, typ, queueID string, p actionParams) []storage.ValidationItem {
	var errs []storage.ValidationItem
	add := func(key, msg string) { errs = append(errs, storage.ValidationItem{Key: key, Msg: msg}) }
	required := func(k string) bool {
		if p.get(k) == "" {
			add("parameters."+k, "action '"+k+"' parameter is required")
			return false
		}
		return true
	}
	requiredPlain := func(k string) bool {
		if p.get(k) == "" {
			add("parameters."+k, "'"+k+"' parameter is required")
			return false
		}
		return true
	}
	switch typ {
	case "OCR":
		switch strings.ToUpper(p.get("ocrEngine")) {
		case "", "TESSERACT":
		case "TEXTRACT":
			add("parameters.ocrEngine", "ocrEngine 'TEXTRACT' is a cloud service and is not available on this server; use 'TESSERACT'")
		default:
			add("parameters.ocrEngine", "invalid 'ocrEngine' parameter")
		}
		for _, t := range splitList(p.get("ocrParseTypes")) {
			switch strings.ToUpper(t) {
			case "TEXT", "FORMS", "TABLES":
			case "QUERIES":
				// Answering questions about a page is Textract's; tesseract
				// reads text, so the queries would be silently ignored.
				add("parameters.ocrParseTypes", "ocrParseTypes 'QUERIES' needs Textract, a cloud service not available on this server")
			default:
				add("parameters.ocrParseTypes", "invalid 'ocrParseTypes' parameter")
			}
		}
		if v := p.get("ocrNumberOfPages"); v != "" {
			if n, err := strconv.Atoi(strings.Trim(v, `"`)); err != nil || n == 0 || n < -1 {
				add("parameters.ocrNumberOfPages", "invalid 'ocrNumberOfPages' parameter")
			}
		}
		if v := strings.ToLower(p.get("addPdfDetectedCharactersAsText")); v != "" && v != "true" && v != "false" {
			add("parameters.addPdfDetectedCharactersAsText", "invalid 'addPdfDetectedCharactersAsText' parameter")
		}
	case "FULLTEXT":
		if v := p.get("characterMax"); v != "" {
			if n, err := strconv.Atoi(strings.Trim(v, `"`)); err != nil || n == 0 || n < -1 {
				add("parameters.characterMax", "invalid 'characterMax' parameter")
			}
		}
	case "DOCUMENTTAGGING":
		if required("engine") && !strings.EqualFold(p.get("engine"), "chatgpt") && !strings.EqualFold(p.get("engine"), "llm") {
			add("parameters.engine", "invalid 'engine' parameter")
		}
		required("tags")
	case "WEBHOOK":
		if required("url") {
			if u, err := url.Parse(p.get("url")); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				add("parameters.url", "invalid 'url' parameter")
			} else if s.dest != nil {
				if err := s.dest.CheckWebhookURL(p.get("url")); err != nil {
					add("parameters.url", err.Error())
				}
			}
		}
	case "NOTIFICATION":
		if required("notificationType") && !strings.EqualFold(p.get("notificationType"), "email") {
			add("parameters.notificationType", "invalid 'notificationType' parameter")
		}
		required("notificationSubject")
		if p.get("notificationToCc") == "" && p.get("notificationToBcc") == "" {
			add("parameters.notificationToCc", "action 'notificationToCc' parameter is required")
		}
		if p.get("notificationText") == "" && p.get("notificationHtml") == "" {
			add("parameters.notificationText", "action 'notificationText' parameter is required")
		}
		for _, k := range []string{"notificationToCc", "notificationToBcc"} {
			for _, addr := range splitList(p.get(k)) {
				if !validEmail(addr) {
					add("parameters."+k, fmt.Sprintf("invalid email address '%s'", addr))
				}
			}
		}
		if len(errs) == 0 && !s.notificationConfigured(r.site) {
			add("parameters.notificationEmail", "notificationEmail is not configured")
		}
	case "QUEUE":
		if queueID == "" {
			add("queueId", "'queueId' is required")
		} else if !s.queueExists(r.site, queueID) {
			add("queueId", "'queueId' does not exist")
		}
	case "IDP":
		id := p.get("mappingId")
		if id == "" {
			add("mappingId", "'mappingId' is required")
		} else if _, err := s.db.GetMapping(r.site, id); err != nil {
			add("mappingId", "'mappingId' does not exist")
		}
	case "EVENTBRIDGE", "EVENTBUS":
		requiredPlain("eventBusName")
	case "CHECKSUM":
		if requiredPlain("checksumType") && !slices.Contains([]string{"SHA1", "SHA256", "SHA512"}, strings.ToUpper(p.get("checksumType"))) {
			add("parameters.checksumType", "invalid 'checksumType' parameter")
		}
	case "RESIZE":
		w, h := p.get("width"), p.get("height")
		okW, okH := required("width"), required("height")
		dim := func(k, v string) {
			if v == "auto" {
				return
			}
			if n, err := strconv.Atoi(strings.Trim(v, `"`)); err != nil || n <= 0 || n > 20000 {
				add("parameters."+k, "invalid '"+k+"' parameter")
			}
		}
		if okW {
			dim("width", w)
		}
		if okH {
			dim("height", h)
		}
		if w == "auto" && h == "auto" {
			add("parameters.width", "'width' and 'height' cannot both be 'auto'")
		}
		if v := strings.ToLower(p.get("outputType")); v != "" && !slices.Contains([]string{"png", "jpeg", "jpg", "gif"}, strings.TrimPrefix(v, ".")) {
			add("parameters.outputType", "invalid 'outputType' parameter")
		}
	case "LLMPROMPT", "DATA_CLASSIFICATION", "METADATA_EXTRACTION":
		if requiredPlain("llmPromptEntityName") {
			if _, err := s.db.LlmPrompt(r.site, p.get("llmPromptEntityName")); err != nil {
				add("parameters.llmPromptEntityName", fmt.Sprintf("entity '%s' not found", p.get("llmPromptEntityName")))
			}
		}
	case "MOVE":
		if requiredPlain("path") && !strings.HasSuffix(p.get("path"), "/") {
			add("parameters.path", "'path' parameter must end with '/'")
		}
	case "DELETE":
		if requiredPlain("deleteType") && !slices.Contains([]string{"SOFT_DELETE", "HARD_DELETE", "PURGE"}, strings.ToUpper(p.get("deleteType"))) {
			add("parameters.deleteType", "invalid 'deleteType' parameter")
		}
	}
	return errs
}

// splitList splits a comma separated parameter.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func validEmail(s string) bool {
	at := strings.LastIndexByte(s, '@')
	return at > 0 && at < len(s)-1 && !strings.ContainsAny(s, " \t\r\n<>,;\"")
}

// actionJSON is FormKiQ's DocumentAction.
func actionJSON(a *storage.Action) map[string]any {
	m := map[string]any{
		"type":         a.Type,
		"status":       a.Status,
		"userId":       a.UserID,
		"insertedDate": formatDate(a.InsertedDate),
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
		m["startDate"] = formatDate(*a.StartDate)
	}
	if a.CompletedDate != nil {
		m["completedDate"] = formatDate(*a.CompletedDate)
	}
	if len(a.Metadata) > 0 {
		m["metadata"] = a.Metadata
	}
	return m
}

func (s *Server) handleGetDocumentActions(r *reqCtx) error {
	limit, err := listLimit(r)
	if err != nil {
		return err
	}
	if _, err := s.db.GetDocumentAny(r.site, r.docID()); err != nil {
		return err
	}
	acts, err := s.db.GetActions(r.site, r.docID())
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
			return invalid("next", "invalid 'next' parameter")
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
	return r.JSON(out)
}

func (s *Server) handleAddDocumentActions(r *reqCtx) error {
	var in struct {
		Actions *[]actionIn `json:"actions"`
	}
	if err := r.readBody(&in, s.deps.MaxBodyBytes); err != nil {
		return err
	}
	if in.Actions == nil || len(*in.Actions) == 0 {
		return invalid("actions", "'actions' is required")
	}
	if _, err := s.db.GetDocument(r.site, r.docID()); err != nil {
		return err
	}
	acts, errs := s.convertActions(r, *in.Actions)
	if len(errs) > 0 {
		return &storage.ValidationError{Items: errs}
	}
	s.stampActionRights(r, acts)
	if _, err := s.apply(r, storage.OpAddActions, storage.AddActions{DocumentID: r.docID(), Actions: acts}); err != nil {
		return err
	}
	return r.JSON(messageBody{"Actions saved"})
}

func (s *Server) handleRetryDocumentActions(r *reqCtx) error {
	_, err := s.apply(r, storage.OpRetryActions, storage.RetryActions{DocumentID: r.docID(), Actor: s.actorOf(r)})
	if errors.Is(err, storage.ErrNoFailedAction) {
		return errStatus(http.StatusNotFound, "Failed action not found")
	}
	if err != nil {
		return err
	}
	return r.JSON(messageBody{"Actions retrying"})
}

// handleGetDocumentFulltext returns the text the FULLTEXT action kept,
// with the document's fields.
func (s *Server) handleGetDocumentFulltext(r *reqCtx) error {
	d, err := s.db.GetDocument(r.site, r.docID())
	if err != nil {
		return err
	}
	tr, err := s.db.Text(r.site, d.DocumentID, storage.TextFulltext)
	if err != nil {
		return err
	}
	if tr == nil {
		return &storage.NotFoundError{Msg: "Document " + d.DocumentID + " not found."}
	}
	out := documentJSON(d)
	out["content"] = tr.Text
	tags, err := s.db.GetTags(r.site, d.DocumentID)
	if err != nil {
		return err
	}
	tm := map[string]any{}
	for _, t := range tags {
		if len(t.Values) > 0 {
			tm[t.Key] = t.Values
		} else {
			tm[t.Key] = t.Value
		}
	}
	out["tags"] = tm
	return r.JSON(out)
}

// handleGetDocumentOcr returns the OCR text of the document's content.
func (s *Server) handleGetDocumentOcr(r *reqCtx) error {
	d, err := s.db.GetDocument(r.site, r.docID())
	if err != nil {
		return err
	}
	tr, err := s.db.Text(r.site, d.DocumentID, storage.TextOCR)
	if err != nil {
		return err
	}
	status := ""
	acts, err := s.db.GetActions(r.site, d.DocumentID)
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
		"contentType": "text/plain", "isBase64": false, "userId": tr.UserID, "insertedDate": formatDate(tr.InsertedDate),
	}
	switch strings.ToUpper(r.Query("outputType")) {
	case "KEY_VALUE":
		out["keyValues"] = ocrKeyValues(tr.Text)
	default:
		out["data"] = tr.Text
	}
	return r.JSON(out)
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

// handleGetMalwareScan serves GET /documents/{id}/malwareScan: the scans of
// ANTIVIRUS and MALWARE_SCAN actions, newest first.
func (s *Server) handleGetMalwareScan(r *reqCtx) error {
	d, err := s.db.GetDocument(r.site, r.docID())
	if err != nil {
		return err
	}
	res, err := s.db.Results(r.site, d.DocumentID, "malwareScan")
	if err != nil {
		return err
	}
	list := make([]json.RawMessage, 0, len(res))
	for i := len(res) - 1; i >= 0; i-- {
		list = append(list, res[i].Value)
	}
	return r.JSON(map[string]any{"malwareScanResults": list})
}

// handleGetDocumentNotifications serves GET /documents/{id}/notifications:
// the e-mails NOTIFICATION actions sent, newest first.
func (s *Server) handleGetDocumentNotifications(r *reqCtx) error {
	d, err := s.db.GetDocument(r.site, r.docID())
	if err != nil {
		return err
	}
	res, err := s.db.Results(r.site, d.DocumentID, "notification")
	if err != nil {
		return err
	}
	list := make([]map[string]any, 0, len(res))
	for i := len(res) - 1; i >= 0; i-- {
		var m map[string]any
		if json.Unmarshal(res[i].Value, &m) == nil {
			m["insertedDate"] = formatDate(res[i].InsertedDate)
			list = append(list, m)
		}
	}
	return r.JSON(map[string]any{"notifications": list})
}

// resultList serves the LLM results of a document: kind's results (of one
// prompt entity when the route names it) under the field list.
func (s *Server) resultList(kind, list string, named bool) handler {
	return func(r *reqCtx) error {
		d, err := s.db.GetDocument(r.site, r.docID())
		if err != nil {
			return err
		}
		res, err := s.db.Results(r.site, d.DocumentID, kind)
		if err != nil {
			return err
		}
		name := ""
		if named {
			name = pathParam(r, "llmPromptEntityName")
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

// addActionFor serves the endpoints that request one action: POST
// /documents/{id}/ocr, PUT /documents/{id}/antivirus and /malwareScan.
func (s *Server) addActionFor(typ, msg string) handler {
	return func(r *reqCtx) error {
		params := map[string]any{}
		if typ == "OCR" {
			var in struct {
				ParseTypes                     []string `json:"parseTypes"`
				AddPdfDetectedCharactersAsText *bool    `json:"addPdfDetectedCharactersAsText"`
				OcrEngine                      string   `json:"ocrEngine"`
				OcrNumberOfPages               string   `json:"ocrNumberOfPages"`
				TextractQueries                any      `json:"textractQueries"`
			}
			if err := r.readBody(&in, s.deps.MaxBodyBytes); err != nil {
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
			if in.TextractQueries != nil {
				params["ocrTextractQueries"] = in.TextractQueries
			}
		}
		if _, err := s.db.GetDocument(r.site, r.docID()); err != nil {
			return err
		}
		raw, _ := json.Marshal(params)
		acts, errs := s.convertActions(r, []actionIn{{Type: typ, Parameters: raw}})
		if len(errs) > 0 {
			return &storage.ValidationError{Items: errs}
		}
		if _, err := s.apply(r, storage.OpAddActions, storage.AddActions{DocumentID: r.docID(), Actions: acts}); err != nil {
			return err
		}
		return r.JSON(messageBody{msg})
	}
}
