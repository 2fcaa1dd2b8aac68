package storage

import (
	"encoding/json"
	"fmt"
	"time"
)

// Op names a command type. It is a string so that an encoded command is
// readable in logs and in the Raft log.
type Op string

// The commands that change state. Each one is applied in one Badger
// transaction by its applier (DB.Apply). Adding an op means two lines in
// this file: its constant here and its applier in the appliers table
// below (TestEveryOpHasAnApplier fails if one is missing).
const (
	OpAddDocuments    Op = "AddDocuments"    // create documents (a parent and its children), tags, actions, inline content
	OpUpdateDocument  Op = "UpdateDocument"  // PATCH /documents/{id}: path, metadata, tags, attributes, content
	OpCommitContent   Op = "CommitContent"   // attach uploaded chunks to a document
	OpPutChunks       Op = "PutChunks"       // store content chunks (idempotent)
	OpSetContentType  Op = "SetContentType"  // write back a detected content type
	OpSoftDelete      Op = "SoftDelete"      // set deletedDate
	OpRestore         Op = "Restore"         // clear deletedDate
	OpDeleteDocument  Op = "DeleteDocument"  // hard delete (also purge)
	OpSetTags         Op = "SetTags"         // add, replace or update tags
	OpDeleteTag       Op = "DeleteTag"       // remove a tag or one of its values
	OpUpdateMatchTags Op = "UpdateMatchTags" // PATCH /documents/tags
	OpTagDocuments    Op = "TagDocuments"    // POST /documents/tags/batch: the same tags added to many documents
	OpAddAPIKey       Op = "AddAPIKey"       // create a per-site API key
	OpDeleteAPIKey    Op = "DeleteAPIKey"    // delete a per-site API key
	OpSweepChunks     Op = "SweepChunks"     // remove unreferenced chunks left by aborted uploads

	OpAddArtifact     Op = "AddArtifact"     // add an artifact to a document (artifacts.go)
	OpDeleteArtifact  Op = "DeleteArtifact"  // delete one artifact of a document
	OpPromoteArtifact Op = "PromoteArtifact" // set or clear the artifact a document serves

	OpSetVersion    Op = "SetVersion"    // set a document back to an earlier version (versions.go)
	OpDeleteVersion Op = "DeleteVersion" // delete an earlier version of a document
	OpPruneVersions Op = "PruneVersions" // drop the oldest versions of a document before a large purge

	OpAddAttribute         Op = "AddAttribute"         // define an attribute
	OpUpdateAttribute      Op = "UpdateAttribute"      // change an attribute definition
	OpDeleteAttribute      Op = "DeleteAttribute"      // remove an unused attribute definition
	OpSetDocAttributes     Op = "SetDocAttributes"     // add, set, replace or delete document attributes
	OpSetSchema            Op = "SetSchema"            // set the site schema
	OpSetClassification    Op = "SetClassification"    // create or replace a classification
	OpDeleteClassification Op = "DeleteClassification" // remove an unused classification
	OpAddEntityType        Op = "AddEntityType"        // create a custom entity type
	OpDeleteEntityType     Op = "DeleteEntityType"     // remove an entity type without entities
	OpPutEntity            Op = "PutEntity"            // add, set or update an entity
	OpDeleteEntity         Op = "DeleteEntity"         // remove an entity or one of its attributes
	OpAddSequence          Op = "AddSequence"          // create a numbering sequence
	OpDeleteSequence       Op = "DeleteSequence"       // remove a numbering sequence
	OpNextSequenceValue    Op = "NextSequenceValue"    // take a number, optionally for a document
	OpAddFolder            Op = "AddFolder"            // create a folder (and its parents)
	OpDeleteFolder         Op = "DeleteFolder"         // remove an empty folder
	OpStartFolderMove      Op = "StartFolderMove"      // record an asynchronous folder move
	OpMoveFolder           Op = "MoveFolder"           // move part of a folder (one step of a move)
	OpFinishFolderMove     Op = "FinishFolderMove"     // mark a folder move that cannot go on as failed
	OpSetFolderPermissions Op = "SetFolderPermissions" // set or clear the role permissions of a folder
	OpPutMapping           Op = "PutMapping"           // create or replace an IDP mapping
	OpDeleteMapping        Op = "DeleteMapping"        // remove an IDP mapping
	OpPutWebhook           Op = "PutWebhook"           // create or change a webhook
	OpDeleteWebhook        Op = "DeleteWebhook"        // remove a webhook
	OpAddWebhookTag        Op = "AddWebhookTag"        // add or replace a webhook's tag
	OpAddWebhookDocument   Op = "AddWebhookDocument"   // a payload posted to a webhook becomes a document
	OpAddShortlink         Op = "AddShortlink"         // create a short link
	OpDeleteShortlink      Op = "DeleteShortlink"      // remove a short link
	OpAgreeModel           Op = "AgreeModel"           // accept an inference model's usage agreement
	OpAddUser              Op = "AddUser"              // create a directory user
	OpDeleteUser           Op = "DeleteUser"           // remove a directory user
	OpUserOperation        Op = "UserOperation"        // disable, enable or reset a user
	OpSetResetCode         Op = "SetResetCode"         // a password-reset code the user asked for
	OpSetPassword          Op = "SetPassword"          // a new password (first sign-in, change, reset)
	OpLoginResult          Op = "LoginResult"          // a checked sign-in: lockout count, refresh token
	OpRevokeRefresh        Op = "RevokeRefresh"        // sign-out: a refresh token ends
	OpExternalSignIn       Op = "ExternalSignIn"       // a console sign-in through the identity provider: its refresh token
	OpAddGroup             Op = "AddGroup"             // create a directory group
	OpDeleteGroup          Op = "DeleteGroup"          // remove a directory group
	OpAddGroupMember       Op = "AddGroupMember"       // put a user in a group
	OpRemoveGroupMember    Op = "RemoveGroupMember"    // take a user out of a group
	OpSetText              Op = "SetText"              // set a document's OCR or fulltext text by hand
	OpDeleteText           Op = "DeleteText"           // remove a document's OCR or fulltext text
	OpReindexDocument      Op = "ReindexDocument"      // rewrite one document's index entries
	OpAddSite              Op = "AddSite"              // create a site (POST /sites)
	OpPutExamine           Op = "PutExamine"           // store a PDF uploaded to be examined
	OpSetFulltext          Op = "SetFulltext"          // set what the fulltext index holds of a document
	OpAddArchive           Op = "AddArchive"           // fix the files of a ZIP download (compress)
	OpDeleteArchive        Op = "DeleteArchive"        // remove an archive (its expiry)
	OpDeleteExamine        Op = "DeleteExamine"        // remove an examined PDF (its expiry)
	OpAddLocale            Op = "AddLocale"            // add a locale to a site
	OpDeleteLocale         Op = "DeleteLocale"         // remove a locale and its items
	OpPutResourceItem      Op = "PutResourceItem"      // add or set a localized resource item
	OpDeleteResourceItem   Op = "DeleteResourceItem"   // remove a localized resource item

	OpAddActions       Op = "AddActions"       // append actions to a document
	OpRetryActions     Op = "RetryActions"     // retry a document's failed actions
	OpStartAction      Op = "StartAction"      // a worker starts an action
	OpFinishAction     Op = "FinishAction"     // an action's outcome with everything it changes
	OpAddQueue         Op = "AddQueue"         // create a workflow queue
	OpDeleteQueue      Op = "DeleteQueue"      // remove an empty queue
	OpQueueDocument    Op = "QueueDocument"    // put a document in a queue (QUEUE action)
	OpQueueDecision    Op = "QueueDecision"    // approve or reject a queued document
	OpPutWorkflow      Op = "PutWorkflow"      // create or replace a workflow (workflows.go)
	OpUpdateWorkflow   Op = "UpdateWorkflow"   // change a workflow's name, description or status
	OpDeleteWorkflow   Op = "DeleteWorkflow"   // remove a workflow no document or rule uses
	OpStartWorkflow    Op = "StartWorkflow"    // put a document in a workflow's first step
	OpWorkflowDecision Op = "WorkflowDecision" // approve or reject a document in its workflow step's queue
	OpPutRuleset       Op = "PutRuleset"       // create or change a ruleset (rulesets.go)
	OpDeleteRuleset    Op = "DeleteRuleset"    // remove a ruleset and its rules
	OpPutRule          Op = "PutRule"          // create or change a rule
	OpDeleteRule       Op = "DeleteRule"       // remove a rule
	OpSetSiteConfig    Op = "SetSiteConfig"    // replace a site's configuration
	OpSetSystemConfig  Op = "SetSystemConfig"  // replace the system configuration
	OpPublish          Op = "Publish"          // publish a document's current content (PUBLISH action)
	OpUnpublish        Op = "Unpublish"        // remove a document's publication

	OpMarkJobRun        Op = "MarkJobRun"        // a scheduled job ran for a day (scheduler.go)
	OpRetentionDue      Op = "RetentionDue"      // the nightly run: retention ended, dispositions carried out (scheduler.go)
	OpAddReview         Op = "AddReview"         // add a review to a document or artifact
	OpUpdateReview      Op = "UpdateReview"      // change a review's status, requiredDecisions or comments
	OpAddReviewDecision Op = "AddReviewDecision" // a decision on an open review
	OpPutSecret         Op = "PutSecret"         // store a sealed secret of a site (secrets.go)
	OpDeleteSecret      Op = "DeleteSecret"      // remove a secret
	OpPutEnvelope       Op = "PutEnvelope"       // create an e-signature envelope, sent or a draft (envelopes.go)
	OpEnvelopeChange    Op = "EnvelopeChange"    // send, sign, decline, void or complete an envelope
	OpExpireAgreements  Op = "ExpireAgreements"  // the daily agreement-expiration run (agreements.go)
	OpRemindersDue      Op = "RemindersDue"      // the daily reminders run: due notifications become NOTIFICATION actions (notifications.go)
	OpSetDocumentLock   Op = "SetDocumentLock"   // check a document out or in, set or lift a legal hold (locks.go)

	OpPutIntakeProfile    Op = "PutIntakeProfile"    // create or replace a site's intake profile (intake.go)
	OpDeleteIntakeProfile Op = "DeleteIntakeProfile" // remove an intake profile and its recent errors
	OpIntakeDocument      Op = "IntakeDocument"      // one scanned file through a profile: duplicate policy, create or version, journal
	OpAddIntakeError      Op = "AddIntakeError"      // record a failed intake (the newest MaxIntakeErrors per profile are kept)
	OpPruneIntakeJournal  Op = "PruneIntakeJournal"  // drop journal entries the leader found finished (intake/watch.go prune)

	OpSpendJoinToken   Op = "SpendJoinToken"   // a cluster join token is redeemed (clusterstate.go)
	OpRotateKeys       Op = "RotateKeys"       // new token and URL signing keys for every node (clusterstate.go)
	OpRotateSecretsKey Op = "RotateSecretsKey" // every secret sealed again with a new secrets key (secrets.go)

	OpFinishRequest Op = "FinishRequest" // a keyed request's final answer, recorded with its Idempotency-Key (requests.go)
)

