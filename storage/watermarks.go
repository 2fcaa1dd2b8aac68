package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"strings"
)

// WatermarkKind names how content of type ctype is stamped: "pdf",
// "png" or "jpeg"; "" when it cannot be (API.md "Watermarks").
func WatermarkKind(ctype string) string {
	t, _, _ := mime.ParseMediaType(ctype)
	switch strings.ToLower(t) {
	case "application/pdf":
		return "pdf"
	case "image/png":
		return "png"
	case "image/jpeg", "image/jpg":
		return "jpeg"
	}
	return ""
}

// Watermarks (API.md "Watermarks"): a document carries a watermark by
// an attribute whose definition has dataType WATERMARK; the definition's
// "watermark" object says what is stamped. An artifact is stamped with its
// document's watermarks as well as its own.

// DocumentWatermarks returns the watermark definitions a document's
// content is served with (none: served as stored), in attribute key
// order, the document's before its artifact's own. A deleted document
// answers too (its versions and trash copies are stamped alike).
func (d *DB) DocumentWatermarks(site, doc string) ([]json.RawMessage, error) {
	var out []json.RawMessage
	err := d.view(func(t *tx) error {
		var err error
		out, err = docWatermarks(t, site, doc)
		return err
	})
	return out, err
}

// DocumentWatermarkKeys returns the keys of the watermark attributes
// document doc (and, for an artifact, its document) carries: what a copy
// made from its content must carry too (a RESIZE rendition made a
// document of its own).
func (d *DB) DocumentWatermarkKeys(site, doc string) ([]string, error) {
	var keys []string
	err := d.view(func(t *tx) error {
		dd, err := getDoc(t, site, doc)
		if err != nil {
			return err
		}
		ids := []string{doc}
		if dd.ArtifactOf != "" {
			ids = []string{dd.ArtifactOf, doc}
		}
		for _, id := range ids {
			err := t.each(docAttrPrefix(site, id), func(_, v []byte) error {
				var a DocAttribute
				if err := json.Unmarshal(v, &a); err != nil {
					return err
				}
				if a.ValueType == DataWatermark {
					keys = append(keys, a.Key)
				}
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	return keys, err
}

func docWatermarks(t *tx, site, doc string) ([]json.RawMessage, error) {
	dd, err := getDoc(t, site, doc)
	if err != nil {
		return nil, err
	}
	ids := []string{doc}
	if dd.ArtifactOf != "" {
		ids = []string{dd.ArtifactOf, doc}
	}
	var out []json.RawMessage
	for _, id := range ids {
		err := t.each(docAttrPrefix(site, id), func(_, v []byte) error {
			var a DocAttribute
			if err := json.Unmarshal(v, &a); err != nil {
				return err
			}
			if a.ValueType != DataWatermark {
				return nil
			}
			def, err := lookupDef(t, site, a.Key)
			if errors.Is(err, ErrNotFound) || (err == nil && len(def.Watermark) == 0) {
				// Never served unstamped: a watermark attribute whose
				// definition is gone is an error, not no watermark.
				return fmt.Errorf("watermark attribute %q of document %s has no definition", a.Key, id)
			}
			if err != nil {
				return err
			}
			out = append(out, def.Watermark)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
