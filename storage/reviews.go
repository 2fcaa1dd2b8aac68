package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Reviews (SERVICE-SPEC.md §2.7, §3.1, §7; API.md "Reviews"): a review of
// a document or of one artifact (keyed by the artifact's own id), and the
// decisions on it. Every decision counts towards requiredDecisions; the
// one that reaches it completes the review, and any decision on a review
// that is no longer open is refused with 409 inside the transaction, so
// of racing decisions exactly the ones that fit are accepted.

// Review statuses (DocumentReviewStatus).
const (
	ReviewPending    = "PENDING"
	ReviewInProgress = "IN_PROGRESS"
	ReviewCompleted  = "COMPLETED"
	ReviewCancelled  = "CANCELLED"
	ReviewSuperseded = "SUPERSEDED"
)

// Review limits, checked by the server before it applies and again here.
const (
	MaxReviewsPerDocument   = 100
	MaxRequiredDecisions    = 100
	MaxReviewApprovalGroups = 20
	MaxReviewNotifications  = 10
	MaxReviewTextLen        = 4096
)

// ReviewNotification is a notification block given at creation; it is
// stored with the review.
type ReviewNotification struct {
	NotificationType string   `json:"notificationType"`
	CC               []string `json:"cc,omitempty"`
	BCC              []string `json:"bcc,omitempty"`
	Subject          string   `json:"subject"`
	Body             string   `json:"body"`
}

// Review is a document review (FormKiQ's DocumentReview plus the approval
// groups, notifications and the count of decisions taken).
type Review struct {
	DocumentID        string               `json:"documentId"` // the document, or the artifact reviewed
	ParentID          string               `json:"parentId,omitempty"`
	ReviewID          string               `json:"reviewId"`
	ReviewCategory    string               `json:"reviewCategory"`
	ReviewStatus      string               `json:"reviewStatus"`
	RequiredDecisions int64                `json:"requiredDecisions"`
	Decisions         int64                `json:"decisions"`
	ApprovalGroups    []string             `json:"approvalGroups,omitempty"`
	Notifications     []ReviewNotification `json:"notifications,omitempty"`
	Comments          string               `json:"comments,omitempty"`
	UserID            string               `json:"userId,omitempty"`
	InsertedDate      time.Time            `json:"insertedDate"`
	LastModifiedDate  time.Time            `json:"lastModifiedDate"`
	// FollowsUpReviewID names the review of the same document (or
	// artifact) this one follows up; FollowUpReviewID, on that review,
	// names its follow-up (set by the store: one per review).
	FollowsUpReviewID string `json:"followsUpReviewId,omitempty"`
	FollowUpReviewID  string `json:"followUpReviewId,omitempty"`
}

// ReviewDecision is one decision on a review.
type ReviewDecision struct {
	DocumentID   string    `json:"documentId"`
	ReviewID     string    `json:"reviewId"`
	DecisionID   string    `json:"decisionId"`
	Type         string    `json:"type"`
	Decision     string    `json:"decision,omitempty"`
	Comment      string    `json:"comment,omitempty"`
	UserID       string    `json:"userId,omitempty"`
	InsertedDate time.Time `json:"insertedDate"`
}

// ReviewUpdate is the payload of OpUpdateReview: nil fields are kept.
type ReviewUpdate struct {
	DocumentID        string  `json:"documentId"`
	ReviewID          string  `json:"reviewId"`
	ReviewStatus      *string `json:"reviewStatus,omitempty"`
	RequiredDecisions *int64  `json:"requiredDecisions,omitempty"`
	Comments          *string `json:"comments,omitempty"`
}

func reviewKey(site, doc, id string) []byte {
	return []byte(pfxReview + sk(site) + "/" + doc + "/" + id)
}

func reviewPrefix(site, doc string) []byte { return []byte(pfxReview + sk(site) + "/" + doc + "/") }

func reviewDecisionKey(site, doc, review, id string) []byte {
	return []byte(pfxReviewDecision + sk(site) + "/" + doc + "/" + review + "/" + id)
}

func reviewDecisionPrefix(site, doc, review string) []byte {
	return []byte(pfxReviewDecision + sk(site) + "/" + doc + "/" + review + "/")
}

