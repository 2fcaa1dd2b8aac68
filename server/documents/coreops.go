package documents

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"quire/server/internal/api"
	"quire/storage"
)

// The rest of FormKiQ's core document operations (issue 18; API.md
// "Document syncs, OCR results by hand, reindex").

// HandleSetDocumentOcr serves PUT /documents/{id}/ocr {content,
// contentType, isBase64}: OCR text a client made itself, used as an
// engine's would be (GET /ocr, FULLTEXT).
func (s *Handlers) HandleSetDocumentOcr(r *api.Request) error {
	var in struct {
		Content     *string `json:"content"`
		ContentType string  `json:"contentType"`
		IsBase64    bool    `json:"isBase64"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if in.Content == nil {
		return api.Invalid("content", "'content' is required")
	}
	text := *in.Content
	if in.IsBase64 {
		b, err := base64.StdEncoding.DecodeString(text)
		if err != nil {
			return api.Invalid("content", "invalid base64 content")
		}
		if !utf8.Valid(b) {
			return api.Invalid("content", "OCR content must be UTF-8 text")
		}
		text = string(b)
	}
	if len(text) > storage.MaxSetTextBytes {
		return api.Invalid("content", fmt.Sprintf("'content' must be less than %d bytes", storage.MaxSetTextBytes))
	}
	if in.ContentType != "" && !strings.HasPrefix(strings.ToLower(in.ContentType), "text/") {
		return api.Invalid("contentType", "OCR content must be text (text/plain)")
	}
	cmd := storage.SetText{DocumentID: r.DocID(), Kind: storage.TextOCR, Text: text, ContentType: in.ContentType, Engine: "manual"}
	if _, err := s.Apply(r, storage.OpSetText, cmd); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "OCR content set"})
}

// HandleDeleteDocumentOcr serves DELETE /documents/{id}/ocr.
func (s *Handlers) HandleDeleteDocumentOcr(r *api.Request) error {
	id := r.DocID()
	res, err := s.Apply(r, storage.OpDeleteText, storage.DeleteText{DocumentID: id, Kind: storage.TextOCR})
	if err != nil {
		return err
	}
	if ok, _ := res.Value.(bool); !ok {
		return &storage.NotFoundError{Msg: "OCR for document " + id + " not found"}
	}
	return r.JSON(api.MessageBody{Message: "OCR content deleted"})
}

// HandleReindexDocument serves POST /reindex/documents/{id} {target}:
// the document's tag and attribute index entries are written again from
// its tags and attributes, and the search index reads it again.
func (s *Handlers) HandleReindexDocument(r *api.Request) error {
	var in struct {
		Target string `json:"target"`
	}
	if r.Request().Header.ContentLength() != 0 {
		if err := r.ReadBody(&in, 16<<10); err != nil {
			return err
		}
	}
	if in.Target != "" && in.Target != "ATTRIBUTES" {
		return api.Invalid("target", "invalid 'target': ATTRIBUTES")
	}
	id := r.DocID()
	if _, err := s.Apply(r, storage.OpReindexDocument, storage.ReindexDocument{DocumentID: id}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(api.MessageBody{Message: fmt.Sprintf("Document '%s' reindexed", id)})
}

// HandleGetDocumentSyncs serves GET /documents/{id}/syncs: the document's
// entry in the fulltext index, from Quire's state. Its service is
// OPENSEARCH, the one of the OpenAPI's DocumentSyncService values whose
// routes Quire's fulltext index answers (/queryFulltext,
// /documents/{id}/fulltext); delivery actions are not syncs in FormKiQ's
// sense and are listed by GET /documents/{id}/actions (API.md).
func (s *Handlers) HandleGetDocumentSyncs(r *api.Request) error {
	d, err := s.DB.GetDocument(r.Site, r.DocID())
	if err != nil {
		return err
	}
	limit, err := api.ListLimit(r)
	if err != nil {
		return err
	}
	from := 0
	if tok, err := api.ParseKeyToken(r, "sy"); err != nil {
		return err
	} else if tok != "" {
		if from, err = strconv.Atoi(tok); err != nil || from < 0 {
			return storage.ErrBadToken
		}
	}
	status := "COMPLETE"
	if s.Deps.Indexer != nil && s.Deps.Indexer.Pending(storage.DocRef{Site: r.Site, ID: d.DocumentID}) {
		status = "PENDING"
	}
	sync := map[string]any{"service": "OPENSEARCH", "type": "METADATA", "status": status,
		"insertedDate": api.FormatDate(d.LastModifiedDate), "userId": d.UserID}
	if status == "COMPLETE" {
		sync["syncDate"] = api.FormatDate(d.LastModifiedDate)
	}
	syncs := []map[string]any{sync}
	out := map[string]any{"syncs": []map[string]any{}}
	if from < len(syncs) {
		end := min(len(syncs), from+limit)
		out["syncs"] = syncs[from:end]
		if end < len(syncs) {
			out["next"] = api.KeyToken("sy", strconv.Itoa(end))
		}
	}
	return r.JSON(out)
}

// HandleAddDocumentSync serves POST /documents/{id}/syncs {sync:{service:
// FULLTEXT, type}}: the search index reads the document again.
func (s *Handlers) HandleAddDocumentSync(r *api.Request) error {
	var in struct {
		Sync *struct {
			Service string `json:"service"`
			Type    string `json:"type"`
		} `json:"sync"`
	}
	if r.Request().Header.ContentLength() != 0 {
		if err := r.ReadBody(&in, 16<<10); err != nil {
			return err
		}
	}
	if in.Sync != nil {
		if in.Sync.Service != "" && in.Sync.Service != "FULLTEXT" {
			return api.Invalid("service", "invalid 'service': FULLTEXT")
		}
		switch in.Sync.Type {
		case "", "METADATA", "CONTENT":
		default:
			return api.Invalid("type", "invalid 'type': METADATA or CONTENT")
		}
	}
	if _, err := s.Apply(r, storage.OpReindexDocument, storage.ReindexDocument{DocumentID: r.DocID()}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Added Document sync"})
}
