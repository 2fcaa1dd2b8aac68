package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Pending renditions (issue 46): OCR records its text first and builds
// the searchable PDF/A after the action, naming the artifact it will be
// in the action's metadata.artifactId. So that a stop, a crash or a change
// of leader cannot silently break that promise, the outcome's
// OpFinishAction records the rendition as pending in the same
// transaction (FinishAction.Rendition), under
// ocp/<site>/<doc>/<artifactId>. The record goes, in the transaction
// that does it, when the artifact is added (OpAddArtifact with that id),
// when the document is deleted (clearActions) and when the document gets
// other content (versionHook.finish): a rendition of old content is not
// wanted. The pipeline lists the records when it starts (on a cluster's
// leader) and builds what they name.
//
// The action says where its rendition stands: metadata.artifactStatus is
// PENDING from the outcome that records it, COMPLETE when the artifact is
// added (in that transaction), FAILED (with artifactMessage) when it is
// given up through OpFailRendition: the first make failed, or the
// rebuilds after a start failed or were interrupted MaxRenditionAttempts
// times; DELETED when the artifact, once made, is deleted
// (OpDeleteArtifact). Each state change is one of these transactions, so the status
// and the record never disagree.

// Artifact statuses of an action's metadata.artifactStatus.
const (
	ArtifactPending  = "PENDING"
	ArtifactComplete = "COMPLETE"
	ArtifactFailed   = "FAILED"
	// ArtifactDeleted: the artifact was made and has been deleted since
	// (OpDeleteArtifact); the action no longer claims it exists.
	ArtifactDeleted = "DELETED"
)

// MaxRenditionAttempts bounds the rebuilds of a pending rendition (one
// per start of the pipeline, counted before it begins, so that a rebuild
// that stops the process is counted too).
const MaxRenditionAttempts = 3

// OpFailRendition records that a pending rendition was not made (or that
// a rebuild begins); see FailRendition.
const OpFailRendition Op = "FailRendition"

// PendingRendition is a rendition an action outcome promised and that is
// not kept yet. In FinishAction.Rendition only ArtifactID and
// ContentSHA256 are given; the applier fills in the rest.
type PendingRendition struct {
	SiteID     string `json:"siteId,omitempty"`
	DocumentID string `json:"documentId,omitempty"`
	ArtifactID string `json:"artifactId"`
	// ContentSHA256 is the content the rendition is made of.
	ContentSHA256 string `json:"contentSha256"`
	// Action is the action that promised it (its parameters say how to
	// make it again).
	Action       ActionRef `json:"action"`
	UserID       string    `json:"userId,omitempty"`
	InsertedDate time.Time `json:"insertedDate"`
	// Attempts counts the rebuilds begun (OpFailRendition with Attempt).
	Attempts int `json:"attempts,omitempty"`
	// LastError is why the last attempt failed.
	LastError string `json:"lastError,omitempty"`
}

// FailRendition is OpFailRendition's payload. With Attempt, a rebuild of
// the rendition begins: it is counted, and when MaxRenditionAttempts were
// begun already the rendition is given up instead (the result is false).
// With Message, an attempt failed: the rendition is given up when GiveUp
// is set or when it used all its attempts, and kept pending for the next
// start otherwise. Given up, the record goes and the action's
// metadata.artifactStatus becomes FAILED with artifactMessage. A
// rendition no longer pending (kept, dropped, given up) is left alone.
// The result is a bool: whether the rendition is still pending.
type FailRendition struct {
	DocumentID string `json:"documentId"`
	ArtifactID string `json:"artifactId"`
	Attempt    bool   `json:"attempt,omitempty"`
	Message    string `json:"message,omitempty"`
	GiveUp     bool   `json:"giveUp,omitempty"`
}

// maxRenditionMessageChars bounds artifactMessage (an engine's stderr).
const maxRenditionMessageChars = 500

func applyFailRendition(t *tx, c *Command) (any, error) {
	p, err := decode[FailRendition](c)
	if err != nil {
		return nil, err
	}
	if !utf8.ValidString(p.Message) {
		return nil, Invalid("message", "a rendition's failure message must be valid UTF-8")
	}
	var r PendingRendition
	k := renditionKey(c.Site, p.DocumentID, p.ArtifactID)
	if err := t.getJSON(k, &r); errors.Is(err, ErrNotFound) {
		return false, nil
	} else if err != nil {
		return nil, err
	}
	msg := p.Message
	switch {
	case p.Attempt && r.Attempts >= MaxRenditionAttempts:
		msg = fmt.Sprintf("the searchable PDF was not made in %d attempts", r.Attempts)
		if r.LastError != "" {
			msg += ": " + r.LastError
		}
	case p.Attempt:
		r.Attempts++
		return true, t.setJSON(k, r)
	case !p.GiveUp && r.Attempts < MaxRenditionAttempts:
		r.LastError = truncRunes(msg, maxRenditionMessageChars)
		return true, t.setJSON(k, r)
	}
	if msg == "" {
		msg = "the searchable PDF was not made"
	}
	if err := t.del(k); err != nil {
		return nil, err
	}
	return false, setArtifactStatus(t, c.Site, r.Action, ArtifactFailed, truncRunes(msg, maxRenditionMessageChars))
}

