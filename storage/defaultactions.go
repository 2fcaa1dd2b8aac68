package storage

import (
	"encoding/json"
	"mime"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Default processing (issue 46; API.md "Default processing"). A document
// created, or given new content, by a request that names no actions gets
// its site's processing.defaultActions (SiteConfig.DefaultActions: OCR
// then FULLTEXT unless the site says otherwise). The doors say only that
// their request named none (NewDocument.DefaultActions,
// UpdateDocument.DefaultActions, CommitContent.DefaultActions); which
// actions that means is decided here, from the site configuration read in
// the same transaction, so a configuration changed meanwhile makes the
// transaction retry and a replay on another node adds the same actions;
// the content type then decides which of them the document keeps
// (settleDefault, below).

// DefaultActionsOf returns the actions a new document or content version
// of a site with configuration c gets when its request names none
// (PENDING, by user).
func DefaultActionsOf(c *SiteConfig, user string) []Action {
	types := c.DefaultActions()
	out := make([]Action, 0, len(types))
	for _, t := range types {
		a := Action{Type: t, Status: ActionPending, UserID: user}
		if t == "FULLTEXT" {
			// The whole text (up to the pipeline's bound), not FormKiQ's
			// 2,048 characters for a FULLTEXT a client names without
			// characterMax: a scan's later pages must be findable (make
			// bench's 10-page upload-to-searchable row found nothing past
			// page 2).
			a.Parameters = defaultFulltextParameters
		}
		out = append(out, a)
	}
	return out
}

// defaultFulltextParameters are the parameters of a default FULLTEXT.
var defaultFulltextParameters = json.RawMessage(`{"characterMax":"-1"}`)

// wantsDefaultActions reports whether a document takes default processing
// at all: an artifact takes no actions, and a deep link or a folder
// document has no content to read.
func wantsDefaultActions(d *Document) bool {
	return d.ArtifactOf == "" && d.DeepLinkPath == "" && d.ResourceType != ResourceDossier
}

// addDefaultActions adds the site's default actions to d (the caller
// writes d), marked Default and decided by settleDefault where d's
// content type is known already (by a command of RulesDefaultsByType or
// later: the command's rules decide, not the release applying it). A type the document already has a
// PENDING action of is not added again: that action has not started, so
// it reads the content the document has when it runs (a second upload of
// the same document before its first actions ran adds nothing); the
// caller settles it for the new content (settleDefaults).
func addDefaultActions(t *tx, c *Command, d *Document) error {
	if !wantsDefaultActions(d) {
		return nil
	}
	cfg, err := siteConfigIn(t, c.Site)
	if err != nil {
		return err
	}
	add := DefaultActionsOf(cfg, c.User)
	if len(add) == 0 {
		return nil
	}
	if d.ActionSeq > 0 {
		have, err := loadActions(t, c.Site, d.DocumentID)
		if err != nil {
			return err
		}
		add = slices.DeleteFunc(add, func(a Action) bool {
			return slices.ContainsFunc(have, func(h Action) bool { return h.Type == a.Type && h.Status == ActionPending })
		})
	}
	if c.Rules < RulesDefaultsByType {
		// A command of an earlier release: its defaults stay PENDING for
		// the pipeline, unmarked, as that release applied it.
		return addActions(t, c, d, add)
	}
	kept := add[:0]
	for _, a := range add {
		a.Default = true
		drop, err := settleDefault(t, c, d, &a)
		if err != nil {
			return err
		}
		if !drop {
			kept = append(kept, a)
		}
	}
	return addActions(t, c, d, kept)
}

// Default actions decided by the content type (issue 46: default
// processing must not slow the write path). Each action is a start and a
// finish command for the pipeline, two synced commits; a text document's
// OCR (SKIPPED) and FULLTEXT (its text is the content, which the index
// read at the create) doubled what a create cost. So once a document's
// content and its type are known, in the transaction that makes them
// known (Raft replays it identically), a PENDING default action is
//   - dropped when it is an OCR of content that is neither an image nor a
//     PDF (OCRContent): the document never shows it;
//   - recorded COMPLETE when it is a FULLTEXT of content that is its own
//     text (TextContent) of at most maxSettledText bytes, with the text
//     record and metadata the pipeline's FULLTEXT writes (the text record
//     refers to the content when it is valid UTF-8) and its
//     actionCompleted event; nothing is indexed again;
//   - left to the pipeline otherwise.
// Actions a request named are never decided here (FormKiQ's behaviour).

// OCRContent reports whether content of type contentType gets a default
// OCR action: an image (TIFF included) or a PDF, whose text layer only
// the OCR engine finds out about. Text, Office and other documents get
// none.
func OCRContent(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return strings.HasPrefix(mt, "image/") || mt == "application/pdf"
}

// TextContent reports whether content of type contentType is its own
// text: the search index reads such content itself when the document is
// written (index.Extractable); text of other types comes from FULLTEXT
// and OCR.
func TextContent(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"):
		return true
	case mt == "application/json", mt == "application/xml", mt == "application/x-yaml", mt == "application/yaml":
		return true
	}
	return false
}