// Issue 33 rows (sites.go).
const (
	OpUpdateSite      Op = "UpdateSite"      // change a site's title (PATCH /sites/{siteId})
	OpAddShare        Op = "AddShare"        // share a folder with a group or user (shares.go)
	OpDeleteShare     Op = "DeleteShare"     // remove a folder share
	OpSetSiteGroup    Op = "SetSiteGroup"    // a group's permissions on a site (sitegroups.go)
	OpDeleteSiteGroup Op = "DeleteSiteGroup" // remove a group's permissions on a site

	OpPutEventSubscription    Op = "PutEventSubscription"    // create or change a site's event subscription (events.go)
	OpDeleteEventSubscription Op = "DeleteEventSubscription" // remove an event subscription
	OpSetEventBuses           Op = "SetEventBuses"           // the event buses events go to (the leader's configuration)
	OpEventsDelivered         Op = "EventsDelivered"         // targets that took outbox events (or were given up)
)

// Issue 47 rows (notes.go, savedsearches.go).
const (
	OpAddNote           Op = "AddNote"           // a note on a document
	OpDeleteNote        Op = "DeleteNote"        // remove a note of a document
	OpAddSavedSearch    Op = "AddSavedSearch"    // save a named search in a site
	OpDeleteSavedSearch Op = "DeleteSavedSearch" // remove one of the user's saved searches
)

