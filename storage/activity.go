package storage

// The activity trail (SERVICE-SPEC.md §2.10; API.md "Activity trail"):
// every command that changes a document (its record, tags or attributes)
// leaves one entry per changed document or artifact, written by the
// command's own transaction, so an entry exists exactly when the change
// does. runApplier adds them after the applier succeeds; which ops leave
// entries is the activityOps registry (TestEveryOpHasAnApplier checks it
// lists every op). Entries stay after the document is deleted: the trail
// is the record of who did what.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Activity types (FormKiQ's UserActivityType; VIEW, DOWNLOAD and
// SSO_TOKEN_GRANT are reads, which Quire does not record).
const (
	ActivityCreate        = "CREATE"
	ActivityUpdate        = "UPDATE"
	ActivityDelete        = "DELETE"
	ActivitySoftDelete    = "SOFT_DELETE"
	ActivityRestore       = "RESTORE"
	ActivityNewVersion    = "NEW_VERSION"
	ActivityUpdateVersion = "UPDATE_VERSION"
)

// Sources of a change.
const (
	SourceUser       = "user"       // a signed-in user
	SourceAPIKey     = "apiKey"     // a site API key
	SourceDelegation = "delegation" // a delegation token: UserID acted on behalf of by Actor
	SourceWebhook    = "webhook"    // a payload posted to a webhook
	SourcePublic     = "public"     // an anonymous public submission
	SourceAction     = "action"     // the outcome of a document action
	SourceSystem     = "system"     // a scheduled job or the server itself
	SourceIntake     = "intake"     // a scanner intake source (intake.go): Actor is "<source>/<profile>"
)

// Via says where a command that came from a request came from. The server
// sets it on the commands of requests; it is stored with the command, so
// a replica records the same.
type Via struct {
	RequestID string `json:"requestId,omitempty"`
	Source    string `json:"source,omitempty"`
	// Actor and Reason: with a delegation token, the caller who presented
	// it (the command's User is the one acted for) and the token's reason;
	// with an API key, the key's name (User is who created the key).
	Actor  string `json:"actor,omitempty"`
	Reason string `json:"reason,omitempty"`
	// Govern: the caller holds GOVERN on the command's site (or is an
	// Admin); removing a watermark from a document needs it (API.md
	// "Watermarks").
	Govern bool `json:"govern,omitempty"`
}

// Activity is one entry of the trail.
type Activity struct {
	Type         string    `json:"type"`
	InsertedDate time.Time `json:"insertedDate"`
	UserID       string    `json:"userId"`
	DocumentID   string    `json:"documentId"`
	ArtifactID   string    `json:"artifactId,omitempty"`
	Path         string    `json:"path,omitempty"`
	Op           Op        `json:"op"`
	Source       string    `json:"source"`
	RequestID    string    `json:"requestId,omitempty"`
	Actor        string    `json:"actor,omitempty"`
	Reason       string    `json:"reason,omitempty"`
	// Changed names what changed: content, path, contentType, checksum,
	// promotedArtifactId, artifacts, metadata, deletedDate, tags,
	// attributes.
	Changed []string `json:"changed,omitempty"`
	// Changes holds old and new values of the small fields that changed
	// (path, contentType, contentLength, checksum, promotedArtifactId,
	// deletedDate), as FormKiQ's UserActivityChanges.
	Changes map[string]ActivityChange `json:"changes,omitempty"`
}

// ActivityChange is one field's old and new value.
type ActivityChange struct {
	OldValue any `json:"oldValue"`
	NewValue any `json:"newValue"`
}

