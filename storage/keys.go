package storage

import (
	"encoding/binary"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Every key prefix lives in this file so the whole layout can be read at a
// glance (see DESIGN.md). Site-scoped keys start with "<prefix>/<site>/",
// the site id escaped by sk so that it holds no "/".
// Parts that may contain "/" (paths, tag keys and values) come last or are
// separated by a NUL byte, which validation refuses in user input.
const (
	pfxSite             = "s/"    // s/<site> -> Site
	pfxDoc              = "d/"    // d/<site>/<doc> -> Document
	pfxTag              = "t/"    // t/<site>/<doc>/<tagKey> -> Tag
	pfxTagIndex         = "ti/"   // ti/<site>/<tagKey>\x00<value>\x00<doc> -> ""
	pfxPath             = "p/"    // p/<site>/<path> -> documentId
	pfxFolder           = "f/"    // f/<site>/<parentFolder>\x00<d|f>\x00<name> -> FolderEntry
	pfxInserted         = "ins/"  // ins/<site>/<ts>/<doc> -> "" (active top-level documents)
	pfxDeleted          = "del/"  // del/<site>/<ts>/<doc> -> "" (soft-deleted top-level documents)
	pfxAction           = "a/"    // a/<site>/<doc>/<seq>[.<retry>] -> Action
	pfxActionQueue      = "aq/"   // aq/<site>/<doc> -> uint64 unix nanos: the document has an action to run from then
	pfxActionStat       = "as/"   // as/<site>/<status>/<doc> -> "" (documents with an action in that status)
	pfxText             = "tx/"   // tx/<site>/<doc>/<kind> -> TextRecord (extracted text: fulltext, ocr)
	pfxRendition        = "ocp/"  // ocp/<site>/<doc>/<artifactId> -> PendingRendition: an OCR PDF/A promised, not kept yet (renditions.go)
	pfxThumbnailQueue   = "tnq/"  // tnq/<site>/<doc> -> PendingThumbnail: a first-page thumbnail to make (thumbnails.go)
	pfxThumbnailWalk    = "tnw/"  // tnw/<site> -> thumbnailWalk: how far the walk for documents without a thumbnail got (thumbnails.go)
	pfxQueue            = "qu/"   // qu/<site>/<queueId> -> Queue
	pfxQueueDoc         = "qd/"   // qd/<site>/<queueId>/<doc> -> QueuedDocument
	pfxSiteConfig       = "cfg/"  // cfg/<site> -> SiteConfig
	pfxPublication      = "pub/"  // pub/<site>/<doc> -> Publication
	pfxResult           = "ar/"   // ar/<site>/<doc>/<kind>/<name> -> ActionResult
	pfxChunk            = "c/"    // c/<sha256> -> codec byte + chunk bytes
	pfxChunkRefs        = "cr/"   // cr/<sha256> -> uint64 reference count
	pfxManifest         = "cm/"   // cm/<sha256> -> Manifest
	pfxAPIKey           = "k/"    // k/<sha256 of key> -> APIKey
	pfxAPIKeyBySit      = "ks/"   // ks/<site>/<ts>/<sha256 of key> -> ""
	pfxDetect           = "ctq/"  // ctq/<site>/<doc> -> contentSha256 whose type is still to be detected
	pfxAttrDef          = "at/"   // at/<site>/<key> -> AttributeDef
	pfxDocAttr          = "da/"   // da/<site>/<doc>/<key> -> DocAttribute
	pfxAttrIndex        = "ai/"   // ai/<site>/<key>\x00<value>\x00<doc> -> "" (numbers as EncodeNumber)
	pfxSchema           = "sc/"   // sc/<site> -> Schema
	pfxClass            = "cl/"   // cl/<site>/<classificationId> -> Classification
	pfxEntityType       = "et/"   // et/<site>/<entityTypeId> -> EntityType
	pfxEntityName       = "etn/"  // etn/<site>/<namespace>/<name> -> entityTypeId
	pfxEntity           = "en/"   // en/<site>/<entityTypeId>/<entityId> -> Entity
	pfxSequence         = "sq/"   // sq/<site>/<sequenceId> -> Sequence
	pfxSeqByAttr        = "sqa/"  // sqa/<site>/<attributeKey> -> sequenceId
	pfxSeqCounter       = "sqc/"  // sqc/<site>/<sequenceId>/<period> -> uint64 last number
	pfxMapping          = "mp/"   // mp/<site>/<mappingId> -> Mapping
	pfxWebhook          = "wh/"   // wh/<site>/<webhookId> -> Webhook
	pfxIdempotency      = "wi/"   // wi/<site>/<webhookId>/<sha256 of Idempotency-Key> -> idempotencyRecord
	pfxRequest          = "rq/"   // rq/<site>/<sha256 of user NUL Idempotency-Key> -> requestRecord: a write's first answer (requests.go)
	pfxRequestDue       = "rqd/"  // rqd/<ts>/<site>/<sha256 of user NUL key> -> "" (request records by the time they were written, for expiry)
	pfxShortlink        = "sl/"   // sl/<slug> -> Shortlink (slugs are unique per server, not per site)
	pfxModelAgreement   = "ima/"  // ima/<modelId> -> ModelAgreement (server-wide)
	pfxUser             = "usr/"  // usr/<username> -> User (the built-in directory, server-wide)
	pfxGroup            = "grp/"  // grp/<group> -> Group
	pfxUserGroup        = "ugm/"  // ugm/<username>\x00<group> -> ""
	pfxGroupUser        = "gum/"  // gum/<group>\x00<username> -> ""
	pfxRefresh          = "rtk/"  // rtk/<sha256 of a refresh token> -> RefreshToken
	pfxUserGone         = "usd/"  // usd/<username> -> last generation of a deleted user (never removed: a user made again under the name starts above it)
	pfxMoveJob          = "mj/"   // mj/<site>/<jobId> -> FolderMoveJob
	pfxFolderPerm       = "fp/"   // fp/<site>/<folder> -> FolderPermissions
	pfxDocCount         = "dc/"   // dc/<site> -> decimal count of document records, kept while the site has maxDocuments
	pfxFulltext         = "fto/"  // fto/<site>/<doc> -> FulltextOverride (what the fulltext index holds, set through the API)
	pfxArchive          = "arc/"  // arc/<site>/<id> -> Archive (POST /documents/compress)
	pfxExamine          = "exm/"  // exm/<site>/<id> -> ExamineObject (a PDF uploaded to be examined)
	pfxLocale           = "lc/"   // lc/<site>/<locale> -> Locale
	pfxResourceItem     = "lr/"   // lr/<site>/<locale>\x00<itemKey> -> ResourceItem
	pfxArtifact         = "af/"   // af/<site>/<doc>/<ts>/<artifactId> -> "" (a document's artifacts, oldest first)
	pfxVersion          = "v/"    // v/<site>/<doc>/<versionKey> -> Version (earlier states of a document, versions.go)
	pfxRetention        = "rt/"   // rt/<site>/<doc> -> DocRetention (retention.go)
	pfxRetentionDue     = "rtd/"  // rtd/<site>/<ts>/<doc> -> "" (when the nightly run next looks at the document's retention)
	pfxJobRun           = "jr/"   // jr/<job>/<day> -> JobRun: the scheduled job ran for that UTC day (scheduler.go)
	pfxDisposition      = "dsp/"  // dsp/<site>/<doc> -> Disposition: what the nightly run did to a document
	pfxReview           = "rv/"   // rv/<site>/<doc or artifact>/<reviewId> -> Review
	pfxReviewDecision   = "rvd/"  // rvd/<site>/<doc or artifact>/<reviewId>/<decisionId> -> ReviewDecision
	pfxJoinSpent        = "jts/"  // jts/<token id> -> uint64 big endian Unix expiry: a cluster join token already redeemed (clusterstate.go)
	pfxNotification     = "dn/"   // dn/<site>/<doc>/<key> -> DocNotification (notifications.go)
	pfxNotificationDue  = "dnd/"  // dnd/<site>/<ts>/<doc>/<key> -> "" (PENDING notifications by date)
	pfxUserNotification = "un/"   // un/<address>\x00<site>/<inverted ts>/<doc>/<key> -> "" (notifications by recipient)
	pfxNote             = "dnt/"  // dnt/<site>/<doc>/<ts>/<noteId> -> Note (notes.go)
	pfxSavedSearch      = "ssv/"  // ssv/<site>/<savedSearchId> -> SavedSearch (savedsearches.go)
	pfxEnvelope         = "env/"  // env/<site>/<envelopeId> -> Envelope (envelopes.go)
	pfxEnvelopeDoc      = "envd/" // envd/<site>/<doc>/<envelopeId> -> "" (a document's envelopes)
	pfxEnvelopeToken    = "envt/" // envt/<sha256 of a signing token> -> EnvelopeTokenRef
	pfxSecret           = "sec/"  // sec/<site>/<alias> -> Secret (secrets.go; sealed)
	pfxActivity         = "ua/"   // ua/<site>/<doc or artifact>/<inverted ts>/<n> -> Activity (activity.go)
	pfxUserActivity     = "uau/"  // uau/<site>/<user>\x00<inverted ts>/<doc or artifact>/<n> -> Activity
	pfxShare            = "shr/"  // shr/<shareKey> -> Share (folder shares, server-wide: GET /shares lists a caller's of every site; shares.go)
	pfxSiteShare        = "shs/"  // shs/<site>/<shareKey> -> "" (a site's shares)
	pfxSiteGroup        = "sgp/"  // sgp/<site>/<group> -> SiteGroup (a group's permissions on a site; sitegroups.go)
	pfxGroupSite        = "gsp/"  // gsp/<group>\x00<site> -> SiteGroup (the same, by group, read at authentication)
	pfxWorkflow         = "wf/"   // wf/<site>/<workflowId> -> Workflow (workflows.go)
	pfxDocWorkflow      = "dwf/"  // dwf/<site>/<doc>/<workflowId> -> DocWorkflow: a document's run through a workflow
	pfxWorkflowDoc      = "wfd/"  // wfd/<site>/<workflowId>/<doc> -> "" (documents in a workflow, not COMPLETE)
	pfxRuleset          = "rs/"   // rs/<site>/<rulesetId> -> Ruleset (rulesets.go)
	pfxRule             = "ru/"   // ru/<site>/<rulesetId>/<ruleId> -> Rule
	pfxIntakeProfile    = "ip/"   // ip/<site>/<name> -> IntakeProfile (intake.go)
	pfxIntakeSum        = "ics/"  // ics/<site>/<content sha256> -> documentId: the document an intake last made of that content
	pfxIntakeJournal    = "ij/"   // ij/<site>/<sha256 of an intake key> -> IntakeRecord: a source's item taken (the watched folders' journal)
	pfxIntakeError      = "ie/"   // ie/<site>/<profile>/<ts>/<hash> -> IntakeError: a profile's recent failures
	pfxEventSub         = "esb/"  // esb/<site>/<subscriptionId> -> EventSubscription (events.go)
	pfxEventOut         = "eo/"   // eo/<ts>/<site>/<doc>/<n> -> Event: the outbox of document events still to deliver
	pfxEventBuses       = "ebs/"  // ebs/names -> []string: the event buses events go to (registered by the leader)
	pfxCommandID        = "ci/"   // ci/<command id> -> commandRecord: a cluster command's result, by its id (cmdids.go)
	pfxCommandDue       = "cid/"  // cid/<ts>/<command id> -> "" (command records by time, for expiry)
	pfxRaft             = "rf/"   // rf/applied -> uint64 big endian: Raft index of the last applied entry; rf/restoring -> "" while a snapshot loads (replica.go); rf/keys -> KeyRing (clusterstate.go); rf/secretskey -> SecretsKeyState (secrets.go)
)

// siteSlash stands for "/" in the site part of keys. Site ids come from
// group names, and Keycloak's group paths ("/finance", "/finance/hr") hold
// the separator: unescaped, site "/finance"'s prefix "d//finance/" would
// cover the keys of site "/finance/hr". Site ids never hold control
// characters (CheckSiteID), so the replacement is unambiguous.
const siteSlash = "\x01"

// sk is a site id as it appears in keys.
func sk(site string) string { return strings.ReplaceAll(site, "/", siteSlash) }

// siteOfKey is the site id of a key's escaped site part.
func siteOfKey(part string) string { return strings.ReplaceAll(part, siteSlash, "/") }

// CheckSiteID reports whether id may name a site: not empty, valid UTF-8,
// at most 256 bytes, without control characters (keys use some as
// separators and escapes), not "." or ".." and without "\" (a site id
// becomes a path segment, URL-escaped, of its watched folders, where
// escaping keeps both; issue 43). "/" stays allowed: Keycloak group
// paths are site ids, and escaping turns it into %2F.
func CheckSiteID(id string) bool {
	if id == "" || len(id) > 256 || !utf8.ValidString(id) || id == "." || id == ".." || strings.ContainsRune(id, '\\') {
		return false
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

func siteKey(site string) []byte { return []byte(pfxSite + sk(site)) }

func artifactKey(site, doc string, at time.Time, art string) []byte {
	return []byte(pfxArtifact + sk(site) + "/" + doc + "/" + tsHex(at) + "/" + art)
}

func artifactPrefix(site, doc string) []byte { return []byte(pfxArtifact + sk(site) + "/" + doc + "/") }

func versionKey(site, doc, key string) []byte {
	return []byte(pfxVersion + sk(site) + "/" + doc + "/" + key)
}

func versionPrefix(site, doc string) []byte { return []byte(pfxVersion + sk(site) + "/" + doc + "/") }

func docKey(site, id string) []byte { return []byte(pfxDoc + sk(site) + "/" + id) }

func docPrefix(site string) []byte { return []byte(pfxDoc + sk(site) + "/") }

func tagKey(site, doc, key string) []byte { return []byte(pfxTag + sk(site) + "/" + doc + "/" + key) }

func tagPrefix(site, doc string) []byte { return []byte(pfxTag + sk(site) + "/" + doc + "/") }

func tagIndexKey(site, key, value, doc string) []byte {
	return []byte(pfxTagIndex + sk(site) + "/" + key + "\x00" + value + "\x00" + doc)
}

// tagIndexPrefix returns the prefix of all index entries of key whose value
// starts with valuePrefix; exact is true when the value must equal it.
func tagIndexPrefix(site, key, valuePrefix string, exact bool) []byte {
	k := pfxTagIndex + sk(site) + "/" + key + "\x00" + valuePrefix
	if exact {
		k += "\x00"
	}
	return []byte(k)
}

func pathKey(site, path string) []byte { return []byte(pfxPath + sk(site) + "/" + path) }

// folderKey is the key of a folder tree entry. Folders ("d") sort before
// documents ("f") within their parent, and a folder and a document may
// share a name.
func folderKey(site, parent string, folder bool, name string) []byte {
	kind := "f\x00"
	if folder {
		kind = "d\x00"
	}
	return []byte(pfxFolder + sk(site) + "/" + parent + "\x00" + kind + name)
}

func folderPrefix(site, parent string) []byte {
	return []byte(pfxFolder + sk(site) + "/" + parent + "\x00")
}

func insertedKey(site string, at time.Time, doc string) []byte {
	return []byte(pfxInserted + sk(site) + "/" + tsHex(at) + "/" + doc)
}

func insertedPrefix(site string) []byte { return []byte(pfxInserted + sk(site) + "/") }

func deletedKey(site string, at time.Time, doc string) []byte {
	return []byte(pfxDeleted + sk(site) + "/" + tsHex(at) + "/" + doc)
}

func deletedPrefix(site string) []byte { return []byte(pfxDeleted + sk(site) + "/") }

func actionKey(site, doc string, seq, retry int) []byte {
	return []byte(pfxAction + sk(site) + "/" + doc + "/" + actionID(seq, retry))
}

func actionQueueKey(site, doc string) []byte { return []byte(pfxActionQueue + sk(site) + "/" + doc) }

func actionStatusKey(site, status, doc string) []byte {
	return []byte(pfxActionStat + sk(site) + "/" + status + "/" + doc)
}

func actionStatusPrefix(site, status string) []byte {
	return []byte(pfxActionStat + sk(site) + "/" + status + "/")
}

func textKey(site, doc, kind string) []byte {
	return []byte(pfxText + sk(site) + "/" + doc + "/" + kind)
}

func renditionKey(site, doc, art string) []byte {
	return []byte(pfxRendition + sk(site) + "/" + doc + "/" + art)
}

func renditionPrefix(site, doc string) []byte {
	return []byte(pfxRendition + sk(site) + "/" + doc + "/")
}

func textPrefix(site, doc string) []byte { return []byte(pfxText + sk(site) + "/" + doc + "/") }

func resultKey(site, doc, kind, name string) []byte {
	return []byte(pfxResult + sk(site) + "/" + doc + "/" + kind + "/" + name)
}

// resultPrefix is the prefix of a document's results of kind (all kinds
// when kind is empty).
func resultPrefix(site, doc, kind string) []byte {
	if kind == "" {
		return []byte(pfxResult + sk(site) + "/" + doc + "/")
	}
	return []byte(pfxResult + sk(site) + "/" + doc + "/" + kind + "/")
}

func actionPrefix(site, doc string) []byte { return []byte(pfxAction + sk(site) + "/" + doc + "/") }

func chunkKey(sha string) []byte { return []byte(pfxChunk + sha) }

func chunkRefsKey(sha string) []byte { return []byte(pfxChunkRefs + sha) }

func manifestKey(sha string) []byte { return []byte(pfxManifest + sha) }

func apiKeyKey(hash string) []byte { return []byte(pfxAPIKey + hash) }

func apiKeySiteKey(site string, at time.Time, hash string) []byte {
	return []byte(pfxAPIKeyBySit + sk(site) + "/" + tsHex(at) + "/" + hash)
}

func apiKeySitePrefix(site string) []byte { return []byte(pfxAPIKeyBySit + sk(site) + "/") }

// tsHex encodes a time as 16 hex digits of Unix nanoseconds so that keys
// sort chronologically.
func tsHex(t time.Time) string { return fmt.Sprintf("%016x", uint64(t.UnixNano())) }

func encodeUint64(n uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], n)
	return b[:]
}

func decodeUint64(b []byte) uint64 {
	if len(b) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(b)
}

func detectKey(site, doc string) []byte { return []byte(pfxDetect + sk(site) + "/" + doc) }

func attrDefKey(site, key string) []byte { return []byte(pfxAttrDef + sk(site) + "/" + key) }

func attrDefPrefix(site string) []byte { return []byte(pfxAttrDef + sk(site) + "/") }

func docAttrKey(site, doc, key string) []byte {
	return []byte(pfxDocAttr + sk(site) + "/" + doc + "/" + key)
}

func docAttrPrefix(site, doc string) []byte { return []byte(pfxDocAttr + sk(site) + "/" + doc + "/") }

func attrIndexKey(site, key, value, doc string) []byte {
	return []byte(pfxAttrIndex + sk(site) + "/" + key + "\x00" + value + "\x00" + doc)
}

// attrIndexPrefix covers every indexed value of key.
func attrIndexPrefix(site, key string) []byte {
	return []byte(pfxAttrIndex + sk(site) + "/" + key + "\x00")
}

// attrIndexValuePrefix covers the documents whose key has exactly value.
func attrIndexValuePrefix(site, key, value string) []byte {
	return []byte(pfxAttrIndex + sk(site) + "/" + key + "\x00" + value + "\x00")
}

func schemaKey(site string) []byte { return []byte(pfxSchema + sk(site)) }

func classificationKey(site, id string) []byte { return []byte(pfxClass + sk(site) + "/" + id) }

func classificationPrefix(site string) []byte { return []byte(pfxClass + sk(site) + "/") }

func entityTypeKey(site, id string) []byte { return []byte(pfxEntityType + sk(site) + "/" + id) }

func entityTypePrefix(site string) []byte { return []byte(pfxEntityType + sk(site) + "/") }

func entityTypeNameKey(site, namespace, name string) []byte {
	return []byte(pfxEntityName + sk(site) + "/" + namespace + "/" + name)
}

func entityKey(site, typeID, id string) []byte {
	return []byte(pfxEntity + sk(site) + "/" + typeID + "/" + id)
}

func entityPrefix(site, typeID string) []byte {
	return []byte(pfxEntity + sk(site) + "/" + typeID + "/")
}

func intakeProfileKey(site, name string) []byte {
	return []byte(pfxIntakeProfile + sk(site) + "/" + name)
}

func intakeProfilePrefix(site string) []byte { return []byte(pfxIntakeProfile + sk(site) + "/") }

func intakeSumKey(site, sha string) []byte { return []byte(pfxIntakeSum + sk(site) + "/" + sha) }

func intakeJournalKey(site, keyHash string) []byte {
	return []byte(pfxIntakeJournal + sk(site) + "/" + keyHash)
}

func intakeErrorPrefix(site, profile string) []byte {
	return []byte(pfxIntakeError + sk(site) + "/" + profile + "/")
}

func intakeErrorKey(site, profile string, at time.Time, h string) []byte {
	return []byte(pfxIntakeError + sk(site) + "/" + profile + "/" + tsHex(at) + "/" + h)
}

func sequenceKey(site, id string) []byte { return []byte(pfxSequence + sk(site) + "/" + id) }

func sequencePrefix(site string) []byte { return []byte(pfxSequence + sk(site) + "/") }

func sequenceByAttrKey(site, key string) []byte { return []byte(pfxSeqByAttr + sk(site) + "/" + key) }

func sequenceCounterKey(site, id, period string) []byte {
	return []byte(pfxSeqCounter + sk(site) + "/" + id + "/" + period)
}

func sequenceCounterPrefix(site, id string) []byte {
	return []byte(pfxSeqCounter + sk(site) + "/" + id + "/")
}

func fulltextKey(site, doc string) []byte { return []byte(pfxFulltext + sk(site) + "/" + doc) }

func archiveKey(site, id string) []byte { return []byte(pfxArchive + sk(site) + "/" + id) }

func examineKey(site, id string) []byte { return []byte(pfxExamine + sk(site) + "/" + id) }

func localeKey(site, l string) []byte { return []byte(pfxLocale + sk(site) + "/" + l) }
func localePrefix(site string) []byte { return []byte(pfxLocale + sk(site) + "/") }
func resourcePrefix(site, l string) []byte {
	return []byte(pfxResourceItem + sk(site) + "/" + l + "\x00")
}
func resourceKey(site, l, key string) []byte {
	return append(resourcePrefix(site, l), key...)
}

func userKey(name string) []byte  { return []byte(pfxUser + name) }
func groupKey(name string) []byte { return []byte(pfxGroup + name) }

func userGroupPrefix(user string) []byte     { return []byte(pfxUserGroup + user + "\x00") }
func userGroupKey(user, group string) []byte { return append(userGroupPrefix(user), group...) }
func groupUserPrefix(group string) []byte    { return []byte(pfxGroupUser + group + "\x00") }
func groupUserKey(group, user string) []byte { return append(groupUserPrefix(group), user...) }
func refreshKey(hash string) []byte          { return []byte(pfxRefresh + hash) }
func userGoneKey(name string) []byte         { return []byte(pfxUserGone + name) }

func modelAgreementKey(model string) []byte { return []byte(pfxModelAgreement + model) }

func shortlinkKey(slug string) []byte { return []byte(pfxShortlink + slug) }

func webhookKey(site, id string) []byte { return []byte(pfxWebhook + sk(site) + "/" + id) }

func webhookPrefix(site string) []byte { return []byte(pfxWebhook + sk(site) + "/") }

func idempotencyKey(site, webhook, hash string) []byte {
	return []byte(pfxIdempotency + sk(site) + "/" + webhook + "/" + hash)
}

func idempotencyPrefix(site, webhook string) []byte {
	return []byte(pfxIdempotency + sk(site) + "/" + webhook + "/")
}

func mappingKey(site, id string) []byte { return []byte(pfxMapping + sk(site) + "/" + id) }

func mappingPrefix(site string) []byte { return []byte(pfxMapping + sk(site) + "/") }

func queueKey(site, id string) []byte { return []byte(pfxQueue + sk(site) + "/" + id) }

func queuePrefix(site string) []byte { return []byte(pfxQueue + sk(site) + "/") }

func queueDocKey(site, queue, doc string) []byte {
	return []byte(pfxQueueDoc + sk(site) + "/" + queue + "/" + doc)
}

func queueDocPrefix(site, queue string) []byte {
	return []byte(pfxQueueDoc + sk(site) + "/" + queue + "/")
}

func siteConfigKey(site string) []byte { return []byte(pfxSiteConfig + sk(site)) }

func docCountKey(site string) []byte { return []byte(pfxDocCount + sk(site)) }

// systemConfigKey holds the system configuration (one record).
var systemConfigKey = []byte("sysconfig")

func publicationKey(site, doc string) []byte { return []byte(pfxPublication + sk(site) + "/" + doc) }

func retentionKey(site, doc string) []byte { return []byte(pfxRetention + sk(site) + "/" + doc) }

func retentionDueKey(site string, at time.Time, doc string) []byte {
	return []byte(pfxRetentionDue + sk(site) + "/" + tsHex(at) + "/" + doc)
}

func retentionDuePrefix(site string) []byte { return []byte(pfxRetentionDue + sk(site) + "/") }

func jobRunKey(job, day string) []byte { return []byte(pfxJobRun + job + "/" + day) }

func dispositionKey(site, doc string) []byte { return []byte(pfxDisposition + sk(site) + "/" + doc) }

func dispositionPrefix(site string) []byte { return []byte(pfxDisposition + sk(site) + "/") }
