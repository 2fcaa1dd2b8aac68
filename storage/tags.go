package storage

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"time"
)

// Tag types as FormKiQ reports them.
const (
	TagUserDefined   = "USERDEFINED"
	TagSystemDefined = "SYSTEMDEFINED"
)

// Tag is a document tag: a key with one value, several values, or none
// (a key-only tag reads back with value "").
type Tag struct {
	Key          string    `json:"key"`
	Value        string    `json:"value,omitempty"`
	Values       []string  `json:"values,omitempty"`
	Type         string    `json:"type,omitempty"`
	UserID       string    `json:"userId,omitempty"`
	InsertedDate time.Time `json:"insertedDate"`
	DocumentID   string    `json:"documentId,omitempty"`
}

// AllValues returns the tag's values as a list (one "" for key-only).
func (tg *Tag) AllValues() []string {
	if len(tg.Values) > 0 {
		return tg.Values
	}
	return []string{tg.Value}
}

// Tag write modes.
const (
	tagsAdd     = "add"     // upsert the given keys
	tagsUpdate  = "update"  // upsert the given keys (PATCH)
	tagsReplace = "replace" // remove all user tags, then add the given ones

	// TagsAdd is the SetTags mode that adds or overwrites the given keys.
	TagsAdd = tagsAdd
)

// SetTags is the payload of OpSetTags. Mode is "add", "update" or
// "replace".
type SetTags struct {
	DocumentID string `json:"documentId"`
	Mode       string `json:"mode"`
	Tags       []Tag  `json:"tags"`
}

func applySetTags(t *tx, c *Command) (any, error) {
	p, err := decode[SetTags](c)
	if err != nil {
		return nil, err
	}
	if err := limitsErr(CheckTags("tags", p.Tags)); err != nil {
		return nil, err
	}
	d, err := getLiveDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	if err := writeTags(t, c, d.DocumentID, p.Tags, p.Mode); err != nil {
		return nil, err
	}
	return nil, touchDoc(t, c, d)
}

func touchDoc(t *tx, c *Command, d *Document) error {
	d.LastModifiedDate = c.At
	return putDoc(t, d)
}

func writeTags(t *tx, c *Command, doc string, tags []Tag, mode string) error {
	if mode == tagsReplace {
		var old []Tag
		if err := eachTag(t, c.Site, doc, func(tg *Tag) error {
			if tg.Type != TagSystemDefined {
				old = append(old, *tg)
			}
			return nil
		}); err != nil {
			return err
		}
		for i := range old {
			if err := removeTag(t, c.Site, doc, &old[i]); err != nil {
				return err
			}
		}
	}
	// Every system key of the request is named, as FormKiQ does.
	var forged []ValidationItem
	for _, tg := range tags {
		if err := t.checkSystemTag(tg.Key, tg.Type); err != nil {
			forged = append(forged, ValidationItem{Key: tg.Key, Msg: MsgUnallowedTagKey})
		}
	}
	if len(forged) > 0 {
		return &ValidationError{Items: forged}
	}
	for _, tg := range tags {
		var old Tag
		err := t.getJSON(tagKey(c.Site, doc, tg.Key), &old)
		switch {
		case err == nil:
			if err := removeTag(t, c.Site, doc, &old); err != nil {
				return err
			}
		case !errors.Is(err, ErrNotFound):
			return err
		}
		tg.DocumentID = doc
		tg.InsertedDate = c.At
		if tg.UserID == "" {
			tg.UserID = c.User
		}
		if tg.Type == "" {
			tg.Type = TagUserDefined
		}
		if len(tg.Values) == 1 {
			tg.Value, tg.Values = tg.Values[0], nil
		}
		if err := t.setJSON(tagKey(c.Site, doc, tg.Key), tg); err != nil {
			return err
		}
		for _, v := range tg.AllValues() {
			if err := t.set(tagIndexKey(c.Site, tg.Key, v, doc), nil); err != nil {
				return err
			}
		}
	}
	var sz requestSize
	if err := eachTag(t, c.Site, doc, func(tg *Tag) error {
		sz.add(tg.Key)
		for _, v := range tg.AllValues() {
			sz.add(v)
		}
		return nil
	}); err != nil {
		return err
	}
	return checkDocumentSize("tags", sz)
}

// SystemTagKeys are the tags Quire's pipeline writes itself (the
// antivirus verdict). Clients can read them but neither set nor remove
// them: a forged "CLEAN" must be impossible. Only the follow-up commands
// of a finished action (tx.system) may write them, and only as
// SYSTEMDEFINED tags: a DOCUMENTTAGGING action whose model answers with
// such a key (the key list is the user's) is refused too.
var SystemTagKeys = []string{"CLAMAV_SCAN_STATUS", "CLAMAV_SCAN_TIMESTAMP"}

// IsSystemTag reports whether key is one of SystemTagKeys.
func IsSystemTag(key string) bool { return slices.Contains(SystemTagKeys, key) }

// MsgUnallowedTagKey is FormKiQ's answer to a client's system tag key
// (keyed by the tag key itself).
const MsgUnallowedTagKey = "unallowed tag key"

func (t *tx) checkSystemTag(key, typ string) error {
	if IsSystemTag(key) && !(t.system && typ == TagSystemDefined) {
		return Invalid(key, MsgUnallowedTagKey)
	}
	return nil
}

// removeTag deletes a stored tag and its index entries.
func removeTag(t *tx, site, doc string, tg *Tag) error {
	for _, v := range tg.AllValues() {
		if err := t.del(tagIndexKey(site, tg.Key, v, doc)); err != nil {
			return err
		}
	}
	return t.del(tagKey(site, doc, tg.Key))
}