// activityOps says, for every op, whether it leaves trail entries for the
// documents it changes. Bookkeeping ops that change nothing a user made
// (an action starting, index upkeep, detected content types, chunks) do
// not.
var activityOps = map[Op]bool{
	OpAddDocuments: true, OpUpdateDocument: true, OpCommitContent: true, OpPutChunks: false,
	OpSetContentType: false, OpSoftDelete: true, OpRestore: true, OpDeleteDocument: true,
	OpSetTags: true, OpDeleteTag: true, OpUpdateMatchTags: true, OpTagDocuments: true, OpAddAPIKey: false,
	OpDeleteAPIKey: false, OpSweepChunks: false, OpAddArtifact: true, OpDeleteArtifact: true,
	OpPromoteArtifact: true, OpSetVersion: true, OpDeleteVersion: true, OpPruneVersions: false,
	OpAddAttribute: false, OpUpdateAttribute: false, OpDeleteAttribute: false, OpSetDocAttributes: true,
	OpSetSchema: false, OpSetClassification: false, OpDeleteClassification: false, OpAddEntityType: false,
	OpDeleteEntityType: false, OpPutEntity: false, OpDeleteEntity: false, OpAddSequence: false,
	OpDeleteSequence: false, OpNextSequenceValue: true, OpAddFolder: false, OpDeleteFolder: false,
	OpStartFolderMove: false, OpMoveFolder: true, OpFinishFolderMove: false, OpSetFolderPermissions: false,
	OpPutMapping: false, OpDeleteMapping: false, OpPutWebhook: false, OpDeleteWebhook: false,
	OpAddWebhookTag: false, OpAddWebhookDocument: true, OpAddShortlink: false, OpDeleteShortlink: false,
	OpAgreeModel: false, OpAddUser: false, OpDeleteUser: false, OpUserOperation: false,
	OpSetResetCode: false, OpSetPassword: false, OpLoginResult: false, OpRevokeRefresh: false, OpExternalSignIn: false, OpAddGroup: false,
	OpDeleteGroup: false, OpAddGroupMember: false, OpRemoveGroupMember: false, OpSetText: true,
	OpDeleteText: true, OpReindexDocument: false, OpAddSite: false, OpPutExamine: false,
	OpSetFulltext: true, OpAddArchive: false, OpDeleteArchive: false, OpDeleteExamine: false,
	OpAddLocale: false, OpDeleteLocale: false, OpPutResourceItem: false, OpDeleteResourceItem: false,
	OpAddActions: false, OpRetryActions: false, OpStartAction: false, OpFinishAction: true,
	OpAddQueue: false, OpDeleteQueue: false, OpQueueDocument: false, OpQueueDecision: false,
	OpPutWorkflow: false, OpUpdateWorkflow: false, OpDeleteWorkflow: false, OpStartWorkflow: false,
	OpWorkflowDecision: false, OpPutRuleset: false, OpDeleteRuleset: false, OpPutRule: false, OpDeleteRule: false,
	OpSetSiteConfig: false, OpSetSystemConfig: false, OpPublish: false, OpUnpublish: false,
	OpMarkJobRun: false, OpRetentionDue: true, OpAddReview: false, OpUpdateReview: false,
	OpAddReviewDecision: false, OpSetDocumentLock: true, OpRemindersDue: false, OpExpireAgreements: true, OpPutEnvelope: false, OpPutSecret: false, OpDeleteSecret: false, OpEnvelopeChange: true, OpSpendJoinToken: false, OpRotateKeys: false, OpRotateSecretsKey: false,
	OpUpdateSite: false, OpAddShare: false, OpDeleteShare: false, OpSetSiteGroup: false, OpDeleteSiteGroup: false,
	OpPutIntakeProfile: false, OpDeleteIntakeProfile: false, OpIntakeDocument: true, OpAddIntakeError: false, OpPruneIntakeJournal: false,
	OpFinishRequest:        false,
	OpDigestMark:           false,
	OpFailRendition:        false,
	OpSetThumbnail:         false,
	OpQueueThumbnails:      false,
	OpPutEventSubscription: false, OpDeleteEventSubscription: false, OpSetEventBuses: false, OpEventsDelivered: false,
	OpAddNote: false, OpDeleteNote: false, OpAddSavedSearch: false, OpDeleteSavedSearch: false,
}

// Parts of a document a transaction wrote (tx.parts).
const (
	partRecord uint8 = 1 << iota
	partTags
	partAttrs
)

// noteWrite is called by tx.touch for a write under a document prefix: it
// remembers which part changed and, for the record, what it held before
// the transaction's first write of it.
func (t *tx) noteWrite(ref DocRef, prefix string, key []byte, write bool) {
	if !t.trail {
		return
	}
	if t.parts == nil {
		t.parts = map[DocRef]uint8{}
		t.before = map[DocRef][]byte{}
	}
	switch prefix {
	case pfxDoc:
		t.parts[ref] |= partRecord
		if _, seen := t.before[ref]; !seen && write {
			raw, err := t.getRaw(key)
			if err != nil {
				raw = nil // absent (a new document); a read failure fails the write itself
			}
			t.before[ref] = raw
		}
	case pfxTag:
		t.parts[ref] |= partTags
	case pfxDocAttr:
		t.parts[ref] |= partAttrs
	}
}