// setArtifactStatus sets the artifactStatus (and artifactMessage, removed
// when msg is empty) of the action that promised a rendition. An action
// gone or replaced since is left alone.
func setArtifactStatus(t *tx, site string, ref ActionRef, status, msg string) error {
	var a Action
	k := actionKey(site, ref.DocumentID, ref.Seq, ref.Retry)
	if err := t.getJSON(k, &a); errors.Is(err, ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if a.Metadata == nil {
		a.Metadata = map[string]string{}
	}
	a.Metadata["artifactStatus"] = status
	delete(a.Metadata, "artifactMessage")
	if msg != "" {
		a.Metadata["artifactMessage"] = msg
	}
	return t.setJSON(k, a)
}

// keptRendition marks the rendition art of doc kept, when it was pending:
// its record goes and its action says COMPLETE (OpAddArtifact).
func keptRendition(t *tx, site, doc, art string) error {
	var r PendingRendition
	k := renditionKey(site, doc, art)
	if err := t.getJSON(k, &r); errors.Is(err, ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if err := t.del(k); err != nil {
		return err
	}
	return setArtifactStatus(t, site, r.Action, ArtifactComplete, "")
}

// deletedRendition marks the actions of doc that made artifact art (their
// metadata.artifactId) as having made one that is gone: artifactStatus
// DELETED (OpDeleteArtifact, in its transaction).
func deletedRendition(t *tx, site, doc, art string) error {
	acts, err := loadActions(t, site, doc)
	if err != nil {
		return err
	}
	for _, a := range acts {
		if a.Metadata["artifactId"] == art && a.Metadata["artifactStatus"] != ArtifactDeleted {
			if err := setArtifactStatus(t, site, ActionRef{DocumentID: doc, Seq: a.Seq, Retry: a.Retry}, ArtifactDeleted, ""); err != nil {
				return err
			}
		}
	}
	return nil
}

// truncRunes cuts s to at most n characters.
func truncRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// maxRenditionIDBytes bounds an artifact id named by a pending rendition.
const maxRenditionIDBytes = 128

// addRendition records the pending rendition r of the action a of d.
// Only a COMPLETE outcome promises one, and only of d's current content:
// an outcome of content replaced meanwhile records none.
func addRendition(t *tx, c *Command, d *Document, a *Action, r PendingRendition) error {
	if id := r.ArtifactID; id == "" || len(id) > maxRenditionIDBytes || !utf8.ValidString(id) ||
		strings.ContainsFunc(id, func(c rune) bool { return c == '/' || c < 0x20 || c == 0x7f }) {
		return Invalid("artifactId", "a pending rendition needs an artifact id of at most 128 bytes without '/' or control characters")
	}
	if a.Status != ActionComplete || d.ArtifactOf != "" || d.DeletedDate != nil || !d.HasContent || d.ContentSHA256 != r.ContentSHA256 {
		return nil
	}
	ok, err := t.exists(docKey(c.Site, r.ArtifactID))
	if err != nil || ok {
		return err // kept already (an id is never reused)
	}
	r.SiteID, r.DocumentID, r.UserID, r.InsertedDate = c.Site, d.DocumentID, a.UserID, c.At
	r.Action = ActionRef{DocumentID: d.DocumentID, Seq: a.Seq, Retry: a.Retry}
	r.Attempts, r.LastError = 0, ""
	if err := t.setJSON(renditionKey(c.Site, d.DocumentID, r.ArtifactID), r); err != nil {
		return err
	}
	return setArtifactStatus(t, c.Site, r.Action, ArtifactPending, "")
}

// dropRenditions removes the pending renditions of a document (new
// content: they would be of the old one); their actions say FAILED.
func dropRenditions(t *tx, site, doc string) error {
	var list []PendingRendition
	if err := t.each(renditionPrefix(site, doc), func(_, v []byte) error {
		var r PendingRendition
		if err := json.Unmarshal(v, &r); err != nil {
			return err
		}
		list = append(list, r)
		return nil
	}); err != nil {
		return err
	}
	for _, r := range list {
		if err := t.del(renditionKey(site, doc, r.ArtifactID)); err != nil {
			return err
		}
		if err := setArtifactStatus(t, site, r.Action, ArtifactFailed, "not made: the document got new content first"); err != nil {
			return err
		}
	}
	return nil
}

// PendingRenditions calls fn for every pending rendition of every site.
func (d *DB) PendingRenditions(fn func(PendingRendition) error) error {
	return d.view(func(t *tx) error {
		return t.each([]byte(pfxRendition), func(_, v []byte) error {
			var r PendingRendition
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			return fn(r)
		})
	})
}

// PendingRendition returns one pending rendition; ErrNotFound when it is
// not pending (kept, or dropped).
func (d *DB) PendingRendition(site, doc, art string) (*PendingRendition, error) {
	var r PendingRendition
	if err := d.view(func(t *tx) error { return t.getJSON(renditionKey(site, doc, art), &r) }); err != nil {
		return nil, err
	}
	return &r, nil
}
