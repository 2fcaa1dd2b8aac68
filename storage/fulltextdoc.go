package storage

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// What the fulltext index holds of a document can be set apart from the
// document itself (FormKiQ's PUT/POST/PATCH/DELETE
// /documents/{id}/fulltext, which write the OpenSearch entry): a
// FulltextOverride replaces the text and/or the tags the index takes from
// the document, or takes the document out of the fulltext index. It
// belongs to the content it was set for: new content (an upload) voids it,
// and the index follows the document again.
type FulltextOverride struct {
	ContentSHA string `json:"contentSha256"`
	Removed    bool   `json:"removed,omitempty"`
	// Text replaces the document's text when set.
	Text *string `json:"text,omitempty"`
	// Tags replace the document's tags when set (an empty list: none).
	Tags         *[]Tag    `json:"tags,omitempty"`
	UserID       string    `json:"userId,omitempty"`
	InsertedDate time.Time `json:"insertedDate"`
}

// Fulltext write modes (OpSetFulltext).
const (
	FulltextSet       = "set"       // PUT and POST: text and tags as given (tags absent: the document's)
	FulltextUpdate    = "update"    // PATCH: the text if given, the tags given merged by key
	FulltextDelete    = "delete"    // DELETE: out of the fulltext index
	FulltextDeleteTag = "deletetag" // DELETE .../fulltext/tags/{key}[/{value}]
)

// SetFulltext is the payload of OpSetFulltext.
type SetFulltext struct {
	DocumentID string  `json:"documentId"`
	Mode       string  `json:"mode"`
	Text       *string `json:"text,omitempty"`
	Tags       *[]Tag  `json:"tags,omitempty"`
	TagKey     string  `json:"tagKey,omitempty"`
	TagValue   *string `json:"tagValue,omitempty"`
}

func getOverride(t *tx, site, doc, contentSHA string) (*FulltextOverride, error) {
	var o FulltextOverride
	switch err := t.getJSON(fulltextKey(site, doc), &o); {
	case errors.Is(err, ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	}
	if o.ContentSHA != contentSHA {
		return nil, nil // set for content the document no longer has
	}
	return &o, nil
}

func applySetFulltext(t *tx, c *Command) (any, error) {
	p, err := decode[SetFulltext](c)
	if err != nil {
		return nil, err
	}
	d, err := getLiveDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	if p.Text != nil && len(*p.Text) > MaxSetTextBytes {
		return nil, Invalid("content", fmt.Sprintf("'content' must be less than %d bytes", MaxSetTextBytes))
	}
	if p.Tags != nil {
		if errs := CheckTags("tags", *p.Tags); len(errs) > 0 {
			return nil, &ValidationError{Items: errs}
		}
	}
	cur, err := getOverride(t, c.Site, d.DocumentID, d.ContentSHA256)
	if err != nil {
		return nil, err
	}
	// The tags the index holds now: the override's, else the document's.
	effective := func() ([]Tag, error) {
		if cur != nil && cur.Tags != nil {
			return slices.Clone(*cur.Tags), nil
		}
		var tags []Tag
		err := eachTag(t, c.Site, d.DocumentID, func(tg *Tag) error {
			if tg.Type != TagSystemDefined {
				tags = append(tags, Tag{Key: tg.Key, Value: tg.Value, Values: tg.Values})
			}
			return nil
		})
		return tags, err
	}
	next := FulltextOverride{ContentSHA: d.ContentSHA256, UserID: c.User, InsertedDate: c.At}
	if cur != nil && p.Mode != FulltextSet {
		next.Text, next.Tags = cur.Text, cur.Tags
	}
	switch p.Mode {
	case FulltextSet:
		next.Text, next.Tags = p.Text, p.Tags
	case FulltextUpdate:
		if cur != nil && cur.Removed {
			return nil, docNotFound(d.DocumentID)
		}
		if p.Text != nil {
			next.Text = p.Text
		}
		if p.Tags != nil {
			tags, err := effective()
			if err != nil {
				return nil, err
			}
			for _, nt := range *p.Tags {
				tags = slices.DeleteFunc(tags, func(x Tag) bool { return x.Key == nt.Key })
				tags = append(tags, nt)
			}
			next.Tags = &tags
		}
	case FulltextDelete:
		if cur != nil && cur.Removed {
			return nil, docNotFound(d.DocumentID)
		}
		next.Removed = true
	case FulltextDeleteTag:
		if cur != nil && cur.Removed {
			return nil, docNotFound(d.DocumentID)
		}
		tags, err := effective()
		if err != nil {
			return nil, err
		}
		i := slices.IndexFunc(tags, func(x Tag) bool { return x.Key == p.TagKey })
		if i < 0 {
			return nil, &NotFoundError{Msg: fmt.Sprintf("Tag '%s' not found in the fulltext index", p.TagKey)}
		}
		if p.TagValue == nil {
			tags = slices.Delete(tags, i, i+1)
		} else {
			vals := slices.DeleteFunc(tags[i].AllValues(), func(v string) bool { return v == *p.TagValue })
			if len(vals) == len(tags[i].AllValues()) {
				return nil, &NotFoundError{Msg: fmt.Sprintf("Tag '%s' has no value '%s' in the fulltext index", p.TagKey, *p.TagValue)}
			}
			switch len(vals) {
			case 0:
				tags = slices.Delete(tags, i, i+1)
			case 1:
				tags[i] = Tag{Key: p.TagKey, Value: vals[0]}
			default:
				tags[i] = Tag{Key: p.TagKey, Values: vals}
			}
		}
		next.Tags = &tags
	default:
		return nil, fmt.Errorf("set fulltext: unknown mode %q", p.Mode)
	}
	if err := t.setJSON(fulltextKey(c.Site, d.DocumentID), next); err != nil {
		return nil, err
	}
	t.touch(docKey(c.Site, d.DocumentID)) // the indexer reads the document again
	return nil, nil
}

// applyOverride gives a view the fulltext index's own text and tags, or
// marks it out of the fulltext index.
func applyOverride(t *tx, v *DocView) error {
	o, err := getOverride(t, v.Document.SiteID, v.Document.DocumentID, v.Document.ContentSHA256)
	if err != nil || o == nil {
		return err
	}
	if o.Removed {
		v.NoText = true
		return nil
	}
	if o.Tags != nil {
		v.Tags = slices.Clone(*o.Tags)
	}
	v.Text = o.Text
	return nil
}