// runApplier applies c with fn in t and, when c's op is on the trail,
// records the activity of every document it changed.
// A command that carries an Idempotency-Key (c.Idem) is applied at most
// once per key (requests.go).
func runApplier(t *tx, c *Command, fn applyFunc) (any, error) {
	t.rules = c.Rules
	if c.Idem != nil {
		return applyOnce(t, c, fn)
	}
	if c.ID != "" {
		return applyOnceByID(t, c, fn)
	}
	return runOp(t, c, fn)
}

// runOp is runApplier without the Idempotency-Key.
func runOp(t *tx, c *Command, fn applyFunc) (any, error) {
	t.trail = activityOps[c.Op]
	v, err := fn(t, c)
	if err == nil && t.trail {
		err = recordActivity(t, c)
	}
	for _, f := range t.afterTrail {
		if err != nil {
			break
		}
		err = f()
	}
	t.afterTrail = nil
	return v, err
}

func recordActivity(t *tx, c *Command) error {
	refs := make([]DocRef, 0, len(t.parts))
	for r := range t.parts {
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool {
		if refs[i].Site != refs[j].Site {
			return refs[i].Site < refs[j].Site
		}
		return refs[i].ID < refs[j].ID
	})
	for _, ref := range refs {
		after, err := getDoc(t, ref.Site, ref.ID)
		if errors.Is(err, ErrNotFound) {
			after = nil
		} else if err != nil {
			return err
		}
		before := after
		if raw, ok := t.before[ref]; ok {
			before = nil
			if raw != nil {
				before = &Document{}
				if err := json.Unmarshal(raw, before); err != nil {
					return err
				}
			}
		}
		a := classify(c.Op, before, after, t.parts[ref])
		if a == nil {
			continue
		}
		a.InsertedDate, a.UserID, a.Op = c.At, c.User, c.Op
		d := after
		if d == nil {
			d = before
		}
		a.DocumentID, a.Path = d.DocumentID, d.Path
		if d.ArtifactOf != "" {
			a.DocumentID, a.ArtifactID = d.ArtifactOf, d.DocumentID
		}
		a.Source = SourceSystem
		switch {
		case c.Via != nil:
			a.Source, a.RequestID, a.Actor, a.Reason = c.Via.Source, c.Via.RequestID, c.Via.Actor, c.Via.Reason
		case c.Op == OpFinishAction:
			a.Source = SourceAction
		case c.Op == OpAddWebhookDocument:
			a.Source = SourceWebhook
		}
		if err := putActivity(t, ref.Site, ref.ID, a); err != nil {
			return err
		}
		if err := activityEvent(t, c, ref.Site, a, d); err != nil {
			return err
		}
	}
	return nil
}

