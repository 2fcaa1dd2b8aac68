package vocabulary

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"quire/server/internal/api"
	"quire/storage"
)

// Numbering sequences are Quire's own API (FormKiQ has none), designed in
// FormKiQ's style; see API.md.

type sequenceIn struct {
	AttributeKey   *string `json:"attributeKey"`
	Pattern        *string `json:"pattern"`
	Start          *int64  `json:"start"`
	Reset          *string `json:"reset"`
	AssignOnCreate *bool   `json:"assignOnCreate"`
}

func (s *Handlers) sequenceJSON(r *api.Request, q *storage.Sequence) (map[string]any, error) {
	last, err := s.DB.SequenceCounter(r.Site, q, r.Now)
	if err != nil {
		return nil, err
	}
	m := map[string]any{
		"sequenceId":     q.SequenceID,
		"attributeKey":   q.AttributeKey,
		"pattern":        q.Pattern,
		"start":          q.Start,
		"reset":          q.Reset,
		"assignOnCreate": q.AssignOnCreate,
		"insertedDate":   api.FormatDate(q.InsertedDate),
		"userId":         q.UserID,
	}
	if last > 0 || q.Start == 0 {
		m["lastNumber"] = last
	}
	return m, nil
}

// HandleAddSequence serves POST /sites/{siteId}/sequences.
func (s *Handlers) HandleAddSequence(r *api.Request) error {
	var b struct {
		Sequence *sequenceIn `json:"sequence"`
	}
	if err := r.ReadBody(&b, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if b.Sequence == nil {
		return api.Invalid("sequence", "'sequence' is required")
	}
	in := b.Sequence
	var errs []storage.ValidationItem
	q := storage.Sequence{SequenceID: r.NewID(), AttributeKey: api.Deref(in.AttributeKey), Pattern: api.Deref(in.Pattern), Start: 1, Reset: "NEVER", AssignOnCreate: true}
	if q.AttributeKey == "" {
		errs = append(errs, storage.ValidationItem{Key: "attributeKey", Msg: "'attributeKey' is required"})
	}
	if q.Pattern == "" {
		errs = append(errs, storage.ValidationItem{Key: "pattern", Msg: "'pattern' is required"})
	} else if msg := storage.CheckSequencePattern(q.Pattern); msg != "" {
		errs = append(errs, storage.ValidationItem{Key: "pattern", Msg: msg})
	}
	if in.Start != nil {
		if *in.Start < 0 {
			errs = append(errs, storage.ValidationItem{Key: "start", Msg: "'start' must be 0 or more"})
		}
		q.Start = *in.Start
	}
	if in.Reset != nil {
		q.Reset = strings.ToUpper(*in.Reset)
		if !slices.Contains(storage.SequenceResets, q.Reset) {
			errs = append(errs, storage.ValidationItem{Key: "reset", Msg: "invalid 'reset', use NEVER, YEARLY, MONTHLY or DAILY"})
		}
	}
	if in.AssignOnCreate != nil {
		q.AssignOnCreate = *in.AssignOnCreate
	}
	if err := api.CheckErrors(errs); err != nil {
		return err
	}
	if _, err := s.Apply(r, storage.OpAddSequence, storage.AddSequence{Sequence: q}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"sequenceId": q.SequenceID})
}

// HandleGetSequences serves GET /sites/{siteId}/sequences.
func (s *Handlers) HandleGetSequences(r *api.Request) error {
	list, err := s.DB.Sequences(r.Site)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(list))
	for i := range list {
		m, err := s.sequenceJSON(r, &list[i])
		if err != nil {
			return err
		}
		out = append(out, m)
	}
	return r.JSON(map[string]any{"sequences": out})
}

// HandleGetSequence serves GET /sites/{siteId}/sequences/{sequenceId}.
func (s *Handlers) HandleGetSequence(r *api.Request) error {
	q, err := s.DB.GetSequence(r.Site, api.PathParam(r, "sequenceId"))
	if err != nil {
		return err
	}
	m, err := s.sequenceJSON(r, q)
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"sequence": m})
}

// HandleDeleteSequence serves DELETE /sites/{siteId}/sequences/{sequenceId}.
func (s *Handlers) HandleDeleteSequence(r *api.Request) error {
	id := api.PathParam(r, "sequenceId")
	if _, err := s.Apply(r, storage.OpDeleteSequence, storage.DeleteSequence{SequenceID: id}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Sequence '%s' deleted", id)})
}

// HandleNextSequenceValue serves POST /sites/{siteId}/sequences/{sequenceId}/next:
// it takes the next number, for a document when the body names one.
func (s *Handlers) HandleNextSequenceValue(r *api.Request) error {
	var b struct {
		DocumentID string `json:"documentId"`
	}
	if r.Request().Header.ContentLength() != 0 {
		if err := r.ReadBody(&b, s.Deps.MaxBodyBytes); err != nil {
			return err
		}
	}
	if b.DocumentID != "" && !api.IsUUIDv4(b.DocumentID) {
		return api.Invalid("documentId", fmt.Sprintf("invalid documentId '%s'", b.DocumentID))
	}
	// The number becomes an attribute of the document: WRITE in its
	// folder, as for setting the attribute by hand (issue 29).
	if err := s.RequireDocOf(r, b.DocumentID, storage.FolderWrite); err != nil {
		return err
	}
	res, err := s.Apply(r, storage.OpNextSequenceValue, storage.NextSequenceValue{SequenceID: api.PathParam(r, "sequenceId"), DocumentID: b.DocumentID})
	if err != nil {
		return err
	}
	out := map[string]any{"value": res.Value}
	if b.DocumentID != "" {
		out["documentId"] = b.DocumentID
	}
	return r.JSON(out)
}