// docDecisionPrefix is the prefix of the decisions of every review of doc
// (a purge removes them with the reviews).
func docDecisionPrefix(site, doc string) []byte {
	return []byte(pfxReviewDecision + sk(site) + "/" + doc + "/")
}

func reviewNotFound(id string) error {
	return &NotFoundError{Msg: fmt.Sprintf("Review '%s' not found", id)}
}

// reviewClosed is true for the statuses that take no decision and no change.
func reviewClosed(status string) bool {
	return status == ReviewCompleted || status == ReviewCancelled || status == ReviewSuperseded
}

func checkRequiredDecisions(n int64) error {
	if n < 1 || n > MaxRequiredDecisions {
		return Invalid("requiredDecisions", fmt.Sprintf("'requiredDecisions' must be between 1 and %d", MaxRequiredDecisions))
	}
	return nil
}

func applyAddReview(t *tx, c *Command) (any, error) {
	p, err := decode[Review](c)
	if err != nil {
		return nil, err
	}
	if err := checkRequiredDecisions(p.RequiredDecisions); err != nil {
		return nil, err
	}
	if p.ReviewStatus == "" {
		p.ReviewStatus = ReviewPending
	}
	if p.ReviewStatus != ReviewPending && p.ReviewStatus != ReviewInProgress {
		return nil, Invalid("reviewStatus", "a new review is PENDING or IN_PROGRESS")
	}
	d, err := getLiveDoc(t, c.Site, p.DocumentID)
	if errors.Is(err, ErrNotFound) {
		return nil, &NotFoundError{Msg: fmt.Sprintf("Document %s not found.", p.DocumentID)}
	} else if err != nil {
		return nil, err
	}
	if t.count(reviewPrefix(c.Site, p.DocumentID)) >= MaxReviewsPerDocument {
		return nil, Invalid("review", fmt.Sprintf("a document has at most %d reviews", MaxReviewsPerDocument))
	}
	p.Decisions = 0
	p.UserID, p.InsertedDate, p.LastModifiedDate = c.User, c.At, c.At
	p.FollowUpReviewID = ""
	if p.FollowsUpReviewID != "" {
		if err := followUp(t, c, p); err != nil {
			return nil, err
		}
	}
	if err := t.setJSON(reviewKey(c.Site, p.DocumentID, p.ReviewID), p); err != nil {
		return nil, err
	}
	return nil, queueReviewMail(t, c, d, p)
}

// followUp links the new review p to the review it follows up, of the
// same document or artifact: that review names p as its follow-up (it
// has at most one: 409 otherwise) and, if it is still open, is
// SUPERSEDED by it.
func followUp(t *tx, c *Command, p *Review) error {
	var prev Review
	if err := t.getJSON(reviewKey(c.Site, p.DocumentID, p.FollowsUpReviewID), &prev); err != nil {
		if errors.Is(err, ErrNotFound) {
			return Invalid("followsUpReviewId", "'followsUpReviewId' does not exist")
		}
		return err
	}
	if prev.FollowUpReviewID != "" {
		return &ConflictError{Msg: fmt.Sprintf("Review '%s' already has a follow-up review '%s'", prev.ReviewID, prev.FollowUpReviewID)}
	}
	prev.FollowUpReviewID = p.ReviewID
	if !reviewClosed(prev.ReviewStatus) {
		prev.ReviewStatus = ReviewSuperseded
	}
	prev.LastModifiedDate = c.At
	return t.setJSON(reviewKey(c.Site, prev.DocumentID, prev.ReviewID), prev)
}

