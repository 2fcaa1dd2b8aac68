package storage

import (
	"encoding/json"
	"slices"
)

// Default processing (issue 46; API.md "Default processing"). A document
// created, or given new content, by a request that names no actions gets
// its site's processing.defaultActions (SiteConfig.DefaultActions: OCR
// then FULLTEXT unless the site says otherwise). The doors say only that
// their request named none (NewDocument.DefaultActions,
// UpdateDocument.DefaultActions, CommitContent.DefaultActions); which
// actions that means is decided here, from the site configuration read in
// the same transaction, so a configuration changed meanwhile makes the
// transaction retry and a replay on another node adds the same actions.

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
// writes d). A type the document already has a PENDING action of is not
// added again: that action has not started, so it reads the content the
// document has when it runs (a second upload of the same document before
// its first actions ran adds nothing).
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
	return addActions(t, c, d, add)
}

// newContentVersion reports whether d, about to be written over prev, has
// new content replacing content it had (not its first content, which the
// request that created it chose the actions of).
func newContentVersion(prev, d *Document) bool {
	return prev.HasContent && d.HasContent && prev.ContentSHA256 != d.ContentSHA256
}