// appliers is the one registry of appliers: every Op constant above has
// exactly one entry (the compiler refuses a duplicate key, and
// TestEveryOpHasAnApplier refuses a missing one). The appliers live in the
// file of their resource. The table is filled in init because some
// appliers (FinishAction) apply other commands through it.
var appliers map[Op]applyFunc

func init() {
	appliers = map[Op]applyFunc{
		// documents, tags, content, API keys
		OpAddDocuments:    applyAddDocuments,
		OpUpdateDocument:  applyUpdateDocument,
		OpCommitContent:   applyCommitContent,
		OpPutChunks:       applyPutChunks,
		OpSetContentType:  applySetContentType,
		OpSoftDelete:      applySoftDelete,
		OpRestore:         applyRestore,
		OpDeleteDocument:  applyDeleteDocument,
		OpSetTags:         applySetTags,
		OpDeleteTag:       applyDeleteTag,
		OpUpdateMatchTags: applyUpdateMatchTags,
		OpTagDocuments:    applyTagDocuments,
		OpAddAPIKey:       applyAddAPIKey,
		OpDeleteAPIKey:    applyDeleteAPIKey,
		OpSweepChunks:     applySweepChunks,

		// artifacts.go
		OpAddArtifact:     applyAddArtifact,
		OpDeleteArtifact:  applyDeleteArtifact,
		OpPromoteArtifact: applyPromoteArtifact,

		// versions.go
		OpSetVersion:    applySetVersion,
		OpDeleteVersion: applyDeleteVersion,
		OpPruneVersions: applyPruneVersions,

		// attrdefs.go, docattrs.go, schemas.go, entities.go, sequences.go
		OpAddAttribute:         applyAddAttribute,
		OpUpdateAttribute:      applyUpdateAttribute,
		OpDeleteAttribute:      applyDeleteAttribute,
		OpSetDocAttributes:     applySetDocAttributes,
		OpSetSchema:            applySetSchema,
		OpSetClassification:    applySetClassification,
		OpDeleteClassification: applyDeleteClassification,
		OpAddEntityType:        applyAddEntityType,
		OpDeleteEntityType:     applyDeleteEntityType,
		OpPutEntity:            applyPutEntity,
		OpDeleteEntity:         applyDeleteEntity,
		OpAddSequence:          applyAddSequence,
		OpDeleteSequence:       applyDeleteSequence,
		OpNextSequenceValue:    applyNextSequenceValue,

		// folders.go, foldermove.go, folderperms.go, mappings.go
		OpAddFolder:            applyAddFolder,
		OpDeleteFolder:         applyDeleteFolder,
		OpStartFolderMove:      applyStartFolderMove,
		OpMoveFolder:           applyMoveFolder,
		OpFinishFolderMove:     applyFinishFolderMove,
		OpSetFolderPermissions: applySetFolderPermissions,
		OpPutMapping:           applyPutMapping,
		OpDeleteMapping:        applyDeleteMapping,

		// webhooks.go, shortlinks.go
		OpAddShortlink:    applyAddShortlink,
		OpDeleteShortlink: applyDeleteShortlink,
		OpAgreeModel:      applyAgreeModel,

		// users.go
		OpAddUser:           applyAddUser,
		OpDeleteUser:        applyDeleteUser,
		OpUserOperation:     applyUserOperation,
		OpSetResetCode:      applySetResetCode,
		OpSetPassword:       applySetPassword,
		OpLoginResult:       applyLoginResult,
		OpRevokeRefresh:     applyRevokeRefresh,
		OpExternalSignIn:    applyExternalSignIn,
		OpAddGroup:          applyAddGroup,
		OpDeleteGroup:       applyDeleteGroup,
		OpAddGroupMember:    applyAddGroupMember,
		OpRemoveGroupMember: applyRemoveGroupMember,

		// texts.go
		OpSetText:         applySetText,
		OpDeleteText:      applyDeleteText,
		OpReindexDocument: applyReindexDocument,

		// locales.go
		OpAddSite:         applyAddSite,
		OpUpdateSite:      applyUpdateSite,
		OpAddShare:        applyAddShare,
		OpDeleteShare:     applyDeleteShare,
		OpSetSiteGroup:    applySetSiteGroup,
		OpDeleteSiteGroup: applyDeleteSiteGroup,
		// events.go
		OpPutEventSubscription:    applyPutEventSubscription,
		OpDeleteEventSubscription: applyDeleteEventSubscription,
		OpSetEventBuses:           applySetEventBuses,
		OpEventsDelivered:         applyEventsDelivered,
		OpPutExamine:              applyPutExamine,
		OpSetFulltext:             applySetFulltext,
		OpAddArchive:              applyAddArchive,
		OpDeleteArchive:           applyDeleteArchive,
		OpDeleteExamine:           applyDeleteExamine,
		OpAddLocale:               applyAddLocale,
		OpDeleteLocale:            applyDeleteLocale,
		OpPutResourceItem:         applyPutResourceItem,
		OpDeleteResourceItem:      applyDeleteResourceItem,
		OpPutWebhook:              applyPutWebhook,
		OpDeleteWebhook:           applyDeleteWebhook,
		OpAddWebhookTag:           applyAddWebhookTag,
		OpAddWebhookDocument:      applyAddWebhookDocument,

		// actions.go, queues.go, siteconfig.go, publications.go
		OpAddActions:    applyAddActions,
		OpRetryActions:  applyRetryActions,
		OpStartAction:   applyStartAction,
		OpFinishAction:  applyFinishAction,
		OpAddQueue:      applyAddQueue,
		OpDeleteQueue:   applyDeleteQueue,
		OpQueueDocument: applyQueueDocument,
		OpQueueDecision: applyQueueDecision,
		// workflows.go, rulesets.go
		OpPutWorkflow:      applyPutWorkflow,
		OpUpdateWorkflow:   applyUpdateWorkflow,
		OpDeleteWorkflow:   applyDeleteWorkflow,
		OpStartWorkflow:    applyStartWorkflow,
		OpWorkflowDecision: applyWorkflowDecision,
		OpPutRuleset:       applyPutRuleset,
		OpDeleteRuleset:    applyDeleteRuleset,
		OpPutRule:          applyPutRule,
		OpDeleteRule:       applyDeleteRule,
		OpSetSiteConfig:    applySetSiteConfig,
		OpSetSystemConfig:  applySetSystemConfig,
		OpPublish:          applyPublish,
		OpUnpublish:        applyUnpublish,

		// scheduler.go
		OpMarkJobRun:   applyMarkJobRun,
		OpRetentionDue: applyRetentionDue,
		// reviews.go
		OpAddReview:         applyAddReview,
		OpUpdateReview:      applyUpdateReview,
		OpAddReviewDecision: applyAddReviewDecision,
		OpSetDocumentLock:   applySetDocumentLock,
		OpRemindersDue:      applyRemindersDue,
		OpExpireAgreements:  applyExpireAgreements,
		OpPutEnvelope:       applyPutEnvelope,
		OpPutSecret:         applyPutSecret,
		OpDeleteSecret:      applyDeleteSecret,
		OpEnvelopeChange:    applyEnvelopeChange,

		// intake.go
		OpPutIntakeProfile:    applyPutIntakeProfile,
		OpDeleteIntakeProfile: applyDeleteIntakeProfile,
		OpIntakeDocument:      applyIntakeDocument,
		OpAddIntakeError:      applyAddIntakeError,
		OpPruneIntakeJournal:  applyPruneIntakeJournal,

		// clusterstate.go
		OpSpendJoinToken: applySpendJoinToken,
		OpRotateKeys:     applyRotateKeys,

		// secrets.go
		OpRotateSecretsKey: applyRotateSecretsKey,

		// requests.go
		OpFinishRequest: applyFinishRequest,

		// digest.go
		OpDigestMark: applyDigestMark,

		// renditions.go
		OpFailRendition: applyFailRendition,

		// thumbnails.go
		OpSetThumbnail:    applySetThumbnail,
		OpQueueThumbnails: applyQueueThumbnails,

		// notes.go, savedsearches.go
		OpAddNote:           applyAddNote,
		OpDeleteNote:        applyDeleteNote,
		OpAddSavedSearch:    applyAddSavedSearch,
		OpDeleteSavedSearch: applyDeleteSavedSearch,
	}
}

