package storage

import (
	"github.com/dgraph-io/badger/v4"

	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Action statuses (FormKiQ's DocumentActionStatus).
const (
	ActionPending         = "PENDING"
	ActionRunning         = "RUNNING"
	ActionComplete        = "COMPLETE"
	ActionAsyncComplete   = "ASYNC_COMPLETE"
	ActionFailed          = "FAILED"
	ActionSkipped         = "SKIPPED"
	ActionInQueue         = "IN_QUEUE"
	ActionFailedRetry     = "FAILED_RETRY"
	ActionWaitingForRetry = "WAITING_FOR_RETRY"
	ActionMaxRetries      = "MAX_RETRIES_REACHED"
)

// DefaultMaxRetries is the number of attempts an action gets when its
// engine keeps failing with a transient error.
const DefaultMaxRetries = 3

// Action is a document action as stored. Actions of a document run in key
// order; a retry of a failed action (POST /actions/retry) gets the key
// right after the one it retries, so it keeps its place in the chain.
type Action struct {
	Seq            int               `json:"seq"`
	Retry          int               `json:"retry,omitempty"`
	Type           string            `json:"type"`
	Status         string            `json:"status"`
	Parameters     json.RawMessage   `json:"parameters,omitempty"`
	QueueID        string            `json:"queueId,omitempty"`
	WorkflowID     string            `json:"workflowId,omitempty"`
	WorkflowStepID string            `json:"workflowStepId,omitempty"`
	UserID         string            `json:"userId,omitempty"`
	InsertedDate   time.Time         `json:"insertedDate"`
	StartDate      *time.Time        `json:"startDate,omitempty"`
	CompletedDate  *time.Time        `json:"completedDate,omitempty"`
	Message        string            `json:"message,omitempty"`
	RetryCount     int               `json:"retryCount"`
	MaxRetries     int               `json:"maxRetries,omitempty"`
	NextAttempt    *time.Time        `json:"nextAttempt,omitempty"`
	Metadata       map[string]string `json:"metadata,omitempty"`
	// Actor is the adder's rights, for types that act with them (MOVE,
	// DELETE; see CheckActionRights). Never shown in the API.
	Actor *ActionActor `json:"actor,omitempty"`
	// Default marks an action of the site's default processing (no
	// request named it): storage may drop or finish it while it is
	// PENDING once the content's type is known (defaultactions.go).
	// Never shown in the API.
	Default bool `json:"default,omitempty"`
}

// ID names the action within its document ("000003", or "000003.001" for
// the first retry of action 3).
func (a *Action) ID() string { return actionID(a.Seq, a.Retry) }

func actionID(seq, retry int) string {
	if retry == 0 {
		return fmt.Sprintf("%06d", seq)
	}
	return fmt.Sprintf("%06d.%03d", seq, retry)
}

// ActionDone reports statuses after which the next action may run.
func ActionDone(s string) bool {
	switch s {
	case ActionComplete, ActionAsyncComplete, ActionSkipped, ActionFailedRetry:
		return true
	}
	return false
}

// ActionRunnable reports statuses a worker picks up (RUNNING: the process
// stopped while it ran).
func ActionRunnable(s string) bool {
	switch s {
	case ActionPending, ActionRunning, ActionWaitingForRetry:
		return true
	}
	return false
}

// ListableActionStatuses are the values GET /documents?actionStatus= takes.
var ListableActionStatuses = []string{ActionFailed, ActionInQueue, ActionPending, ActionRunning, ActionSkipped, ActionFailedRetry}

// contentReady reports whether a document's actions may run: its content
// is there and typed (or it never has content), and it is not in the trash.
func contentReady(d *Document) bool {
	if d.DeletedDate != nil {
		return false
	}
	if d.DeepLinkPath != "" || d.ResourceType == ResourceDossier {
		return true
	}
	return d.HasContent && !d.DetectContentType
}

// putDoc writes a document record and, for documents with actions, keeps
// the action queue and the action status index in step with it. Every
// write of a document record goes through here. The search index is told
// (the record key is touched) only when a field it reads changed: the
// CHECKSUM action's update re-indexed every document's text a second time,
// and Bleve's merges of those re-indexed documents took most of the
// pipeline's CPU (pipeline/DESIGN.md).
func putDoc(t *tx, d *Document) error {
	if d.ActionSeq > 0 {
		if err := refreshActions(t, d); err != nil {
			return err
		}
	}
	key := docKey(d.SiteID, d.DocumentID)
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	raw, err := t.getRaw(key)
	if errors.Is(err, ErrNotFound) {
		if err := askThumbnail(t, nil, d); err != nil { // thumbnails.go
			return err
		}
		return t.set(key, b)
	}
	if err != nil {
		return err
	}
	var old Document
	if err := json.Unmarshal(raw, &old); err != nil {
		return t.set(key, b)
	}
	if err := askThumbnail(t, &old, d); err != nil {
		return err
	}
	if !sameForIndex(&old, d) {
		return t.set(key, b)
	}
	return t.txn.Set(key, b)
}

// sameForIndex reports whether the stored record old and d differ only in
// fields the search index does not read. It lists the fields known to be
// left out of the index (the checksum the CHECKSUM action sets, action
// bookkeeping, the modification time, the thumbnail) rather than the ones in it, so a
// field the index starts reading is compared without anyone remembering
// this function: a false "changed" costs a re-index, never a stale index.
func sameForIndex(old, d *Document) bool {
	o, n := *old, *d
	for _, x := range []*Document{&o, &n} {
		x.Checksum, x.ChecksumType = "", ""
		x.ActionSeq, x.ActionStatuses = 0, nil
		x.LastModifiedDate = time.Time{}
		x.ThumbnailID = ""
	}
	ob, err := json.Marshal(o)
	if err != nil {
		return false
	}
	nb, err := json.Marshal(n)
	if err != nil {
		return false
	}
	return bytes.Equal(ob, nb)
}

// putDocActions writes a document record whose change is only action
// bookkeeping (what the search index holds of it is the same), so the
// index is not told: re-indexing a document for every action step cost
// the pipeline most of its time.
func putDocActions(t *tx, d *Document) error {
	if err := refreshActions(t, d); err != nil {
		return err
	}
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return t.txn.Set(docKey(d.SiteID, d.DocumentID), b)
}

// refreshActions recomputes whether d has an action a worker can run now
// (the aq/ key, whose value is the earliest time to run it) and which
// action statuses it has (the as/ index).
func refreshActions(t *tx, d *Document) error {
	acts, err := loadActions(t, d.SiteID, d.DocumentID)
	if err != nil {
		return err
	}
	var next *Action
	statuses := map[string]bool{}
	for i := range acts {
		statuses[acts[i].Status] = true
		if next == nil && !ActionDone(acts[i].Status) {
			next = &acts[i]
		}
	}
	qk := actionQueueKey(d.SiteID, d.DocumentID)
	queued, err := t.exists(qk)
	if err != nil {
		return err
	}
	if next != nil && ActionRunnable(next.Status) && contentReady(d) {
		at := time.Time{}
		if next.Status == ActionWaitingForRetry && next.NextAttempt != nil {
			at = *next.NextAttempt
		}
		if err := t.set(qk, binary.BigEndian.AppendUint64(nil, uint64(at.UnixNano()))); err != nil {
			return err
		}
		t.queue(DocRef{Site: d.SiteID, ID: d.DocumentID}, at)
	} else if queued {
		if err := t.del(qk); err != nil {
			return err
		}
	}
	var now []string
	for s := range statuses {
		if slices.Contains(ListableActionStatuses, s) {
			now = append(now, s)
		}
	}
	slices.Sort(now)
	for _, s := range d.ActionStatuses {
		if !slices.Contains(now, s) {
			if err := t.del(actionStatusKey(d.SiteID, s, d.DocumentID)); err != nil {
				return err
			}
		}
	}
	for _, s := range now {
		if !slices.Contains(d.ActionStatuses, s) {
			if err := t.set(actionStatusKey(d.SiteID, s, d.DocumentID), nil); err != nil {
				return err
			}
		}
	}
	d.ActionStatuses = now
	return nil
}

// loadActions reads a document's actions in order.
func loadActions(t *tx, site, doc string) ([]Action, error) {
	var out []Action
	err := t.each(actionPrefix(site, doc), func(_, v []byte) error {
		var a Action
		if err := json.Unmarshal(v, &a); err != nil {
			return err
		}
		out = append(out, a)
		return nil
	})
	return out, err
}

// clearActions removes a purged document's queue entries, status index
// entries, publication, pending thumbnail and workflow records (its
// actions, texts, results and pending renditions go with the purge's
// gathered keys, purge.go); queues are the ids of the site's queues,
// workflows the document's workflow keys.
func clearActions(t *tx, d *Document, queues []string, workflows [][]byte) error {
	for _, s := range d.ActionStatuses {
		if err := t.del(actionStatusKey(d.SiteID, s, d.DocumentID)); err != nil {
			return err
		}
	}
	if err := dropThumbnailQueue(t, d.SiteID, d.DocumentID); err != nil { // thumbnails.go
		return err
	}
	if err := unpublish(t, d.SiteID, d.DocumentID); err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	if err := removeFromQueues(t, d.SiteID, d.DocumentID, queues); err != nil {
		return err
	}
	if err := clearWorkflows(t, d.SiteID, d.DocumentID, workflows); err != nil { // workflows.go
		return err
	}
	if ok, err := t.exists(actionQueueKey(d.SiteID, d.DocumentID)); err != nil || !ok {
		return err
	}
	return t.del(actionQueueKey(d.SiteID, d.DocumentID))
}

// addActions appends actions to d (the caller writes d).
func addActions(t *tx, c *Command, d *Document, actions []Action) error {
	if err := checkActionCount(t, d, actions); err != nil {
		return err
	}
	var set FolderPermissionSet
	for i := range actions {
		a := &actions[i]
		if ActsAsAdder(a.Type) {
			if set == nil {
				var err error
				if set, err = loadFolderPermissions(t, c.Site); err != nil {
					return err
				}
			}
			if err := CheckActionRights(c.Site, a, d.DocumentID, d.Path, set); err != nil {
				return err
			}
		}
		a.Seq, a.Retry, a.InsertedDate = d.ActionSeq, 0, c.At
		d.ActionSeq++
		if a.Status == "" {
			a.Status = ActionPending
		}
		if a.UserID == "" {
			a.UserID = c.User
		}
		if a.MaxRetries == 0 {
			a.MaxRetries = DefaultMaxRetries
		}
		if err := t.setJSON(actionKey(c.Site, d.DocumentID, a.Seq, 0), a); err != nil {
			return err
		}
		if a.Type == "NOTIFICATION" && a.Metadata["reminder"] == "" {
			if err := recordActionNotification(t, c, d.DocumentID, a); err != nil {
				return err
			}
		}
	}
	return nil
}

// MsgNotificationEmail is FormKiQ's answer to a NOTIFICATION action on a
// site without a sender address (key KeyNotificationEmail).
const (
	MsgNotificationEmail = "notificationEmail is not configured"
	KeyNotificationEmail = "parameters.notificationEmail"
)

// checkNotificationSender refuses the NOTIFICATION actions a client adds
// while the site has no sender address (notificationEmail or
// notification.email): they could only fail. The site configuration is
// read in the transaction, so a concurrent change makes it retry.
// Actions Quire adds itself (reminders, reviews) do not come through here.
func checkNotificationSender(t *tx, site string, actions []Action) error {
	if !slices.ContainsFunc(actions, func(a Action) bool { return a.Type == "NOTIFICATION" }) {
		return nil
	}
	c, err := siteConfigIn(t, site)
	if err != nil {
		return err
	}
	if c.FromEmail() == "" {
		return Invalid(KeyNotificationEmail, MsgNotificationEmail)
	}
	return nil
}

// AddActions is the payload of OpAddActions.
type AddActions struct {
	DocumentID string   `json:"documentId"`
	Actions    []Action `json:"actions"`
}

// RetryActions is the payload of OpRetryActions: Actor is the rights of
// whoever asks, with which retried MOVE and DELETE actions run.
type RetryActions struct {
	DocumentID string       `json:"documentId"`
	Actor      *ActionActor `json:"actor,omitempty"`
	// Types, when set, limits the retry to actions of these types (Quire's
	// actionTypes): a failed one is retried as any, and one whose latest
	// action finished (COMPLETE, SKIPPED) runs again as a new action at the
	// end, in the order of Types.
	Types []string `json:"types,omitempty"`
}

// ActionRef names one action of a document.
type ActionRef struct {
	DocumentID string `json:"documentId"`
	Seq        int    `json:"seq"`
	Retry      int    `json:"retry,omitempty"`
}

// ErrNoFailedAction is returned by OpRetryActions when nothing failed.
var ErrNoFailedAction = errors.New("Failed action not found")

// ErrActionChanged is returned by OpStartAction and OpFinishAction when
// the action is no longer in the state the worker saw (another worker, a
// retry or a delete got there first).
var ErrActionChanged = errors.New("action changed")

func applyAddActions(t *tx, c *Command) (any, error) {
	p, err := decode[AddActions](c)
	if err != nil {
		return nil, err
	}
	d, err := getLiveDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	if err := checkNotificationSender(t, c.Site, p.Actions); err != nil {
		return nil, err
	}
	if err := addActions(t, c, d, p.Actions); err != nil {
		return nil, err
	}
	return nil, putDocActions(t, d)
}

// applyRetryActions marks every FAILED or MAX_RETRIES_REACHED action
// FAILED_RETRY and adds a PENDING copy right after it.
func applyRetryActions(t *tx, c *Command) (any, error) {
	p, err := decode[RetryActions](c)
	if err != nil {
		return nil, err
	}
	d, err := getLiveDoc(t, c.Site, p.DocumentID)
	if err != nil {
		return nil, err
	}
	acts, err := loadActions(t, c.Site, d.DocumentID)
	if err != nil {
		return nil, err
	}
	n := 0
	for i, a := range acts {
		if a.Status != ActionFailed && a.Status != ActionMaxRetries {
			continue
		}
		if len(p.Types) > 0 && !slices.Contains(p.Types, a.Type) {
			continue
		}
		retry := a.Retry + 1
		for _, b := range acts[i+1:] {
			if b.Seq == a.Seq && b.Retry >= retry {
				retry = b.Retry + 1
			}
		}
		a.Status = ActionFailedRetry
		if err := t.setJSON(actionKey(c.Site, d.DocumentID, a.Seq, a.Retry), a); err != nil {
			return nil, err
		}
		b := Action{Seq: a.Seq, Retry: retry, Type: a.Type, Status: ActionPending, Parameters: a.Parameters,
			QueueID: a.QueueID, WorkflowID: a.WorkflowID, WorkflowStepID: a.WorkflowStepID, UserID: c.User,
			InsertedDate: c.At, MaxRetries: a.MaxRetries, Metadata: a.Metadata}
		if ActsAsAdder(b.Type) {
			b.Actor = p.Actor // the retry runs as whoever asked for it
		}
		if err := t.setJSON(actionKey(c.Site, d.DocumentID, b.Seq, b.Retry), b); err != nil {
			return nil, err
		}
		n++
	}
	if err := checkDocumentActions(t, len(acts)+n); err != nil {
		return nil, err
	}
	again, err := runAgain(t, c, d, acts, *p)
	if err != nil {
		return nil, err
	}
	if n+again == 0 {
		return nil, ErrNoFailedAction
	}
	return nil, putDocActions(t, d)
}

// runAgain adds, for each of p.Types whose latest action finished (not
// failed: those are retried in place; not pending or running: those run
// anyway), a new PENDING action of that type with its parameters at the
// end of d's actions, and returns how many. A workflow's step is not run
// again on its own (its workflow routed on from it).
func runAgain(t *tx, c *Command, d *Document, acts []Action, p RetryActions) (int, error) {
	var add []Action
	for _, typ := range p.Types {
		var last *Action
		for i := range acts {
			if acts[i].Type == typ {
				last = &acts[i]
			}
		}
		if last == nil || !ActionDone(last.Status) || last.WorkflowID != "" {
			continue
		}
		a := Action{Type: last.Type, Status: ActionPending, Parameters: last.Parameters, QueueID: last.QueueID, UserID: c.User, MaxRetries: last.MaxRetries}
		if ActsAsAdder(a.Type) {
			a.Actor = p.Actor // it runs as whoever asked for it
		}
		add = append(add, a)
	}
	if len(add) == 0 {
		return 0, nil
	}
	if err := checkNotificationSender(t, c.Site, add); err != nil {
		return 0, err
	}
	return len(add), addActions(t, c, d, add)
}

func loadAction(t *tx, site string, r ActionRef) (*Document, *Action, error) {
	d, err := getDoc(t, site, r.DocumentID)
	if err != nil {
		return nil, nil, err
	}
	var a Action
	if err := t.getJSON(actionKey(site, r.DocumentID, r.Seq, r.Retry), &a); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, nil, ErrActionChanged
		}
		return nil, nil, err
	}
	return d, &a, nil
}

