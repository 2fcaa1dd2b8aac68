package storage

import (
	"encoding/json"
	"fmt"
)

// Text records set by hand, and the repair of one document's index
// entries (issue 18: PUT/DELETE /documents/{id}/ocr, POST
// /reindex/documents/{id}).

// MaxSetTextBytes bounds a text set by hand (FormKiQ's inline content
// limit, 5 MB).
const MaxSetTextBytes = 5 * 1000 * 1000

// SetText is the payload of OpSetText: the text of kind for the
// document's current content, as an engine would have written it.
type SetText struct {
	DocumentID  string `json:"documentId"`
	Kind        string `json:"kind"`
	Text        string `json:"text"`
	ContentType string `json:"contentType,omitempty"`
	Engine      string `json:"engine,omitempty"`
}

// DeleteText is the payload of OpDeleteText.
type DeleteText struct {
	DocumentID string `json:"documentId"`
	Kind       string `json:"kind"`
}

// ReindexDocument is the payload of OpReindexDocument.
type ReindexDocument struct {
	DocumentID string `json:"documentId"`
}

func checkTextKind(k string) error {
	if k != TextOCR && k != TextFulltext {
		return fmt.Errorf("text kind %q", k)
	}
	return nil
}

func applySetText(t *tx, c *Command) (any, error) {
	p, err := decode[SetText](c)
	if err != nil {
		return nil, err
	}
	if err := checkTextKind(p.Kind); err != nil {
		return nil, err
	}
	if len(p.Text) > MaxSetTextBytes {
		return nil, Invalid("content", fmt.Sprintf("'content' must be less than %d bytes", MaxSetTextBytes))
	}
	d, err := getDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	tr := TextRecord{Kind: p.Kind, ContentSHA: d.ContentSHA256, Text: p.Text, ContentType: p.ContentType,
		Engine: p.Engine, UserID: c.User, InsertedDate: c.At}
	if p.Kind == TextOCR {
		if err := detachFulltext(t, c.Site, d.DocumentID); err != nil { // textref.go
			return nil, err
		}
	}
	if err := t.setJSON(textKey(c.Site, d.DocumentID, p.Kind), tr); err != nil {
		return nil, err
	}
	if p.Kind == TextOCR {
		d.OCRText = true
	}
	return nil, putDoc(t, d) // the index reads the text again
}

func applyDeleteText(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteText](c)
	if err != nil {
		return nil, err
	}
	if err := checkTextKind(p.Kind); err != nil {
		return nil, err
	}
	d, err := getDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	ok, err := t.exists(textKey(c.Site, p.DocumentID, p.Kind))
	if err != nil {
		return nil, err
	}
	if !ok {
		return false, nil
	}
	if p.Kind == TextOCR {
		if err := detachFulltext(t, c.Site, p.DocumentID); err != nil { // textref.go
			return nil, err
		}
	}
	if err := t.del(textKey(c.Site, p.DocumentID, p.Kind)); err != nil {
		return nil, err
	}
	if p.Kind == TextOCR {
		d.OCRText = false
	}
	return true, putDoc(t, d)
}

// applyReindexDocument writes the document's tag and attribute index
// entries again from its tags and attributes (entries that went missing
// come back; writing an existing one changes nothing) and has the search
// index read the document again.
func applyReindexDocument(t *tx, c *Command) (any, error) {
	p, err := decode[ReindexDocument](c)
	if err != nil {
		return nil, err
	}
	d, err := getDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	// Collect first, write after: no writes while an iterator is open.
	var keys [][]byte
	if err := eachTag(t, c.Site, d.DocumentID, func(tg *Tag) error {
		for _, v := range tg.AllValues() {
			keys = append(keys, tagIndexKey(c.Site, tg.Key, v, d.DocumentID))
		}
		return nil
	}); err != nil {
		return nil, err
	}
	pre := docAttrPrefix(c.Site, d.DocumentID)
	if err := t.each(pre, func(k, v []byte) error {
		var a DocAttribute
		if err := json.Unmarshal(v, &a); err != nil {
			return err
		}
		key := string(k[len(pre):])
		for _, x := range a.indexValues() {
			keys = append(keys, attrIndexKey(c.Site, key, x, d.DocumentID))
		}
		return nil
	}); err != nil {
		return nil, err
	}
	for _, k := range keys {
		if err := t.set(k, nil); err != nil {
			return nil, err
		}
	}
	n := len(keys)
	t.touch(docKey(c.Site, d.DocumentID))
	return n, nil
}