// Command is one serializable state change. Everything Apply needs is in
// the command: the caller picks ids and the time, so replaying the same
// command on another node gives the same state.
type Command struct {
	Op   Op              `json:"op"`
	Site string          `json:"site,omitempty"`
	User string          `json:"user,omitempty"`
	At   time.Time       `json:"at"`
	Data json.RawMessage `json:"data,omitempty"`
	// Via says which request a command came from (activity.go); commands
	// of the server's own jobs have none.
	Via *Via `json:"via,omitempty"`
	// Idem, when set, makes the command apply at most once per
	// Idempotency-Key of its site and user (requests.go): a repeat
	// answers the first result and writes nothing.
	Idem *Idempotency `json:"idem,omitempty"`
	// ID, when set (a cluster member sets it on every write it proposes
	// or forwards), makes the command apply once per id within
	// CommandIDWindow (cmdids.go): sent again after an unknown outcome,
	// it answers its first result. Absent from entries of earlier
	// releases, which apply as before.
	ID string `json:"id,omitempty"`
	// Rules is the version of the applier rules the release that built
	// the command wrote it for (NewCommand sets Rules, the current one).
	// An applier whose outcome a later release changed keeps the earlier
	// outcome for commands of earlier rules, so a log entry applies the
	// same on every member and at every replay, whichever release
	// replays it: entries of releases before it have none (0) and apply
	// as they did. A command an applier applies within another carries
	// the other's.
	Rules int `json:"rules,omitempty"`

	// local holds the payload of a command built in this process whose
	// payload type asks to skip JSON (bulk content: encoding 4 MiB of
	// chunks as base64 JSON cost more CPU than hashing and writing them).
	// Data is filled from it only when the command leaves the process
	// (Encode, for the Raft log; PutChunks has a binary form, wire.go).
	local any
	// wire is the encoded form a binary command was decoded from (or last
	// encoded to): Encode returns it as is (wire.go).
	wire []byte
}