// deleteTags removes doc's tags at keys (gathered by a purge, purge.go)
// and their index entries.
func deleteTags(t *tx, site, doc string, keys [][]byte) error {
	return eachGathered(t, keys, func(_ []byte, tg *Tag) error { return removeTag(t, site, doc, tg) })
}

func eachTag(t *tx, site, doc string, fn func(*Tag) error) error {
	return t.each(tagPrefix(site, doc), func(_, v []byte) error {
		var tg Tag
		if err := jsonUnmarshal(v, &tg); err != nil {
			return err
		}
		return fn(&tg)
	})
}

// DeleteTag is the payload of OpDeleteTag: remove a whole tag, or, with
// Value set, one of its values.
type DeleteTag struct {
	DocumentID string  `json:"documentId"`
	Key        string  `json:"key"`
	Value      *string `json:"value,omitempty"`
}

// DeleteTagResult tells whether anything was removed.
type DeleteTagResult struct {
	Removed bool
}

func applyDeleteTag(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteTag](c)
	if err != nil {
		return nil, err
	}
	d, err := getLiveDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	if err := t.checkSystemTag(p.Key, ""); err != nil {
		return nil, err
	}
	var tg Tag
	if err := t.getJSON(tagKey(c.Site, d.DocumentID, p.Key), &tg); err != nil {
		if errors.Is(err, ErrNotFound) {
			return &DeleteTagResult{}, nil
		}
		return nil, err
	}
	if err := removeTag(t, c.Site, d.DocumentID, &tg); err != nil {
		return nil, err
	}
	if p.Value != nil {
		var keep []string
		found := false
		for _, v := range tg.AllValues() {
			if v == *p.Value {
				found = true
				continue
			}
			keep = append(keep, v)
		}
		if !found {
			// Nothing to remove: put the tag back as it was.
			if err := writeTagRaw(t, c.Site, d.DocumentID, &tg); err != nil {
				return nil, err
			}
			return &DeleteTagResult{}, nil
		}
		if len(keep) > 0 {
			tg.Value, tg.Values = "", keep
			if len(keep) == 1 {
				tg.Value, tg.Values = keep[0], nil
			}
			if err := writeTagRaw(t, c.Site, d.DocumentID, &tg); err != nil {
				return nil, err
			}
		}
	}
	return &DeleteTagResult{Removed: true}, touchDoc(t, c, d)
}

func writeTagRaw(t *tx, site, doc string, tg *Tag) error {
	if err := t.setJSON(tagKey(site, doc, tg.Key), tg); err != nil {
		return err
	}
	for _, v := range tg.AllValues() {
		if err := t.set(tagIndexKey(site, tg.Key, v, doc), nil); err != nil {
			return err
		}
	}
	return nil
}

// TagMatch selects documents by one tag: equal to Eq, or beginning with
// BeginsWith, or (both empty) having the key at all.
type TagMatch struct {
	Key        string `json:"key"`
	Eq         string `json:"eq,omitempty"`
	BeginsWith string `json:"beginsWith,omitempty"`
}

// UpdateMatchTags is the payload of OpUpdateMatchTags: set Tags on those of
// DocumentIDs that still match Match when the command is applied.
type UpdateMatchTags struct {
	Match       TagMatch `json:"match"`
	DocumentIDs []string `json:"documentIds"`
	Tags        []Tag    `json:"tags"`
}

func applyUpdateMatchTags(t *tx, c *Command) (any, error) {
	p, err := decode[UpdateMatchTags](c)
	if err != nil {
		return nil, err
	}
	if err := limitsErr(CheckTags("update.tags", p.Tags)); err != nil {
		return nil, err
	}
	n := 0
	for _, id := range p.DocumentIDs {
		d, err := getLiveDoc(t, c.Site, id)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		var tg Tag
		if err := t.getJSON(tagKey(c.Site, id, p.Match.Key), &tg); err != nil {
			if errors.Is(err, ErrNotFound) {
				continue
			}
			return nil, err
		}
		if !p.Match.matches(&tg) {
			continue
		}
		if err := writeTags(t, c, id, p.Tags, tagsUpdate); err != nil {
			return nil, err
		}
		if err := touchDoc(t, c, d); err != nil {
			return nil, err
		}
		n++
	}
	return n, nil
}

func (m TagMatch) matches(tg *Tag) bool {
	for _, v := range tg.AllValues() {
		switch {
		case m.Eq != "":
			if v == m.Eq {
				return true
			}
		case m.BeginsWith != "":
			if strings.HasPrefix(v, m.BeginsWith) {
				return true
			}
		default:
			return true
		}
	}
	return false
}

// FindByTag returns up to limit ids of documents carrying a tag that
// matches m, in index order, starting after the id after (for paging).
func (d *DB) FindByTag(site string, m TagMatch, limit int) ([]string, error) {
	var prefix []byte
	switch {
	case m.Eq != "":
		prefix = tagIndexPrefix(site, m.Key, m.Eq, true)
	default:
		prefix = tagIndexPrefix(site, m.Key, m.BeginsWith, false)
	}
	var out []string
	seen := map[string]bool{}
	err := d.view(func(t *tx) error {
		for _, k := range t.keys(prefix) {
			i := bytes.LastIndexByte(k, 0)
			id := string(k[i+1:])
			if seen[id] {
				continue
			}
			seen[id] = true
			out = append(out, id)
			if limit > 0 && len(out) >= limit {
				break
			}
		}
		return nil
	})
	return out, err
}
