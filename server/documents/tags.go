package documents

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"sort"
	"strings"

	"quire/server/internal/api"
	"quire/storage"
)

// tagsBody is the body of the document tag endpoints: {"tags":[...]} or
// the single-tag form {"key","value"|"values"}.
type tagsBody struct {
	Tags   []TagIn  `json:"tags"`
	Key    *string  `json:"key"`
	Value  *string  `json:"value"`
	Values []string `json:"values"`
}

// single reports whether the body used the single-tag form.
func (b *tagsBody) single() bool { return b.Tags == nil && b.Key != nil }

func (s *Handlers) readTags(r *api.Request) ([]storage.Tag, bool, error) {
	var b tagsBody
	if err := r.ReadBody(&b, s.Deps.MaxBodyBytes); err != nil {
		return nil, false, err
	}
	in := b.Tags
	if b.single() {
		in = []TagIn{{Key: b.Key, Value: b.Value, Values: b.Values}}
	}
	if len(in) == 0 {
		return nil, false, api.Invalid("tags", "invalid body")
	}
	if err := onceEach(in); err != nil {
		return nil, false, err
	}
	tags, errs := ConvertTags(in, "tags")
	if err := api.CheckErrors(errs); err != nil {
		return nil, false, err
	}
	return tags, b.single(), nil
}

// onceEach refuses a body that gives a tag key twice.
func onceEach(in []TagIn) error {
	seen := map[string]bool{}
	for _, t := range in {
		if t.Key != nil && seen[*t.Key] {
			return errDuplicateTagKey
		}
		seen[api.Deref(t.Key)] = t.Key != nil
	}
	return nil
}

// errDuplicateTagKey is FormKiQ's answer to a tag key given twice.
var errDuplicateTagKey = api.BadRequest("Tag key can only be included once in body; please use 'values' to assign multiple tag values to that key")

func (s *Handlers) applyTags(r *api.Request, mode string, tags []storage.Tag) error {
	_, err := s.Apply(r, storage.OpSetTags, storage.SetTags{DocumentID: r.DocID(), Mode: mode, Tags: tags})
	return err
}

// HandleAddDocumentTags serves POST /documents/{documentId}/tags.
func (s *Handlers) HandleAddDocumentTags(r *api.Request) error {
	tags, single, err := s.readTags(r)
	if err != nil {
		return err
	}
	if err := s.applyTags(r, "add", tags); err != nil {
		return err
	}
	msg := "Created Tags."
	if single {
		msg = fmt.Sprintf("Created Tag '%s'.", tags[0].Key)
	}
	return r.Status(http.StatusCreated).JSON(api.MessageBody{Message: msg})
}

// HandleSetDocumentTags serves PUT /documents/{documentId}/tags: the given
// tags replace all user-defined tags.
func (s *Handlers) HandleSetDocumentTags(r *api.Request) error {
	tags, _, err := s.readTags(r)
	if err != nil {
		return err
	}
	if err := s.applyTags(r, "replace", tags); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Set Tags"})
}

// HandleUpdateDocumentTags serves PATCH /documents/{documentId}/tags.
func (s *Handlers) HandleUpdateDocumentTags(r *api.Request) error {
	tags, _, err := s.readTags(r)
	if err != nil {
		return err
	}
	if err := s.applyTags(r, "update", tags); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Updated Tags"})
}

// tagJSON renders a tag with FormKiQ's read fields.
func tagJSON(t *storage.Tag) map[string]any {
	m := map[string]any{
		"key":          t.Key,
		"documentId":   t.DocumentID,
		"type":         t.Type,
		"userId":       t.UserID,
		"insertedDate": api.FormatDate(t.InsertedDate),
	}
	if len(t.Values) > 0 {
		m["values"] = t.Values
	} else {
		m["value"] = t.Value
	}
	return m
}

// HandleGetDocumentTags serves GET /documents/{documentId}/tags, paged by
// key with next/previous tokens.
func (s *Handlers) HandleGetDocumentTags(r *api.Request) error {
	limit, err := api.ListLimit(r)
	if err != nil {
		return err
	}
	tags, err := s.DB.GetTags(r.Site, r.DocID())
	if err != nil {
		return err
	}
	sort.Slice(tags, func(i, j int) bool { return tags[i].Key < tags[j].Key })
	start := 0
	if tok := r.Query("next"); tok != "" {
		after, err := DecodeTagToken(tok)
		if err != nil {
			return err
		}
		start = sort.Search(len(tags), func(i int) bool { return tags[i].Key > after })
	} else if tok := r.Query("previous"); tok != "" {
		before, err := DecodeTagToken(tok)
		if err != nil {
			return err
		}
		end := sort.Search(len(tags), func(i int) bool { return tags[i].Key >= before })
		start = max(0, end-limit)
	}
	end := min(len(tags), start+limit)
	out := map[string]any{}
	list := make([]map[string]any, 0, end-start)
	for i := start; i < end; i++ {
		list = append(list, tagJSON(&tags[i]))
	}
	out["tags"] = list
	if end < len(tags) {
		out["next"] = EncodeTagToken(tags[end-1].Key)
	}
	if start > 0 {
		out["previous"] = EncodeTagToken(tags[start].Key)
	}
	return r.JSON(out)
}

