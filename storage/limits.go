package storage

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits on what one write may carry (SERVICE-SPEC.md §8 names the few the
// requirement fixes: inline content under 5 MB, OCR pages, FULLTEXT characters). They keep every command well below
// Badger's own limits (a key of at most 65,000 bytes; a transaction of at
// most 15% of the 8 MiB memtable, about 1.2 MB and some 13,000 entries),
// so a request that is too large gets a validation error naming the field
// instead of a 500 from Badger after part of the work was done. The
// appliers check them (so a Raft replay decides exactly as the leader did)
// and handlers check them early where that is cheap, before any content is
// written. API.md documents the same table.
const (
	MaxPathBytes            = 1024 // a document or folder path (S3 keys, which FormKiQ uses, are 1,024 bytes)
	MaxURLBytes             = 4096 // a deepLinkPath
	MaxKeyBytes             = 256  // a tag key, attribute key, metadata key or other name or id
	MaxValueBytes           = 1024 // one tag value or attribute string value
	MaxContentTypeBytes     = 1024 // a document's contentType (a term of the fulltext index: index/DESIGN.md, "Token cap")
	MaxValuesPerKey         = 100  // values of one tag or attribute
	MaxTagsPerRequest       = 100  // tags of one document in one request
	MaxBatchDocuments       = 200  // documents one batch request names (POST /documents/tags/batch)
	MaxAttributesPerRequest = 100  // attributes of one document in one request
	MaxChildDocuments       = 100  // child documents created in one request
	MaxActionsPerRequest    = 50   // actions added to one document in one request
	MaxDocumentActions      = 1000 // actions a document holds, retries included (actions.go)
	MaxMetadata             = 25   // metadata entries of a document (FormKiQ's limit)
	MaxMetadataBytes        = 1000 // key and values of one metadata entry (FormKiQ's limit)
	MaxArtifacts            = 1000 // artifacts of one document (artifacts.go)
	MaxEventSubscriptions   = 20   // event subscriptions of one site (events.go)
	MaxEventURLBytes        = 2048 // the url of an event subscription
	// MaxAllowedValues bounds the allowedValues of one attribute of a
	// schema or classification: a pick list (countries, currencies) is
	// often longer than MaxValuesPerKey, and the definition as a whole
	// stays within MaxDefinitionBytes anyway.
	MaxAllowedValues = 1000
	// MaxFolderRoles bounds the roles of one folder's permissions: every
	// access check of a document below the folder reads them all.
	MaxFolderRoles = 100
	// MaxValuesPerRequest and MaxRequestValueBytes bound the tag and
	// attribute values of a whole request (a document and its children, or
	// the tags of one PATCH /documents/tags batch), which each become a
	// record and an index entry.
	MaxValuesPerRequest  = 1000
	MaxRequestValueBytes = 128 << 10
	// MaxDocumentValues and MaxDocumentValueBytes bound what a document
	// holds over all requests, its tags and its attributes each: a hard
	// delete removes them all in one transaction.
	MaxDocumentValues     = 2000
	MaxDocumentValueBytes = 128 << 10
	// MaxDefinitionBytes bounds the encoded command of a definition (a
	// schema, classification, mapping, entity, queue, sequence, API key,
	// attribute or configuration): each is stored as one record.
	MaxDefinitionBytes = 256 << 10
	// MaxSearchBytes bounds the body of a search request (its terms are
	// expanded against the index: a 1 MiB term stalls Bleve for minutes).
	MaxSearchBytes = 16 << 10
)

// definitionOps are the commands MaxDefinitionBytes applies to.
var definitionOps = map[Op]bool{
	OpAddAttribute: true, OpUpdateAttribute: true, OpSetSchema: true, OpSetClassification: true,
	OpAddEntityType: true, OpPutEntity: true, OpAddSequence: true, OpPutMapping: true, OpPutWebhook: true, OpAddWebhookTag: true,
	OpAddQueue: true, OpAddAPIKey: true, OpSetSiteConfig: true, OpSetSystemConfig: true,
	OpSetFolderPermissions: true, OpAddReview: true, OpPutWorkflow: true, OpUpdateWorkflow: true,
	OpPutRuleset: true, OpPutRule: true,
	OpPutIntakeProfile: true,
}

// checkDefinition is the size check of definitionOps, run by Apply.
func checkDefinition(c *Command) error {
	if definitionOps[c.Op] && len(c.Data) > MaxDefinitionBytes {
		return Invalid("", fmt.Sprintf("the request body cannot exceed %d bytes", MaxDefinitionBytes))
	}
	return nil
}

// defFields collects the field checks of a definition that
// RulesDefinitionFields added: a name or id (MaxKeyBytes), a value
// (MaxValueBytes) or a list (a count). Commands of earlier rules skip them
// all (on), so a log entry of a release before them applies as it did.
type defFields struct {
	on    bool
	items []ValidationItem
}

// newDefFields starts the checks for c.
func newDefFields(c *Command) *defFields { return &defFields{on: c.Rules >= RulesDefinitionFields} }

// name bounds a name, id or key to MaxKeyBytes of printable UTF-8.
func (f *defFields) name(key, v string) {
	if f.on {
		f.items = append(f.items, CheckText(key, v, MaxKeyBytes)...)
	}
}

// value bounds a value to MaxValueBytes (line breaks and tabs allowed).
func (f *defFields) value(key, v string) {
	if f.on {
		f.items = append(f.items, checkValue(key, v)...)
	}
}

// values bounds a list of values to most entries of MaxValueBytes each.
func (f *defFields) values(key string, vs []string, most int) {
	if f.count(key, len(vs), most) {
		for _, v := range vs {
			f.value(key, v)
		}
	}
}

// text bounds free text (a description) to max bytes.
func (f *defFields) text(key, v string, max int) {
	if f.on {
		f.items = append(f.items, CheckText(key, v, max)...)
	}
}

// count bounds the length of a list; false when it is over.
func (f *defFields) count(key string, n, most int) bool {
	if f.on && n > most {
		f.items = append(f.items, ValidationItem{Key: key, Msg: fmt.Sprintf("'%s' can hold at most %d entries", key, most)})
		return false
	}
	return true
}

// err is the checks' outcome for an applier.
func (f *defFields) err() error { return limitsErr(f.items) }

// checkName bounds a name or id of a definition to MaxKeyBytes of
// printable UTF-8.
func checkName(field, v string) error { return limitsErr(CheckText(field, v, MaxKeyBytes)) }

// maxStoredKeyBytes is the backstop for every key a transaction writes:
// names nobody thought to bound above still get a 400, far below Badger's
// 65,000 bytes.
const maxStoredKeyBytes = 4096

// errKeyTooLong is the backstop's answer (see tx.set).
var errKeyTooLong = Invalid("", fmt.Sprintf("a name or value in the request is too long (keys are limited to %d bytes)", maxStoredKeyBytes))

// errTxnTooBig answers a command that still exceeds Badger's transaction
// size after the limits above (many small writes of a kind not counted).
var errTxnTooBig = Invalid("", "the request changes too much at once; split it into smaller requests")

// CheckText refuses a string field that is longer than max bytes, is not
// valid UTF-8 or holds control characters (CR, LF, NUL...). The messages
// name the field.
func CheckText(field, v string, max int) []ValidationItem {
	switch {
	case len(v) > max:
		return []ValidationItem{{Key: field, Msg: fmt.Sprintf("'%s' cannot exceed %d bytes", field, max)}}
	case !utf8.ValidString(v):
		return []ValidationItem{{Key: field, Msg: fmt.Sprintf("'%s' is not valid UTF-8", field)}}
	case strings.IndexFunc(v, isControl) >= 0:
		return []ValidationItem{{Key: field, Msg: fmt.Sprintf("'%s' contains control characters", field)}}
	}
	return nil
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// checkValue is CheckText for values, which may hold line breaks and tabs
// (a multi-line description), but no other control characters.
func checkValue(field, v string) []ValidationItem {
	if len(v) > MaxValueBytes {
		return []ValidationItem{{Key: field, Msg: fmt.Sprintf("'%s' value cannot exceed %d bytes", field, MaxValueBytes)}}
	}
	if !utf8.ValidString(v) {
		return []ValidationItem{{Key: field, Msg: fmt.Sprintf("'%s' value is not valid UTF-8", field)}}
	}
	if strings.IndexFunc(v, func(r rune) bool { return isControl(r) && r != '\n' && r != '\r' && r != '\t' }) >= 0 {
		return []ValidationItem{{Key: field, Msg: fmt.Sprintf("'%s' value contains control characters", field)}}
	}
	return nil
}

// CheckPath refuses a document or folder path over MaxPathBytes, with
// control characters, invalid UTF-8, or an empty segment ("a//b"), as
// FormKiQ does.
func CheckPath(field, p string) []ValidationItem {
	if errs := CheckText(field, p, MaxPathBytes); errs != nil {
		return errs
	}
	if strings.Contains(p, "//") {
		return []ValidationItem{{Key: field, Msg: "invalid Path contains multiple '//' characters"}}
	}
	return nil
}

// CheckContentType bounds a content type a write brings to
// MaxContentTypeBytes; it is otherwise free text, as in FormKiQ. The
// appliers check it; an upload's handler checks its header before it
// streams the body.
func CheckContentType(ct string) []ValidationItem {
	if len(ct) > MaxContentTypeBytes {
		return []ValidationItem{{Key: "contentType", Msg: fmt.Sprintf("'contentType' cannot exceed %d bytes", MaxContentTypeBytes)}}
	}
	return nil
}

// requestSize sums the values of a request against MaxValuesPerRequest
// and MaxRequestValueBytes.
type requestSize struct{ values, bytes int }

func (s *requestSize) add(v string) { s.values++; s.bytes += len(v) }

// total returns errs, or when there are none, whether the request as a
// whole is over the limits.
func (s *requestSize) total(errs []ValidationItem) []ValidationItem {
	if len(errs) > 0 {
		return errs
	}
	if s.values > MaxValuesPerRequest || s.bytes > MaxRequestValueBytes {
		return []ValidationItem{{Msg: fmt.Sprintf("a request can set at most %d tag and attribute values of at most %d bytes together", MaxValuesPerRequest, MaxRequestValueBytes)}}
	}
	return nil
}

// CheckTags checks tags against the limits: count, key and value sizes,
// values per key. Field is the request field the tags came from.
func CheckTags(field string, tags []Tag) []ValidationItem {
	var sz requestSize
	return sz.total(checkTags(field, tags, &sz))
}

func checkTags(field string, tags []Tag, sz *requestSize) []ValidationItem {
	if len(tags) > MaxTagsPerRequest {
		return []ValidationItem{{Key: field, Msg: fmt.Sprintf("maximum number of tags is %d", MaxTagsPerRequest)}}
	}
	var errs []ValidationItem
	for i := range tags {
		tg := &tags[i]
		if e := CheckText(field+".key", tg.Key, MaxKeyBytes); e != nil {
			errs = append(errs, e...)
			continue
		}
		if len(tg.Values) > MaxValuesPerKey {
			errs = append(errs, ValidationItem{Key: field, Msg: fmt.Sprintf("tag '%s' can have at most %d values", tg.Key, MaxValuesPerKey)})
			continue
		}
		sz.add(tg.Key)
		for _, v := range tg.AllValues() {
			errs = append(errs, checkValue(field, v)...)
			sz.add(v)
		}
	}
	return errs
}

// DocsPerBatch is how many documents one command may give the same tags
// (PATCH /documents/tags) and stay within what a single request may set,
// no more than most, and at least one.
func DocsPerBatch(tags []Tag, most int) int {
	var sz requestSize
	checkTags("tags", tags, &sz) // for the sizes: the tags were checked before
	n := min(most, MaxValuesPerRequest/max(sz.values, 1), MaxRequestValueBytes/max(sz.bytes, 1))
	return max(n, 1)
}

// CheckTagBatch checks the documents a batch request gives the same tags
// (POST /documents/tags/batch): at least one, at most MaxBatchDocuments
// and no more than DocsPerBatch allows for these tags, each id named once
// and within MaxKeyBytes.
func CheckTagBatch(field string, ids []string, tags []Tag) []ValidationItem {
	if len(ids) == 0 {
		return []ValidationItem{{Key: field, Msg: fmt.Sprintf("'%s' is required", field)}}
	}
	if n := DocsPerBatch(tags, MaxBatchDocuments); len(ids) > n {
		msg := fmt.Sprintf("a request can tag at most %d documents", n)
		if n < MaxBatchDocuments {
			msg = fmt.Sprintf("a request can give these tags to at most %d documents", n)
		}
		return []ValidationItem{{Key: field, Msg: msg}}
	}
	var errs []ValidationItem
	seen := make(map[string]bool, len(ids))
	for _, id := range ids {
		switch {
		case id == "":
			errs = append(errs, ValidationItem{Key: field, Msg: fmt.Sprintf("'%s' cannot hold an empty id", field)})
		case seen[id]:
			errs = append(errs, ValidationItem{Key: field, Msg: fmt.Sprintf("document '%s' is named more than once", id)})
		default:
			errs = append(errs, CheckText(field, id, MaxKeyBytes)...)
		}
		seen[id] = true
	}
	return errs
}

// CheckAttributes checks attribute inputs against the limits.
func CheckAttributes(field string, ins []AttributeInput) []ValidationItem {
	var sz requestSize
	return sz.total(checkAttributes(field, ins, &sz))
}

func checkAttributes(field string, ins []AttributeInput, sz *requestSize) []ValidationItem {
	if len(ins) > MaxAttributesPerRequest {
		return []ValidationItem{{Key: field, Msg: fmt.Sprintf("maximum number of attributes is %d", MaxAttributesPerRequest)}}
	}
	var errs []ValidationItem
	for i := range ins {
		a := &ins[i]
		if e := CheckText(field+".key", a.Key, MaxKeyBytes); e != nil {
			errs = append(errs, e...)
			continue
		}
		n := len(a.StringValues) + len(a.NumberValues) + len(a.DateValues) + len(a.Entities)
		if n > MaxValuesPerKey {
			errs = append(errs, ValidationItem{Key: field, Msg: fmt.Sprintf("attribute '%s' can have at most %d values", a.Key, MaxValuesPerKey)})
			continue
		}
		sz.add(a.Key)
		strs := append([]string{}, a.StringValues...)
		strs = append(strs, a.DateValues...)
		for _, p := range []*string{a.StringValue, a.DateValue} {
			if p != nil {
				strs = append(strs, *p)
			}
		}
		for _, id := range []string{a.ClassificationID, a.DocumentID, a.Relationship, a.InverseRelationship, a.EntityTypeID, a.EntityID, a.Namespace} {
			if id != "" {
				strs = append(strs, id)
			}
		}
		for _, e := range a.Entities {
			strs = append(strs, e.EntityTypeID, e.EntityID, e.Namespace)
		}
		for _, v := range strs {
			errs = append(errs, checkValue(field, v)...)
			sz.add(v)
		}
		for range a.NumberValues {
			sz.add("")
		}
	}
	return errs
}

// CheckNewDocuments checks a document and its children (the payload of
// OpAddDocuments, or the children of OpUpdateDocument) against the limits.
func CheckNewDocuments(docs []NewDocument) []ValidationItem {
	var sz requestSize
	return sz.total(checkNewDocuments(docs, len(docs)-1, &sz))
}

func checkNewDocuments(docs []NewDocument, children int, sz *requestSize) []ValidationItem {
	if children > MaxChildDocuments {
		return []ValidationItem{{Key: "documents", Msg: fmt.Sprintf("a request can create at most %d child documents", MaxChildDocuments)}}
	}
	var errs []ValidationItem
	for i := range docs {
		nd := &docs[i]
		errs = append(errs, CheckPath("path", nd.Document.Path)...)
		errs = append(errs, CheckContentType(nd.Document.ContentType)...)
		errs = append(errs, checkTags("tags", nd.Tags, sz)...)
		errs = append(errs, checkAttributes("attributes", nd.Attributes, sz)...)
	}
	return errs
}

// CheckUpdateDocument checks the payload of OpUpdateDocument.
func CheckUpdateDocument(p *UpdateDocument) []ValidationItem {
	var sz requestSize
	var errs []ValidationItem
	if p.Path != nil {
		errs = append(errs, CheckPath("path", *p.Path)...)
	}
	if p.ContentType != nil {
		errs = append(errs, CheckContentType(*p.ContentType)...)
	}
	errs = append(errs, checkTags("tags", p.Tags, &sz)...)
	errs = append(errs, checkAttributes("attributes", p.Attributes, &sz)...)
	errs = append(errs, checkNewDocuments(p.Children, len(p.Children), &sz)...)
	return sz.total(errs)
}

// checkActionCount bounds the actions one command adds to a document
// (addActions runs it for every command that adds actions), and with
// checkDocumentActions what the document holds after it.
// The default processing of new content (marked Default) is never
// refused for the document's count: a version upload must not fail
// because of the actions of the versions before it; it adds at most one
// action of each default type.
func checkActionCount(t *tx, d *Document, actions []Action) error {
	if len(actions) > MaxActionsPerRequest {
		return Invalid("actions", fmt.Sprintf("a request can add at most %d actions", MaxActionsPerRequest))
	}
	n := len(actions) - countFunc(actions, func(a Action) bool { return a.Default })
	if n == 0 {
		return nil
	}
	if d.ActionSeq == 0 {
		// Never given an action (a new document: the create path), so
		// it holds none; retries only copy existing ones.
		return checkDocumentActions(t, n)
	}
	return checkDocumentActions(t, t.countMax(actionPrefix(d.SiteID, d.DocumentID), MaxDocumentActions+1)+n)
}

// countFunc counts the elements of s for which f is true.
func countFunc[T any](s []T, f func(T) bool) int {
	n := 0
	for _, v := range s {
		if f(v) {
			n++
		}
	}
	return n
}

// checkDocumentActions refuses a write that leaves a document with more
// than MaxDocumentActions actions: every action change reads them all
// (refreshActions), so an unbounded list would make each one slower and
// at last too large for one transaction. Commands of releases before
// RulesActionCap apply as they did.
func checkDocumentActions(t *tx, n int) error {
	if t.rules < RulesActionCap {
		return nil
	}
	if n > MaxDocumentActions {
		return Invalid("actions", fmt.Sprintf("a document can hold at most %d actions", MaxDocumentActions))
	}
	return nil
}

// checkDocumentSize is the MaxDocumentValues check of what a document
// holds after a write; what names "tags" or "attributes".
func checkDocumentSize(what string, sz requestSize) error {
	if sz.values > MaxDocumentValues || sz.bytes > MaxDocumentValueBytes {
		return Invalid(what, fmt.Sprintf("a document's %s can hold at most %d values of at most %d bytes together", what, MaxDocumentValues, MaxDocumentValueBytes))
	}
	return nil
}

// limitsErr turns check results into an error for an applier.
func limitsErr(items []ValidationItem) error {
	if len(items) == 0 {
		return nil
	}
	return &ValidationError{Items: items}
}