// queueReviewMail turns the review's EMAIL notifications into NOTIFICATION
// actions of the document (of the artifact's document for an artifact's
// review: artifacts take no actions), in the same transaction, so the
// pipeline's notification engine sends them. IN_APP blocks are delivered
// at once: each is a notification record (ACTION_CREATED, no action) of
// that document addressed to its cc and bcc, which GET /userNotifications
// shows them.
func queueReviewMail(t *tx, c *Command, d *Document, p *Review) error {
	var acts []Action
	target := d.DocumentID
	if d.ArtifactOf != "" {
		target = d.ArtifactOf
	}
	for _, n := range p.Notifications {
		if n.NotificationType == NotificationInApp {
			rec := &DocNotification{DocumentID: target, NotificationType: NotificationInApp, NotificationDate: c.At,
				Status: NotificationActionCreated, CC: normAddrs(n.CC), BCC: normAddrs(n.BCC), Subject: n.Subject,
				Text: n.Body, UserID: c.User, InsertedDate: c.At}
			if err := putNotification(t, c.Site, rec); err != nil {
				return err
			}
			continue
		}
		if n.NotificationType != "EMAIL" {
			continue
		}
		params, err := json.Marshal(map[string]string{"notificationType": "email", "notificationSubject": n.Subject,
			"notificationToCc": strings.Join(n.CC, ","), "notificationToBcc": strings.Join(n.BCC, ","), "notificationText": n.Body})
		if err != nil {
			return err
		}
		acts = append(acts, Action{Type: "NOTIFICATION", Parameters: params})
	}
	if len(acts) == 0 {
		return nil
	}
	if d.ArtifactOf != "" {
		var err error
		if d, err = getLiveDoc(t, c.Site, d.ArtifactOf); err != nil {
			return err
		}
	}
	if err := addActions(t, c, d, acts); err != nil {
		return err
	}
	return putDocActions(t, d)
}

func applyUpdateReview(t *tx, c *Command) (any, error) {
	p, err := decode[ReviewUpdate](c)
	if err != nil {
		return nil, err
	}
	rv, err := openReview(t, c.Site, p.DocumentID, p.ReviewID)
	if err != nil {
		return nil, err
	}
	if p.ReviewStatus != nil {
		switch *p.ReviewStatus {
		case ReviewPending:
			if rv.Decisions > 0 {
				return nil, Invalid("reviewStatus", "a review with decisions cannot go back to PENDING")
			}
		case ReviewInProgress, ReviewCancelled, ReviewSuperseded:
		case ReviewCompleted:
			return nil, Invalid("reviewStatus", "a review is COMPLETED by its decisions")
		default:
			return nil, Invalid("reviewStatus", "invalid 'reviewStatus'")
		}
		rv.ReviewStatus = *p.ReviewStatus
	}
	if p.RequiredDecisions != nil {
		if err := checkRequiredDecisions(*p.RequiredDecisions); err != nil {
			return nil, err
		}
		rv.RequiredDecisions = *p.RequiredDecisions
		if !reviewClosed(rv.ReviewStatus) && rv.Decisions >= rv.RequiredDecisions {
			rv.ReviewStatus = ReviewCompleted
		}
	}
	if p.Comments != nil {
		rv.Comments = *p.Comments
	}
	rv.LastModifiedDate = c.At
	return nil, t.setJSON(reviewKey(c.Site, rv.DocumentID, rv.ReviewID), rv)
}

// applyAddReviewDecision records a decision and moves the review on:
// IN_PROGRESS after the first, COMPLETED when requiredDecisions is met.
// A review that is no longer open refuses it with 409; this is decided
// here, in the transaction, so concurrent decisions cannot both pass.
func applyAddReviewDecision(t *tx, c *Command) (any, error) {
	p, err := decode[ReviewDecision](c)
	if err != nil {
		return nil, err
	}
	rv, err := openReview(t, c.Site, p.DocumentID, p.ReviewID)
	if err != nil {
		return nil, err
	}
	p.UserID, p.InsertedDate = c.User, c.At
	if err := t.setJSON(reviewDecisionKey(c.Site, p.DocumentID, p.ReviewID, p.DecisionID), p); err != nil {
		return nil, err
	}
	rv.Decisions++
	rv.ReviewStatus = ReviewInProgress
	if rv.Decisions >= rv.RequiredDecisions {
		rv.ReviewStatus = ReviewCompleted
	}
	rv.LastModifiedDate = c.At
	return nil, t.setJSON(reviewKey(c.Site, rv.DocumentID, rv.ReviewID), rv)
}