// The applier rules (Command.Rules), one constant per change of an
// applier's outcome, the newest last; Rules is the current one.
const (
	// RulesDefaultsByType: default processing is decided by the content
	// type (defaultactions.go, issue 46); before it every default action
	// the site names is added PENDING.
	RulesDefaultsByType = 1
	// RulesThumbnailsWithContent: the transaction that gives a document
	// new content (or an office document a PDF rendition) records a
	// pending thumbnail (thumbnails.go, issue 47), and an archive of a
	// document leaves its thumbnail out (archives.go); before it no
	// thumbnail is recorded and an archive holds every artifact.
	RulesThumbnailsWithContent = 2
	// RulesActionCap: a document holds at most MaxDocumentActions actions
	// (limits.go): a command that adds or retries past it is refused;
	// before it nothing bounded them.
	RulesActionCap = 3
	// RulesDefinitionFields: the names, values and lists inside a
	// definition (schemas and classifications, entities, folder
	// permissions, mappings, attribute definitions, API keys) are bounded
	// one by one (limits.go, defFields); before it only the encoded
	// definition as a whole was (MaxDefinitionBytes).
	RulesDefinitionFields = 4

	Rules = RulesDefinitionFields
)

// inMemoryPayload marks payload types that Apply may take without a JSON
// round trip. Such payloads must not be changed by their applier, and must
// still encode to JSON losslessly (Encode falls back to it).
type inMemoryPayload interface{ inMemory() }