// classify is the entry for a document that went from before to after
// (nil: absent), or nil when nothing a user would call a change happened
// (an action finishing without touching the document).
func classify(op Op, before, after *Document, parts uint8) *Activity {
	switch {
	case before == nil && after == nil:
		return nil
	case before == nil:
		return &Activity{Type: ActivityCreate}
	case after == nil:
		return &Activity{Type: ActivityDelete}
	}
	a := &Activity{Type: ActivityUpdate, Changes: map[string]ActivityChange{}}
	change := func(name string, old, new any) {
		a.Changed = append(a.Changed, name)
		a.Changes[name] = ActivityChange{OldValue: old, NewValue: new}
	}
	if before.ContentSHA256 != after.ContentSHA256 || before.HasContent != after.HasContent {
		a.Type = ActivityNewVersion
		a.Changed = append(a.Changed, "content")
		if before.ContentLength != after.ContentLength {
			a.Changes["contentLength"] = ActivityChange{OldValue: before.ContentLength, NewValue: after.ContentLength}
		}
	}
	if before.Path != after.Path {
		change("path", before.Path, after.Path)
	}
	if before.ContentType != after.ContentType {
		change("contentType", before.ContentType, after.ContentType)
	}
	if before.Checksum != after.Checksum {
		change("checksum", before.Checksum, after.Checksum)
	}
	if before.PromotedArtifactID != after.PromotedArtifactID {
		change("promotedArtifactId", before.PromotedArtifactID, after.PromotedArtifactID)
	}
	if before.ArtifactCount != after.ArtifactCount {
		a.Changed = append(a.Changed, "artifacts")
	}
	if fmt.Sprint(before.Metadata) != fmt.Sprint(after.Metadata) {
		a.Changed = append(a.Changed, "metadata")
	}
	if (before.DeletedDate == nil) != (after.DeletedDate == nil) {
		a.Type = ActivitySoftDelete
		if after.DeletedDate == nil {
			a.Type = ActivityRestore
		}
		a.Changed = append(a.Changed, "deletedDate")
	}
	if op == OpSetVersion && a.Type != ActivitySoftDelete && a.Type != ActivityRestore {
		a.Type = ActivityUpdateVersion
	}
	if parts&partTags != 0 {
		a.Changed = append(a.Changed, "tags")
	}
	if parts&partAttrs != 0 {
		a.Changed = append(a.Changed, "attributes")
	}
	if len(a.Changes) == 0 {
		a.Changes = nil
	}
	if len(a.Changed) == 0 && op == OpFinishAction {
		return nil // the action's own status, which its listing shows
	}
	return a
}

// Trail keys: ua/<site>/<record>/<rev>/<n> and uau/<site>/<user>\x00<rev>/<record>/<n>,
// where rev is the inverted time (newest first) and n tells apart entries
// of the same moment.
func activityKey(site, rec, rev string, n int) []byte {
	return []byte(fmt.Sprintf("%s%s/%s/%s/%04x", pfxActivity, sk(site), rec, rev, n))
}

func activityPrefix(site, rec string) []byte {
	return []byte(pfxActivity + sk(site) + "/" + rec + "/")
}

func userActivityKey(site, user, rev, rec string, n int) []byte {
	return []byte(fmt.Sprintf("%s%s/%s\x00%s/%s/%04x", pfxUserActivity, sk(site), user, rev, rec, n))
}

func userActivityPrefix(site, user string) []byte {
	return []byte(pfxUserActivity + sk(site) + "/" + user + "\x00")
}

func revTime(at time.Time) string { return fmt.Sprintf("%016x", ^uint64(at.UnixNano())) }

func putActivity(t *tx, site, rec string, a *Activity) error {
	rev := revTime(a.InsertedDate)
	n := 0
	for ; ; n++ {
		ok, err := t.exists(activityKey(site, rec, rev, n))
		if err != nil {
			return err
		}
		if !ok {
			break
		}
	}
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	if err := t.set(activityKey(site, rec, rev, n), b); err != nil {
		return err
	}
	return t.set(userActivityKey(site, a.UserID, rev, rec, n), b)
}

// DocumentActivities lists the trail of one document or artifact (by its
// record id), newest first, after the key suffix after; next continues.
func (d *DB) DocumentActivities(site, rec, after string, limit int) ([]Activity, string, error) {
	return d.activityPage(activityPrefix(site, rec), after, limit)
}

// UserActivities lists the changes user made in site, newest first.
func (d *DB) UserActivities(site, user, after string, limit int) ([]Activity, string, error) {
	return d.activityPage(userActivityPrefix(site, user), after, limit)
}

// activityPage reads up to limit entries under prefix whose key suffix
// comes after after (the last of the previous page).
func (d *DB) activityPage(prefix []byte, after string, limit int) (out []Activity, next string, err error) {
	err = d.view(func(t *tx) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = prefix
		it := t.txn.NewIterator(opts)
		defer it.Close()
		var last string
		for it.Seek(append(bytes.Clone(prefix), after...)); it.ValidForPrefix(prefix); it.Next() {
			item := it.Item()
			suffix := string(item.Key()[len(prefix):])
			if after != "" && suffix <= after {
				continue
			}
			if len(out) == limit {
				next = last
				return nil
			}
			var a Activity
			if err := item.Value(func(v []byte) error { return json.Unmarshal(v, &a) }); err != nil {
				return err
			}
			out, last = append(out, a), suffix
		}
		return nil
	})
	return out, next, err
}