// applyStartAction marks a runnable action RUNNING and counts the attempt.
// An action that already used all its attempts (a crash while it ran, over
// and over) becomes MAX_RETRIES_REACHED instead; the result says which.
func applyStartAction(t *tx, c *Command) (any, error) {
	p, err := decode[ActionRef](c)
	if err != nil {
		return nil, err
	}
	d, a, err := loadAction(t, c.Site, *p)
	if err != nil {
		return nil, err
	}
	if !ActionRunnable(a.Status) || !contentReady(d) {
		return nil, ErrActionChanged
	}
	return a, startAction(t, c.Site, c.At, d, a)
}

// startAction marks a runnable action of d RUNNING at at and counts the
// attempt, or MAX_RETRIES_REACHED when it has used all its attempts.
func startAction(t *tx, site string, at time.Time, d *Document, a *Action) error {
	if a.MaxRetries > 0 && a.RetryCount >= a.MaxRetries {
		a.Status, a.CompletedDate, a.NextAttempt = ActionMaxRetries, &at, nil
		if a.Message == "" {
			a.Message = "the action did not finish in " + fmt.Sprint(a.RetryCount) + " attempts"
		}
	} else {
		a.Status, a.StartDate, a.NextAttempt = ActionRunning, &at, nil
		a.RetryCount++
	}
	if err := t.setJSON(actionKey(site, d.DocumentID, a.Seq, a.Retry), a); err != nil {
		return err
	}
	if a.Status == ActionMaxRetries {
		// Its workflow, if any, is FAILED (workflows.go).
		if err := workflowActionDone(t, &Command{Site: site, At: at}, d, a); err != nil {
			return err
		}
	}
	return putDocActions(t, d)
}