func EncodeTagToken(k string) string { return base64.RawURLEncoding.EncodeToString([]byte("t:" + k)) }

func DecodeTagToken(tok string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil || !strings.HasPrefix(string(b), "t:") {
		return "", storage.ErrBadToken
	}
	return string(b[2:]), nil
}

// HandleGetDocumentTag serves GET /documents/{documentId}/tags/{tagKey}.
func (s *Handlers) HandleGetDocumentTag(r *api.Request) error {
	key := api.PathParam(r, "tagKey")
	t, err := s.DB.GetTag(r.Site, r.DocID(), key)
	if api.IsNotFound(err) {
		if _, derr := s.DB.GetDocument(r.Site, r.DocID()); derr != nil {
			return derr
		}
		return &storage.NotFoundError{Msg: fmt.Sprintf("Tag %s not found.", key)}
	}
	if err != nil {
		return err
	}
	return r.JSON(tagJSON(t))
}

// HandleSetDocumentTag serves PUT /documents/{documentId}/tags/{tagKey}.
func (s *Handlers) HandleSetDocumentTag(r *api.Request) error {
	key := api.PathParam(r, "tagKey")
	var b struct {
		Value  *string  `json:"value"`
		Values []string `json:"values"`
	}
	if err := r.ReadBody(&b, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if b.Value == nil && len(b.Values) == 0 {
		return api.Invalid("value", "'value' or 'values' is required")
	}
	tags, errs := ConvertTags([]TagIn{{Key: &key, Value: b.Value, Values: b.Values}}, "tags")
	if err := api.CheckErrors(errs); err != nil {
		return err
	}
	if storage.IsSystemTag(key) { // early answer; the applier decides
		return api.Invalid(key, storage.MsgUnallowedTagKey)
	}
	if _, err := s.DB.GetTag(r.Site, r.DocID(), key); err != nil {
		if api.IsNotFound(err) {
			if _, derr := s.DB.GetDocument(r.Site, r.DocID()); derr != nil {
				return derr
			}
			return &storage.NotFoundError{Msg: fmt.Sprintf("Tag %s not found.", key)}
		}
		return err
	}
	if err := s.applyTags(r, "update", tags); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Updated tag '%s' on document '%s'.", key, r.DocID())})
}

func (s *Handlers) deleteTag(r *api.Request, key string, value *string) (bool, error) {
	res, err := s.Apply(r, storage.OpDeleteTag, storage.DeleteTag{DocumentID: r.DocID(), Key: key, Value: value})
	if err != nil {
		return false, err
	}
	out, _ := res.Value.(*storage.DeleteTagResult)
	return out != nil && out.Removed, nil
}

// HandleDeleteDocumentTag serves DELETE /documents/{documentId}/tags/{tagKey}.
func (s *Handlers) HandleDeleteDocumentTag(r *api.Request) error {
	key := api.PathParam(r, "tagKey")
	removed, err := s.deleteTag(r, key, nil)
	if err != nil {
		return err
	}
	if !removed {
		return &storage.NotFoundError{Msg: fmt.Sprintf("Tag %s not found.", key)}
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Removed '%s' from document '%s'.", key, r.DocID())})
}

// HandleDeleteDocumentTagAndValue serves
// DELETE /documents/{documentId}/tags/{tagKey}/{tagValue}. A key the
// document lacks, or a value its tag does not have, is a 404 with
// FormKiQ's message (its handler answers so, although the OpenAPI text
// says the request is ignored; API.md).
func (s *Handlers) HandleDeleteDocumentTagAndValue(r *api.Request) error {
	key, val := api.PathParam(r, "tagKey"), api.PathParam(r, "tagValue")
	removed, err := s.deleteTag(r, key, &val)
	if err != nil {
		return err
	}
	if !removed {
		return &storage.NotFoundError{Msg: msgTagValueNotFound}
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Removed Tag from document '%s'.", r.DocID())})
}

// msgTagValueNotFound answers a tag value delete that removed nothing.
const msgTagValueNotFound = "Tag/Value combination not found."

// matchBatch is how many documents one OpUpdateMatchTags touches at most,
// so a large match never makes one oversized transaction (large tags make
// the batches smaller still, see storage.DocsPerBatch).
const matchBatch = 200

// HandleUpdateMatchingDocumentTags serves PATCH /documents/tags.
func (s *Handlers) HandleUpdateMatchingDocumentTags(r *api.Request) error {
	var b struct {
		Match *struct {
			Tag *struct {
				Key        string `json:"key"`
				BeginsWith string `json:"beginsWith"`
				Eq         string `json:"eq"`
			} `json:"tag"`
		} `json:"match"`
		Update *struct {
			Tags []TagIn `json:"tags"`
		} `json:"update"`
	}
	if err := r.ReadBody(&b, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	var errs []storage.ValidationItem
	if b.Match == nil || b.Match.Tag == nil {
		errs = append(errs, storage.ValidationItem{Key: "match", Msg: "'match' is required"})
	} else if b.Match.Tag.Key == "" {
		errs = append(errs, storage.ValidationItem{Key: "match.tag.key", Msg: "'match.tag.key' is required"})
	}
	if b.Update == nil || len(b.Update.Tags) == 0 {
		errs = append(errs, storage.ValidationItem{Key: "update", Msg: "'update' is required"})
	}
	if err := api.CheckErrors(errs); err != nil {
		return err
	}
	tags, errs := ConvertTags(b.Update.Tags, "update.tags")
	if err := api.CheckErrors(errs); err != nil {
		return err
	}
	m := storage.TagMatch{Key: b.Match.Tag.Key, Eq: b.Match.Tag.Eq, BeginsWith: b.Match.Tag.BeginsWith}
	ids, err := s.DB.FindByTag(r.Site, m, 0)
	if err != nil {
		return err
	}
	if ids, err = s.WritableIDs(r, ids); err != nil {
		return err
	}
	batch := storage.DocsPerBatch(tags, matchBatch)
	for len(ids) > 0 {
		n := min(batch, len(ids))
		if _, err := s.Apply(r, storage.OpUpdateMatchTags, storage.UpdateMatchTags{Match: m, DocumentIDs: ids[:n], Tags: tags}); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return r.JSON(api.MessageBody{Message: "received update tags request"})
}

// tagBatchFailure is a document POST /documents/tags/batch left out, in
// FormKiQ's error item shape: the document id and why.
type tagBatchFailure struct {
	Key   string `json:"key"`
	Error string `json:"error"`
}

// HandleTagDocuments serves POST /documents/tags/batch (Quire; API.md
// "Tagging many documents at once"): the same tags added to up to
// storage.MaxBatchDocuments documents by one command. The request is
// checked whole before anything is written; each document is checked by
// the applier, in its transaction (live, and WRITE in its folder), and
// one it leaves out is named in the answer's errors.
func (s *Handlers) HandleTagDocuments(r *api.Request) error {
	var b struct {
		DocumentIDs []string `json:"documentIds"`
		Tags        []TagIn  `json:"tags"`
	}
	if err := r.ReadBody(&b, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if len(b.Tags) == 0 {
		return api.Invalid("tags", "'tags' is required")
	}
	if err := onceEach(b.Tags); err != nil {
		return err
	}
	tags, errs := ConvertTags(b.Tags, "tags")
	if err := api.CheckErrors(errs); err != nil {
		return err
	}
	for _, t := range tags {
		if storage.IsSystemTag(t.Key) {
			errs = append(errs, storage.ValidationItem{Key: t.Key, Msg: storage.MsgUnallowedTagKey})
		}
	}
	errs = append(errs, storage.CheckTagBatch("documentIds", b.DocumentIDs, tags)...)
	if err := api.CheckErrors(errs); err != nil {
		return err
	}
	res, err := s.Apply(r, storage.OpTagDocuments, storage.TagDocuments{DocumentIDs: b.DocumentIDs, Tags: tags, Writer: s.ActorOf(r)})
	if err != nil {
		return err
	}
	done, ok := res.Value.(*storage.TagDocumentsResult)
	if !ok {
		return fmt.Errorf("tag documents: the command answered %T", res.Value)
	}
	failed := make([]tagBatchFailure, 0, len(done.Failed))
	for _, f := range done.Failed {
		failed = append(failed, tagBatchFailure{Key: f.DocumentID, Error: f.Msg})
	}
	out := map[string]any{
		"message":     fmt.Sprintf("Tagged %d of %d documents.", len(done.Tagged), len(b.DocumentIDs)),
		"documentIds": done.Tagged,
	}
	if len(failed) > 0 {
		out["errors"] = failed
	}
	return r.JSON(out)
}
