package storage

import (
	"errors"
	"fmt"
)

// TagDocuments is the payload of OpTagDocuments (POST
// /documents/tags/batch): Tags added to each of DocumentIDs, in one
// transaction. Each document is checked here, as the command is applied
// (a replay decides the same): a document that is not live (unknown, in
// the trash, an artifact's id) or whose folder does not let Writer write
// is left out and reported, the others are tagged. Writer nil (the
// server's own commands) checks no folder.
type TagDocuments struct {
	DocumentIDs []string     `json:"documentIds"`
	Tags        []Tag        `json:"tags"`
	Writer      *ActionActor `json:"writer,omitempty"`
}

// TagDocumentsResult is what OpTagDocuments did: the documents tagged, in
// the order given, and the ones left out with the reason.
type TagDocumentsResult struct {
	Tagged []string            `json:"tagged"`
	Failed []TagDocumentFailed `json:"failed,omitempty"`
}

// TagDocumentFailed is a document a batch left out, and why.
type TagDocumentFailed struct {
	DocumentID string `json:"documentId"`
	Msg        string `json:"error"`
}

func applyTagDocuments(t *tx, c *Command) (any, error) {
	p, err := decode[TagDocuments](c)
	if err != nil {
		return nil, err
	}
	if err := limitsErr(CheckTags("tags", p.Tags)); err != nil {
		return nil, err
	}
	if err := limitsErr(CheckTagBatch("documentIds", p.DocumentIDs, p.Tags)); err != nil {
		return nil, err
	}
	check := writerCheck(t, c.Site, p.Writer) // the folder permissions read once for the batch
	res := &TagDocumentsResult{Tagged: make([]string, 0, len(p.DocumentIDs))}
	for _, id := range p.DocumentIDs {
		d, err := getLiveDoc(t, c.Site, id)
		if err == nil && d.ArtifactOf != "" {
			err = docNotFound(id)
		}
		if errors.Is(err, ErrNotFound) {
			res.Failed = append(res.Failed, TagDocumentFailed{DocumentID: id, Msg: fmt.Sprintf("Document %s not found.", id)})
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := check(d.Path); err != nil {
			var denied *AccessError
			if !errors.As(err, &denied) {
				return nil, err
			}
			res.Failed = append(res.Failed, TagDocumentFailed{DocumentID: id, Msg: denied.Msg})
			continue
		}
		if err := writeTags(t, c, id, p.Tags, tagsAdd); err != nil {
			return nil, err
		}
		if err := touchDoc(t, c, d); err != nil {
			return nil, err
		}
		res.Tagged = append(res.Tagged, id)
	}
	return res, nil
}