// openReview reads a review that still takes changes and decisions:
// 404 when it or its live document is gone, 409 when it is closed.
func openReview(t *tx, site, doc, id string) (*Review, error) {
	if _, err := getLiveDoc(t, site, doc); err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	} else if err != nil {
		return nil, reviewNotFound(id) // the document went (or is in the trash) meanwhile
	}
	var rv Review
	if err := t.getJSON(reviewKey(site, doc, id), &rv); err != nil {
		if errors.Is(err, ErrNotFound) {
			return nil, reviewNotFound(id)
		}
		return nil, err
	}
	if reviewClosed(rv.ReviewStatus) {
		return nil, &ConflictError{Msg: fmt.Sprintf("Review '%s' is %s", rv.ReviewID, rv.ReviewStatus)}
	}
	return &rv, nil
}

// supersedeReviews closes the open reviews of doc (a document or an
// artifact) as SUPERSEDED: its content changed, so what they review is no
// longer what it holds. It runs in the transaction of the change.
func supersedeReviews(t *tx, c *Command, doc string) error {
	var open []Review
	err := t.each(reviewPrefix(c.Site, doc), func(_, v []byte) error {
		var rv Review
		if err := json.Unmarshal(v, &rv); err != nil {
			return err
		}
		if !reviewClosed(rv.ReviewStatus) {
			open = append(open, rv)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := range open {
		rv := &open[i]
		rv.ReviewStatus, rv.LastModifiedDate = ReviewSuperseded, c.At
		if err := t.setJSON(reviewKey(c.Site, doc, rv.ReviewID), rv); err != nil {
			return err
		}
	}
	return nil
}

// GetReview returns one review of a document (or artifact).
func (d *DB) GetReview(site, doc, id string) (*Review, error) {
	var rv Review
	err := d.view(func(t *tx) error { return t.getJSON(reviewKey(site, doc, id), &rv) })
	if errors.Is(err, ErrNotFound) {
		return nil, reviewNotFound(id)
	}
	if err != nil {
		return nil, err
	}
	return &rv, nil
}

// Reviews lists a document's reviews by id after after.
func (d *DB) Reviews(site, doc, after string, limit int) ([]Review, string, error) {
	return listPage(d, reviewPrefix(site, doc), after, limit, func(r *Review) string { return r.ReviewID })
}

// OpenReviews pages through a site's open reviews (PENDING or
// IN_PROGRESS), in key order (reviewed document or artifact id, then
// review id), after the cursor after ("<id>/<reviewId>", a previous
// page's next). keep filters them (the caller's groups and folders). The
// scan stops once limit are kept or scan records were examined, and
// returns the cursor of the last record examined when more remain, so a
// page never costs more than scan records however few are kept.
func (d *DB) OpenReviews(site, after string, limit, scan int, keep func(*Review) bool) ([]Review, string, error) {
	prefix := []byte(pfxReview + sk(site) + "/")
	var out []Review
	var next string
	err := d.view(func(t *tx) error {
		opts := badger.DefaultIteratorOptions
		opts.Prefix = prefix
		it := t.txn.NewIterator(opts)
		defer it.Close()
		last, seen := "", 0
		for it.Seek(append(append([]byte{}, prefix...), after...)); it.ValidForPrefix(prefix); it.Next() {
			cur := string(it.Item().Key()[len(prefix):])
			if after != "" && cur <= after {
				continue
			}
			if len(out) == limit || seen == scan {
				next = last
				return nil
			}
			last, seen = cur, seen+1
			var rv Review
			if err := it.Item().Value(func(v []byte) error { return json.Unmarshal(v, &rv) }); err != nil {
				return err
			}
			if (rv.ReviewStatus == ReviewPending || rv.ReviewStatus == ReviewInProgress) && keep(&rv) {
				out = append(out, rv)
			}
		}
		return nil
	})
	return out, next, err
}

// ReviewDecisions lists a review's decisions by id after after.
func (d *DB) ReviewDecisions(site, doc, review, after string, limit int) ([]ReviewDecision, string, error) {
	return listPage(d, reviewDecisionPrefix(site, doc, review), after, limit, func(r *ReviewDecision) string { return r.DecisionID })
}
