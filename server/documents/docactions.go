package documents

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"quire/server/internal/api"
	"quire/storage"
)

func (e actionEnv) CheckWebhookURL(u string) error {
	if e.s.Dest == nil {
		return nil
	}
	return e.s.Dest.CheckWebhookURL(u)
}

func (e actionEnv) NotificationConfigured() bool { return e.s.NotificationConfigured(e.site) }

func (e actionEnv) QueueExists(id string) bool { return e.s.queueExists(e.site, id) }

func (e actionEnv) MappingExists(id string) bool {
	_, err := e.s.DB.GetMapping(e.site, id)
	return err == nil
}

// OCRLanguages lists the languages the pipeline's tesseract has (an OCR
// action's ocrLanguages are checked against them).
func (e actionEnv) OCRLanguages(ctx context.Context) ([]string, error) {
	if e.s.Deps.Pipeline == nil {
		return nil, errors.New("this server runs no OCR engine")
	}
	return e.s.Deps.Pipeline.InstalledOCRLanguages(ctx)
}

func (e actionEnv) LlmPromptExists(name string) bool {
	_, err := e.s.DB.LlmPrompt(e.site, name)
	return err == nil
}

// ConvertActions validates actions as given to POST /documents, PATCH and
// POST /documents/{id}/actions, with FormKiQ's messages.
func (s *Handlers) ConvertActions(r *api.Request, in []ActionIn) ([]storage.Action, []storage.ValidationItem) {
	var errs []storage.ValidationItem
	var out []storage.Action
	for _, a := range in {
		t := strings.ToUpper(a.Type)
		if t == "" {
			errs = append(errs, storage.ValidationItem{Key: "type", Msg: "'type' is required"})
			continue
		}
		if !s.Deps.Actions.Known(t) {
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
		if e := s.Deps.Actions.Check(t, a.QueueID, params, actionEnv{s, r.Site}); len(e) > 0 {
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

// actionEnv answers the pipeline's parameter checks about one site.
type actionEnv struct {
	s    *Handlers
	site string
}

func (s *Handlers) queueExists(site, id string) bool {
	_, err := s.DB.GetQueue(site, id)
	return err == nil
}