// maxSettledText bounds the content whose default FULLTEXT is recorded in
// the write's transaction: one chunk, as much as the index reads of a
// document's content. Longer text is the pipeline's FULLTEXT.
const maxSettledText = ChunkSize

// smallSettledText is the largest text settled in a buffer of its own
// size rather than a recycled 1 MiB chunk buffer (settleFulltext).
const smallSettledText = 64 << 10

// typeKnown reports whether d's content is there with its type.
func typeKnown(d *Document) bool {
	return d.HasContent && !d.DetectContentType && d.DeletedDate == nil
}

// settleDefault decides the default action a of d as the comment above
// says; drop reports that a is not to be kept. a is changed in place
// when it is recorded COMPLETE (the caller writes it).
func settleDefault(t *tx, c *Command, d *Document, a *Action) (drop bool, err error) {
	if !a.Default || a.Status != ActionPending || !typeKnown(d) {
		return false, nil
	}
	switch {
	case a.Type == "OCR":
		return !OCRContent(d.ContentType), nil
	case a.Type == "FULLTEXT" && TextContent(d.ContentType) && d.ContentLength <= maxSettledText:
		return false, settleFulltext(t, c, d, a)
	}
	return false, nil
}

// settleFulltext records the default FULLTEXT a of d COMPLETE with the
// text record the pipeline's FULLTEXT writes for plain text content
// (pipeline/text.go runFulltext: source "content", the whole text).
func settleFulltext(t *tx, c *Command, d *Document, a *Action) error {
	// Only the text's validity and length are kept (the record refers to
	// the content): the content is decoded into a scratch buffer, not
	// kept (storage/DESIGN.md, "Default processing on the write path").
	// A small text (the usual create) gets one of its own size: a
	// recycled chunk buffer is 1 MiB, and each one the pool had dropped
	// at a collection was allocated and zeroed again for a 4 KiB text.
	var dst []byte
	if d.ContentLength <= smallSettledText {
		dst = make([]byte, 0, d.ContentLength)
	} else {
		buf := chunkBufs.Get().(*[]byte)
		defer chunkBufs.Put(buf)
		dst = (*buf)[:0]
	}
	b, err := oneChunkContent(t, d.ContentSHA256, dst)
	if err != nil {
		return err
	}
	if int64(len(b)) != d.ContentLength {
		return nil // content not readable here: the pipeline's
	}
	tr := TextRecord{Kind: TextFulltext, ContentSHA: d.ContentSHA256, ContentType: "text/plain", Engine: TextFromContent,
		UserID: a.UserID, InsertedDate: c.At}
	chars := 0
	if utf8.Valid(b) {
		tr.From, tr.Bytes, chars = TextFromContent, int64(len(b)), utf8.RuneCount(b)
	} else {
		tr.Text = strings.ToValidUTF8(string(b), "")
		chars = utf8.RuneCountInString(tr.Text)
	}
	if err := t.setJSON(textKey(c.Site, d.DocumentID, TextFulltext), tr); err != nil {
		return err
	}
	at := c.At
	a.Status, a.StartDate, a.CompletedDate = ActionComplete, &at, &at
	a.Metadata = map[string]string{"source": TextFromContent, "characters": strconv.Itoa(chars)}
	// Its actionCompleted event follows the write's own (created,
	// updated): it is written after the activity trail, when the site has
	// a target for it (a document write adds none meanwhile). Without one
	// nothing is copied for it (the usual office: no subscription).
	if targets, err := eventTargets(t, c.Site, EventActionCompleted); err != nil || len(targets) == 0 {
		return err
	}
	doc, done := *d, *a
	t.afterTrail = append(t.afterTrail, func() error { return actionEvents(t, c, &doc, &done, &FinishAction{}) })
	return nil
}

// settleDefaults decides d's stored PENDING default actions (settleDefault)
// after its content or content type changed; the caller writes d.
func settleDefaults(t *tx, c *Command, d *Document) error {
	if d.ActionSeq == 0 || !typeKnown(d) {
		return nil
	}
	acts, err := loadActions(t, c.Site, d.DocumentID)
	if err != nil {
		return err
	}
	for i := range acts {
		a := &acts[i]
		if !a.Default || a.Status != ActionPending {
			continue
		}
		drop, err := settleDefault(t, c, d, a)
		switch {
		case err != nil:
			return err
		case drop:
			err = t.del(actionKey(c.Site, d.DocumentID, a.Seq, a.Retry))
		case a.Status != ActionPending:
			err = t.setJSON(actionKey(c.Site, d.DocumentID, a.Seq, a.Retry), a)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// newContentVersion reports whether d, about to be written over prev, has
// new content replacing content it had (not its first content, which the
// request that created it chose the actions of).
func newContentVersion(prev, d *Document) bool {
	return prev.HasContent && d.HasContent && prev.ContentSHA256 != d.ContentSHA256
}
