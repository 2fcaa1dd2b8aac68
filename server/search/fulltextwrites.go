package search

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"quire/server/documents"
	"quire/server/internal/api"
	"quire/storage"
)

// Fulltext writes (FormKiQ's PUT/POST/PATCH/DELETE
// /documents/{id}/fulltext; API.md "Fulltext index entries"): what the
// fulltext index holds of a document, apart from the document itself.

// fulltextFixed are fields of FormKiQ's fulltext bodies that Quire's
// index takes from the document itself; setting them is refused rather
// than ignored.
var fulltextFixed = []string{"path", "width", "height", "deepLinkPath", "resourceType", "checksum", "checksumType", "metadata", "contentUrls"}

// readFulltext reads a fulltext body: the text (content, possibly
// base64) and the tags, each nil when absent.
func (s *Handlers) readFulltext(r *api.Request) (*string, *[]storage.Tag, error) {
	var raw map[string]json.RawMessage
	if err := r.ReadBody(&raw, s.Deps.MaxBodyBytes); err != nil {
		return nil, nil, err
	}
	for _, k := range fulltextFixed {
		if v, ok := raw[k]; ok && string(v) != "null" {
			return nil, nil, api.Invalid(k, fmt.Sprintf("'%s' cannot be set in the fulltext index: it follows the document", k))
		}
	}
	var in struct {
		Content     *string           `json:"content"`
		ContentType string            `json:"contentType"`
		IsBase64    bool              `json:"isBase64"`
		Tags        []documents.TagIn `json:"tags"`
	}
	b, _ := json.Marshal(raw)
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, nil, api.ErrInvalidBody
	}
	if in.ContentType != "" && !strings.HasPrefix(strings.ToLower(in.ContentType), "text/") {
		return nil, nil, api.Invalid("contentType", "fulltext content must be text (text/plain)")
	}
	text := in.Content
	if text != nil && in.IsBase64 {
		dec, err := base64.StdEncoding.DecodeString(*text)
		if err != nil {
			return nil, nil, api.Invalid("content", "invalid base64 content")
		}
		if !utf8.Valid(dec) {
			return nil, nil, api.Invalid("content", "fulltext content must be UTF-8 text")
		}
		t := string(dec)
		text = &t
	}
	if text != nil && len(*text) > storage.MaxSetTextBytes {
		return nil, nil, api.Invalid("content", fmt.Sprintf("'content' must be less than %d bytes", storage.MaxSetTextBytes))
	}
	var tags *[]storage.Tag
	if _, ok := raw["tags"]; ok {
		tg, errs := documents.ConvertTags(in.Tags, "tags")
		if err := api.CheckErrors(errs); err != nil {
			return nil, nil, err
		}
		if tg == nil {
			tg = []storage.Tag{}
		}
		tags = &tg
	}
	if text == nil && tags == nil {
		return nil, nil, api.Invalid("", "'content' or 'tags' is required")
	}
	return text, tags, nil
}

// HandleSetDocumentFulltext serves PUT and POST /documents/{id}/fulltext:
// the index holds the text and tags given (absent ones: the document's).
func (s *Handlers) HandleSetDocumentFulltext(r *api.Request) error {
	text, tags, err := s.readFulltext(r)
	if err != nil {
		return err
	}
	p := storage.SetFulltext{DocumentID: r.DocID(), Mode: storage.FulltextSet, Text: text, Tags: tags}
	if _, err := s.Apply(r, storage.OpSetFulltext, p); err != nil {
		return err
	}
	if r.Method() == http.MethodPost {
		// 200, as the OpenAPI's AddDocumentFulltext answers.
		return r.JSON(api.MessageBody{Message: "Added document to fulltext index"})
	}
	return r.JSON(api.MessageBody{Message: "Set document in fulltext index"})
}

// HandleUpdateDocumentFulltext serves PATCH /documents/{id}/fulltext: the
// text if given, the tags given merged by key into those the index holds.
func (s *Handlers) HandleUpdateDocumentFulltext(r *api.Request) error {
	text, tags, err := s.readFulltext(r)
	if err != nil {
		return err
	}
	p := storage.SetFulltext{DocumentID: r.DocID(), Mode: storage.FulltextUpdate, Text: text, Tags: tags}
	if _, err := s.Apply(r, storage.OpSetFulltext, p); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Updated document in fulltext index"})
}

// HandleDeleteDocumentFulltext serves DELETE /documents/{id}/fulltext: the
// document leaves the fulltext index (its name and folder stay
// searchable) until the text is set again or new content is uploaded.
func (s *Handlers) HandleDeleteDocumentFulltext(r *api.Request) error {
	p := storage.SetFulltext{DocumentID: r.DocID(), Mode: storage.FulltextDelete}
	if _, err := s.Apply(r, storage.OpSetFulltext, p); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Deleted document from fulltext index"})
}

// HandleDeleteDocumentFulltextTag serves DELETE
// /documents/{id}/fulltext/tags/{tagKey}[/{tagValue}].
func (s *Handlers) HandleDeleteDocumentFulltextTag(r *api.Request) error {
	p := storage.SetFulltext{DocumentID: r.DocID(), Mode: storage.FulltextDeleteTag, TagKey: api.PathParam(r, "tagKey")}
	if r.Params("tagValue") != "" {
		v := api.PathParam(r, "tagValue")
		p.TagValue = &v
	}
	if _, err := s.Apply(r, storage.OpSetFulltext, p); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Removed tag from fulltext index"})
}
