package server

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

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
func (s *Server) readFulltext(r *reqCtx) (*string, *[]storage.Tag, error) {
	var raw map[string]json.RawMessage
	if err := r.readBody(&raw, s.deps.MaxBodyBytes); err != nil {
		return nil, nil, err
	}
	for _, k := range fulltextFixed {
		if v, ok := raw[k]; ok && string(v) != "null" {
			return nil, nil, invalid(k, fmt.Sprintf("'%s' cannot be set in the fulltext index: it follows the document", k))
		}
	}
	var in struct {
		Content     *string `json:"content"`
		ContentType string  `json:"contentType"`
		IsBase64    bool    `json:"isBase64"`
		Tags        []tagIn `json:"tags"`
	}
	b, _ := json.Marshal(raw)
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, nil, errInvalidBody
	}
	if in.ContentType != "" && !strings.HasPrefix(strings.ToLower(in.ContentType), "text/") {
		return nil, nil, invalid("contentType", "fulltext content must be text (text/plain)")
	}
	text := in.Content
	if text != nil && in.IsBase64 {
		dec, err := base64.StdEncoding.DecodeString(*text)
		if err != nil {
			return nil, nil, invalid("content", "invalid base64 content")
		}
		if !utf8.Valid(dec) {
			return nil, nil, invalid("content", "fulltext content must be UTF-8 text")
		}
		t := string(dec)
		text = &t
	}
	if text != nil && len(*text) > storage.MaxSetTextBytes {
		return nil, nil, invalid("content", fmt.Sprintf("'content' must be less than %d bytes", storage.MaxSetTextBytes))
	}
	var tags *[]storage.Tag
	if _, ok := raw["tags"]; ok {
		tg, errs := convertTags(in.Tags, "tags")
		if err := checkErrors(errs); err != nil {
			return nil, nil, err
		}
		if tg == nil {
			tg = []storage.Tag{}
		}
		tags = &tg
	}
	if text == nil && tags == nil {
		return nil, nil, invalid("", "'content' or 'tags' is required")
	}
	return text, tags, nil
}

// handleSetDocumentFulltext serves PUT and POST /documents/{id}/fulltext:
// the index holds the text and tags given (absent ones: the document's).
func (s *Server) handleSetDocumentFulltext(r *reqCtx) error {
	text, tags, err := s.readFulltext(r)
	if err != nil {
		return err
	}
	p := storage.SetFulltext{DocumentID: r.docID(), Mode: storage.FulltextSet, Text: text, Tags: tags}
	if _, err := s.apply(r, storage.OpSetFulltext, p); err != nil {
		return err
	}
	if r.Method() == http.MethodPost {
		return r.Status(http.StatusCreated).JSON(messageBody{"Added document to fulltext index"})
	}
	return r.JSON(messageBody{"Set document in fulltext index"})
}

// handleUpdateDocumentFulltext serves PATCH /documents/{id}/fulltext: the
// text if given, the tags given merged by key into those the index holds.
func (s *Server) handleUpdateDocumentFulltext(r *reqCtx) error {
	text, tags, err := s.readFulltext(r)
	if err != nil {
		return err
	}
	p := storage.SetFulltext{DocumentID: r.docID(), Mode: storage.FulltextUpdate, Text: text, Tags: tags}
	if _, err := s.apply(r, storage.OpSetFulltext, p); err != nil {
		return err
	}
	return r.JSON(messageBody{"Updated document in fulltext index"})
}

// handleDeleteDocumentFulltext serves DELETE /documents/{id}/fulltext: the
// document leaves the fulltext index (its name and folder stay
// searchable) until the text is set again or new content is uploaded.
func (s *Server) handleDeleteDocumentFulltext(r *reqCtx) error {
	p := storage.SetFulltext{DocumentID: r.docID(), Mode: storage.FulltextDelete}
	if _, err := s.apply(r, storage.OpSetFulltext, p); err != nil {
		return err
	}
	return r.JSON(messageBody{"Deleted document from fulltext index"})
}

// handleDeleteDocumentFulltextTag serves DELETE
// /documents/{id}/fulltext/tags/{tagKey}[/{tagValue}].
func (s *Server) handleDeleteDocumentFulltextTag(r *reqCtx) error {
	p := storage.SetFulltext{DocumentID: r.docID(), Mode: storage.FulltextDeleteTag, TagKey: pathParam(r, "tagKey")}
	if r.Params("tagValue") != "" {
		v := pathParam(r, "tagValue")
		p.TagValue = &v
	}
	if _, err := s.apply(r, storage.OpSetFulltext, p); err != nil {
		return err
	}
	return r.JSON(messageBody{"Removed tag from fulltext index"})
}