// NewCommand encodes payload into a Command. The payload type must match
// the one the op's applier decodes.
func NewCommand(op Op, site, user string, at time.Time, payload any) (*Command, error) {
	c := &Command{Op: op, Site: site, User: user, At: at.UTC(), Rules: Rules}
	if p, ok := payload.(inMemoryPayload); ok {
		c.local = p
		return c, nil
	}
	if payload != nil {
		b, err := json.Marshal(payload)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", op, err)
		}
		c.Data = b
	}
	return c, nil
}

// MustCommand is NewCommand for payloads that cannot fail to encode.
func MustCommand(op Op, site, user string, at time.Time, payload any) *Command {
	c, err := NewCommand(op, site, user, at, payload)
	if err != nil {
		panic(err)
	}
	return c
}

// Encode returns the wire form of c: a version byte plus JSON, or for a
// chunk command built in this process or decoded from the wire, the
// binary form of wire.go.
func (c *Command) Encode() ([]byte, error) {
	if c.wire != nil {
		return c.wire, nil
	}
	if p, ok := c.local.(PutChunks); ok && c.Op == OpPutChunks && c.Data == nil {
		b, err := encodeChunks(c, p)
		if err != nil {
			return nil, err
		}
		c.wire = b
		return b, nil
	}
	if c.local != nil && c.Data == nil {
		d, err := json.Marshal(c.local)
		if err != nil {
			return nil, fmt.Errorf("encode %s: %w", c.Op, err)
		}
		c.Data = d
	}
	b, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	return append([]byte{wireJSON}, b...), nil
}

// DecodeCommand parses the output of Encode.
func DecodeCommand(b []byte) (*Command, error) {
	if len(b) > 0 && b[0] == wireChunks {
		return decodeChunks(b)
	}
	if len(b) == 0 || b[0] != wireJSON {
		return nil, fmt.Errorf("decode command: unknown version")
	}
	var c Command
	if err := json.Unmarshal(b[1:], &c); err != nil {
		return nil, fmt.Errorf("decode command: %w", err)
	}
	return &c, nil
}

// Result is what an applied command returns to its caller.
type Result struct {
	// Value is op specific, for example *AddDocumentsResult.
	Value any
	// Touched lists the documents whose record, tags or attributes the
	// command changed (given to OnCommit hooks).
	Touched []DocRef
	// Queued lists the documents that have an action to run (from the
	// given time) after the command.
	Queued []QueuedDoc
	// Replayed says the command carried an Idempotency-Key already
	// recorded: Value is the recorded result and nothing was applied
	// (requests.go).
	Replayed bool
	// Events counts the document events the command wrote to the outbox
	// (events.go; given to OnCommit hooks: the delivery worker wakes).
	Events int
}