// FinishAction is the payload of OpFinishAction: an action's outcome and
// everything it changes, applied in one transaction with its status.
type FinishAction struct {
	ActionRef
	Status      string            `json:"status"`
	Message     string            `json:"message,omitempty"`
	NextAttempt *time.Time        `json:"nextAttempt,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	// Texts are extracted texts to keep (FULLTEXT, OCR).
	Texts []TextRecord `json:"texts,omitempty"`
	// Reindex tells the search index the document's text changed (not
	// set for text the index reads from the content itself).
	Reindex bool `json:"reindex,omitempty"`
	// Results are engine results read back by the results endpoints.
	Results []ActionResult `json:"results,omitempty"`
	// Then are commands applied after the status, in the same
	// transaction: document updates, tags, attributes, deletes, new
	// documents. Only the ops in finishOps are allowed.
	Then []Command `json:"then,omitempty"`
	// Rendition records, in the same transaction, a rendition the
	// outcome promises and that is built after it (renditions.go).
	Rendition *PendingRendition `json:"rendition,omitempty"`
	// Uncounted gives the attempt back: it failed for a cause outside the
	// action (a full disk), so it does not count against MaxRetries.
	Uncounted bool `json:"uncounted,omitempty"`
	// Next asks to start, in the same transaction, the first unfinished
	// action of a document of the same site (the one the worker takes
	// next), as OpStartAction would: one commit instead of two, and no
	// reads of that document outside the transaction. Nothing about Next
	// can fail the outcome: a document gone, without a runnable action or
	// without its content is simply not started. The result is then a
	// *StartedAction.
	Next string `json:"next,omitempty"`
}

// StartedAction is the result of an OpFinishAction with Next.
type StartedAction struct {
	// Document is the next document as it is after the transaction; nil
	// when it is gone or in the trash.
	Document *Document
	// Actions are its actions as they were before the start (Job.Actions).
	Actions []Action
	// Action is the started action: RUNNING, or MAX_RETRIES_REACHED when
	// it had used all its attempts. Nil when nothing was started.
	Action *Action
	// NotBefore is set when its first unfinished action waits for a retry
	// until then.
	NotBefore *time.Time
	// Content is the document's content when an action was started and
	// the content is one chunk of at most StartedContentMax bytes (nil
	// otherwise): read in the transaction, it saves the engine a read
	// transaction, which waits for the synced commits under way.
	Content []byte
}

// StartedContentMax is the largest content StartedAction carries.
const StartedContentMax = 256 << 10

// startNext starts the first unfinished action of document id if it may
// run at c.At (see FinishAction.Next).
func startNext(t *tx, c *Command, id string) (*StartedAction, error) {
	d, err := getDoc(t, c.Site, id)
	if errors.Is(err, ErrNotFound) || err == nil && d.DeletedDate != nil {
		return &StartedAction{}, nil
	}
	if err != nil {
		return nil, err
	}
	acts, err := loadActions(t, c.Site, id)
	if err != nil {
		return nil, err
	}
	out := &StartedAction{Document: d, Actions: acts}
	var a *Action
	for i := range acts {
		if !ActionDone(acts[i].Status) {
			a = &acts[i]
			break
		}
	}
	if a == nil || !ActionRunnable(a.Status) || !contentReady(d) {
		return out, nil
	}
	if a.Status == ActionWaitingForRetry && a.NextAttempt != nil && a.NextAttempt.After(c.At) {
		na := *a.NextAttempt
		out.NotBefore = &na
		return out, nil
	}
	started := *a
	if err := startAction(t, c.Site, c.At, d, &started); err != nil {
		return nil, err
	}
	// As for OpStartAction, the worker that started it is on it: its
	// queue entry is not reported.
	delete(t.queued, DocRef{Site: c.Site, ID: id})
	out.Action = &started
	if started.Status == ActionRunning && d.HasContent {
		out.Content = smallContent(t, d.ContentSHA256)
	}
	return out, nil
}

// smallContent returns content of one chunk of at most StartedContentMax
// bytes, nil for larger content or when it cannot be read here (the
// engine then reads it the usual way, and reports what fails).
func smallContent(t *tx, sha string) []byte {
	var m Manifest
	if err := t.getJSON(manifestKey(sha), &m); err != nil || len(m.Chunks) != 1 || m.Size > StartedContentMax {
		return nil
	}
	item, err := t.txn.Get(chunkKey(m.Chunks[0].SHA))
	if err != nil {
		return nil
	}
	var b []byte
	err = item.Value(func(val []byte) error {
		b, err = decodeChunk(val, nil)
		return err
	})
	if err != nil || int64(len(b)) != m.Size {
		return nil
	}
	return b
}

// finishOps are the ops an action outcome may carry.
var finishOps = map[Op]bool{
	OpUpdateDocument: true, OpSetTags: true, OpSetDocAttributes: true, OpSoftDelete: true,
	OpDeleteDocument: true, OpAddDocuments: true, OpAddActions: true, OpPutChunks: true, OpQueueDocument: true, OpPublish: true,
	OpAddArtifact: true, OpPromoteArtifact: true,
}

func applyFinishAction(t *tx, c *Command) (any, error) {
	p, err := decode[FinishAction](c)
	if err != nil {
		return nil, err
	}
	d, a, err := loadAction(t, c.Site, p.ActionRef)
	if err != nil {
		return nil, err
	}
	if a.Status != ActionRunning {
		return nil, ErrActionChanged
	}
	at := c.At
	a.Status, a.Message, a.NextAttempt = p.Status, p.Message, p.NextAttempt
	if p.Uncounted && a.RetryCount > 0 {
		a.RetryCount--
	}
	if p.Status != ActionWaitingForRetry && p.Status != ActionInQueue {
		a.CompletedDate = &at
	}
	for k, v := range p.Metadata {
		if a.Metadata == nil {
			a.Metadata = map[string]string{}
		}
		a.Metadata[k] = v
	}
	if err := t.setJSON(actionKey(c.Site, d.DocumentID, a.Seq, a.Retry), a); err != nil {
		return nil, err
	}
	for _, tr := range p.Texts {
		tr.InsertedDate, tr.UserID = c.At, a.UserID
		if err := checkTextRef(&tr); err != nil {
			return nil, err
		}
		if tr.Kind == TextOCR {
			if err := detachFulltext(t, c.Site, d.DocumentID); err != nil {
				return nil, err
			}
		}
		if err := t.setJSON(textKey(c.Site, d.DocumentID, tr.Kind), tr); err != nil {
			return nil, err
		}
	}
	put := putDocActions
	if p.Reindex {
		// New text to index: the record itself may not change.
		put = func(t *tx, d *Document) error { t.touch(docKey(d.SiteID, d.DocumentID)); return putDoc(t, d) }
	}
	for _, r := range p.Results {
		r.InsertedDate, r.UserID = c.At, a.UserID
		if err := t.setJSON(resultKey(c.Site, d.DocumentID, r.Kind, r.Name), r); err != nil {
			return nil, err
		}
	}
	if err := put(t, d); err != nil {
		return nil, err
	}
	if p.Rendition != nil {
		if err := addRendition(t, c, d, a, *p.Rendition); err != nil {
			return nil, err
		}
	}
	if p.Status != ActionWaitingForRetry && p.Status != ActionInQueue {
		// The document events of a finished action (events.go).
		if err := actionEvents(t, c, d, a, p); err != nil {
			return nil, err
		}
	}
	for i := range p.Then {
		sub := &p.Then[i]
		if !finishOps[sub.Op] {
			return nil, fmt.Errorf("finish action: op %s not allowed", sub.Op)
		}
		sub.Site, sub.At = c.Site, c.At
		if sub.User == "" {
			sub.User = c.User
		}
		t.system = true
		_, err := appliers[sub.Op](t, sub)
		t.system = false
		if err != nil {
			return nil, err
		}
	}
	if a.WorkflowID != "" && p.Status != ActionWaitingForRetry && p.Status != ActionInQueue {
		// The step of its workflow may be finished: it moves on in this
		// transaction (workflows.go). The outcome's commands may have
		// changed or removed the document.
		wd, err := getDoc(t, c.Site, d.DocumentID)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
		if err == nil && wd.DeletedDate == nil {
			if err := workflowActionDone(t, c, wd, a); err != nil {
				return nil, err
			}
			if err := putDocActions(t, wd); err != nil {
				return nil, err
			}
		}
	}
	if p.Next != "" {
		return startNext(t, c, p.Next)
	}
	return nil, nil
}

// TextRecord is text extracted from a document's content. ContentSHA
// names the content it was extracted from: after new content is uploaded
// the record is stale and readers ignore it.
type TextRecord struct {
	Kind         string    `json:"kind"` // "fulltext" or "ocr"
	ContentSHA   string    `json:"contentSha256"`
	Text         string    `json:"text"`
	ContentType  string    `json:"contentType,omitempty"`
	Engine       string    `json:"engine,omitempty"`
	UserID       string    `json:"userId,omitempty"`
	InsertedDate time.Time `json:"insertedDate"`
	// From, on a FULLTEXT record, says its text is not held here but is
	// the first Bytes bytes of the content (TextFromContent) or of the OCR
	// text (TextOCR) of the same content (textref.go). Reads resolve it.
	From  string `json:"from,omitempty"`
	Bytes int64  `json:"bytes,omitempty"`
}

// Text kinds.
const (
	TextFulltext = "fulltext"
	TextOCR      = "ocr"
)

// ActionResult is an engine's result for a document (antivirus scans,
// data classifications, metadata extractions, AI prompts, notifications).
type ActionResult struct {
	Kind         string          `json:"kind"`
	Name         string          `json:"name"`
	Value        json.RawMessage `json:"value"`
	UserID       string          `json:"userId,omitempty"`
	InsertedDate time.Time       `json:"insertedDate"`
}

// Text returns the extracted text of kind for a document's current
// content, or nil when there is none.
func (d *DB) Text(site, doc, kind string) (*TextRecord, error) {
	var out *TextRecord
	err := d.view(func(t *tx) error {
		dc, err := getDoc(t, site, doc)
		if err != nil {
			return err
		}
		var tr TextRecord
		if err := t.getJSON(textKey(site, doc, kind), &tr); err != nil {
			if errors.Is(err, ErrNotFound) {
				return nil
			}
			return err
		}
		if tr.ContentSHA != dc.ContentSHA256 {
			return nil
		}
		out = &tr
		return resolveText(t, site, doc, &tr)
	})
	return out, err
}

// Results returns a document's results of kind (all names, in name order).
func (d *DB) Results(site, doc, kind string) ([]ActionResult, error) {
	var out []ActionResult
	err := d.view(func(t *tx) error {
		return t.each(resultPrefix(site, doc, kind), func(_, v []byte) error {
			var r ActionResult
			if err := json.Unmarshal(v, &r); err != nil {
				return err
			}
			out = append(out, r)
			return nil
		})
	})
	return out, err
}

// GetAction returns one action of a document.
func (d *DB) GetAction(site string, r ActionRef) (*Action, error) {
	var a Action
	err := d.view(func(t *tx) error { return t.getJSON(actionKey(site, r.DocumentID, r.Seq, r.Retry), &a) })
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// QueuedDoc is a document with an action to run, not before At.
type QueuedDoc struct {
	DocRef
	At time.Time
}

// ActionQueue calls fn for every document with an action to run.
func (d *DB) ActionQueue(fn func(QueuedDoc) error) error {
	return d.view(func(t *tx) error {
		return t.each([]byte(pfxActionQueue), func(k, v []byte) error {
			rest := strings.TrimPrefix(string(k), pfxActionQueue)
			site, doc, ok := strings.Cut(rest, "/")
			if !ok || len(v) != 8 {
				return nil
			}
			return fn(QueuedDoc{DocRef{siteOfKey(site), doc}, time.Unix(0, int64(binary.BigEndian.Uint64(v)))})
		})
	})
}

// DocsWithActionStatus returns up to limit documents of a site having an
// action in status, after the document id after.
func (d *DB) DocsWithActionStatus(site, status, after string, limit int) ([]string, error) {
	var out []string
	prefix := actionStatusPrefix(site, status)
	err := d.view(func(t *tx) error {
		opts := badger.DefaultIteratorOptions
		opts.PrefetchValues = false
		opts.Prefix = prefix
		it := t.txn.NewIterator(opts)
		defer it.Close()
		for it.Seek(append(slices.Clip(prefix), after+"\x00"...)); it.ValidForPrefix(prefix) && len(out) < limit; it.Next() {
			out = append(out, string(it.Item().Key()[len(prefix):]))
		}
		return nil
	})
	return out, err
}

// ActionState returns a live document and its actions, read in one
// transaction (the pipeline's look at a document it takes: each read
// transaction waits for the synced commits under way, so one read instead
// of two halves that wait).
func (d *DB) ActionState(site, id string) (*Document, []Action, error) {
	var doc *Document
	var acts []Action
	err := d.view(func(t *tx) error {
		var err error
		if doc, err = getLiveDoc(t, site, id); err != nil {
			return err
		}
		acts, err = loadActions(t, site, id)
		return err
	})
	return doc, acts, err
}
