package flow

import (
	"fmt"
	"net/http"
	"net/mail"
	"slices"
	"strings"
	"unicode/utf8"

	"quire/server/internal/api"
	"quire/storage"
)

// Reviews (SERVICE-SPEC.md §2.7, §3.1, §5.5, §7; storage/reviews.go;
// API.md "Reviews"). With artifactId the routes act on that artifact's
// reviews. A decision needs WRITE on the site and, when the review names
// approvalGroups, membership of one of them: one of the caller's groups
// (auth.Principal.Groups, from the token or the built-in directory) equal
// to the group name; Admins are no exception. Refusals are 401 with
// FormKiQ's "fkq access denied" message, as every other authorization
// refusal.

var reviewStatuses = []string{storage.ReviewPending, storage.ReviewInProgress, storage.ReviewCompleted, storage.ReviewCancelled, storage.ReviewSuperseded}

var reviewDecisionTypes = []string{"APPROVAL", "RECOMMENDATION", "ACKNOWLEDGMENT", "COMMENT"}

func checkReviewText(key, v string) error {
	if utf8.RuneCountInString(v) > storage.MaxReviewTextLen {
		return api.Invalid(key, fmt.Sprintf("'%s' is longer than %d characters", key, storage.MaxReviewTextLen))
	}
	return nil
}

// reviewDoc answers 404 for a document that does not exist (an artifact
// was resolved already by resolveDocument).
func (s *Handlers) reviewDoc(r *api.Request) error {
	if r.ArtifactID != "" {
		return nil
	}
	_, err := s.DB.GetDocument(r.Site, r.PathDocID())
	return err
}

func reviewJSON(rv *storage.Review) map[string]any {
	m := map[string]any{"documentId": rv.DocumentID, "reviewId": rv.ReviewID, "reviewCategory": rv.ReviewCategory,
		"reviewStatus": rv.ReviewStatus, "requiredDecisions": rv.RequiredDecisions, "userId": rv.UserID,
		"comments": rv.Comments, "insertedDate": api.FormatDate(rv.InsertedDate), "lastModifiedDate": api.FormatDate(rv.LastModifiedDate),
		"approvalGroups": rv.ApprovalGroups}
	if rv.ApprovalGroups == nil {
		m["approvalGroups"] = []string{}
	}
	if rv.ParentID != "" {
		m["documentId"], m["artifactId"] = rv.ParentID, rv.DocumentID
	}
	if rv.FollowsUpReviewID != "" {
		m["followsUpReviewId"] = rv.FollowsUpReviewID
	}
	if rv.FollowUpReviewID != "" {
		m["followUpReviewId"] = rv.FollowUpReviewID
	}
	return m
}

func decisionJSON(d *storage.ReviewDecision, parent string) map[string]any {
	m := map[string]any{"documentId": d.DocumentID, "reviewId": d.ReviewID, "decisionId": d.DecisionID, "type": d.Type,
		"decision": d.Decision, "comment": d.Comment, "userId": d.UserID, "insertedDate": api.FormatDate(d.InsertedDate)}
	if parent != "" {
		m["documentId"], m["artifactId"] = parent, d.DocumentID
	}
	return m
}

func reviewParent(r *api.Request) string {
	if r.ArtifactID != "" {
		return r.PathDocID()
	}
	return ""
}

// HandleAddReview serves POST /documents/{id}/reviews.
func (s *Handlers) HandleAddReview(r *api.Request) error {
	var in struct {
		Review *struct {
			ReviewCategory    string                       `json:"reviewCategory"`
			ReviewStatus      string                       `json:"reviewStatus"`
			RequiredDecisions *int64                       `json:"requiredDecisions"`
			ApprovalGroups    []string                     `json:"approvalGroups"`
			Notifications     []storage.ReviewNotification `json:"notifications"`
			Comments          string                       `json:"comments"`
			FollowsUpReviewID string                       `json:"followsUpReviewId"`
		} `json:"review"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if in.Review == nil {
		return api.Invalid("review", "'review' is required")
	}
	v := in.Review
	var errs []storage.ValidationItem
	add := func(k, m string) { errs = append(errs, storage.ValidationItem{Key: k, Msg: m}) }
	if strings.TrimSpace(v.ReviewCategory) == "" {
		add("reviewCategory", "'reviewCategory' is required")
	} else if utf8.RuneCountInString(v.ReviewCategory) > 255 {
		add("reviewCategory", "'reviewCategory' is longer than 255 characters")
	}
	switch {
	case v.RequiredDecisions == nil:
		add("requiredDecisions", "'requiredDecisions' is required")
	case *v.RequiredDecisions < 1 || *v.RequiredDecisions > storage.MaxRequiredDecisions:
		add("requiredDecisions", fmt.Sprintf("'requiredDecisions' must be between 1 and %d", storage.MaxRequiredDecisions))
	}
	switch v.ReviewStatus {
	case "", storage.ReviewPending, storage.ReviewInProgress:
	default:
		if slices.Contains(reviewStatuses, v.ReviewStatus) {
			add("reviewStatus", "a new review is PENDING or IN_PROGRESS")
		} else {
			add("reviewStatus", "invalid 'reviewStatus'")
		}
	}
	if len(v.ApprovalGroups) > storage.MaxReviewApprovalGroups {
		add("approvalGroups", fmt.Sprintf("at most %d 'approvalGroups'", storage.MaxReviewApprovalGroups))
	}
	for _, g := range v.ApprovalGroups {
		if strings.TrimSpace(g) == "" || len(g) > 255 {
			add("approvalGroups", "invalid approval group name")
			break
		}
	}
	if len(v.Notifications) > storage.MaxReviewNotifications {
		add("notifications", fmt.Sprintf("at most %d 'notifications'", storage.MaxReviewNotifications))
	}
	for i, n := range v.Notifications {
		k := fmt.Sprintf("notifications[%d]", i)
		if n.NotificationType != "EMAIL" && n.NotificationType != "IN_APP" {
			add(k+".notificationType", "'notificationType' must be EMAIL or IN_APP")
		}
		if strings.TrimSpace(n.Subject) == "" {
			add(k+".subject", "'subject' is required")
		}
		if strings.TrimSpace(n.Body) == "" {
			add(k+".body", "'body' is required")
		}
		if checkReviewText("body", n.Body) != nil || checkReviewText("subject", n.Subject) != nil {
			add(k, fmt.Sprintf("'subject' and 'body' are at most %d characters", storage.MaxReviewTextLen))
		}
		for _, l := range []struct {
			key   string
			addrs []string
		}{{"cc", n.CC}, {"bcc", n.BCC}} {
			if l.addrs != nil && len(l.addrs) == 0 {
				add(k+"."+l.key, fmt.Sprintf("'%s' needs at least one address", l.key))
			}
			if len(l.addrs) > 50 {
				add(k+"."+l.key, fmt.Sprintf("'%s' has more than 50 addresses", l.key))
			}
			for _, a := range l.addrs {
				if _, err := mail.ParseAddress(a); err != nil {
					add(k+"."+l.key, fmt.Sprintf("invalid address '%s'", a))
					break
				}
			}
		}
	}
	if err := checkReviewText("comments", v.Comments); err != nil {
		add("comments", err.Error())
	}
	if len(v.FollowsUpReviewID) > storage.MaxKeyBytes || !utf8.ValidString(v.FollowsUpReviewID) {
		add("followsUpReviewId", "invalid 'followsUpReviewId'")
	}
	if slices.ContainsFunc(v.Notifications, func(n storage.ReviewNotification) bool { return n.NotificationType == "EMAIL" }) &&
		!s.NotificationConfigured(r.Site) {
		add("notifications", "notificationEmail is not configured")
	}
	for i, n := range v.Notifications {
		if n.NotificationType == "EMAIL" && len(n.CC) == 0 && len(n.BCC) == 0 {
			add(fmt.Sprintf("notifications[%d].cc", i), "an EMAIL notification needs 'cc' or 'bcc'")
		}
		// An IN_APP block is delivered to its addressees' /userNotifications:
		// without any it would reach nobody.
		if n.NotificationType == "IN_APP" && n.CC == nil && n.BCC == nil {
			add(fmt.Sprintf("notifications[%d].cc", i), "an IN_APP notification needs 'cc' or 'bcc'")
		}
	}
	if len(errs) > 0 {
		return &storage.ValidationError{Items: errs}
	}
	if err := s.reviewDoc(r); err != nil {
		return err
	}
	rv := storage.Review{DocumentID: r.DocID(), ParentID: reviewParent(r), ReviewID: r.NewID(),
		ReviewCategory: v.ReviewCategory, ReviewStatus: v.ReviewStatus, RequiredDecisions: *v.RequiredDecisions,
		ApprovalGroups: v.ApprovalGroups, Notifications: v.Notifications, Comments: v.Comments, FollowsUpReviewID: v.FollowsUpReviewID}
	if _, err := s.Apply(r, storage.OpAddReview, rv); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"reviewId": rv.ReviewID})
}

// HandleGetReviews serves GET /documents/{id}/reviews.
func (s *Handlers) HandleGetReviews(r *api.Request) error {
	if err := s.reviewDoc(r); err != nil {
		return err
	}
	return api.KeyPage(r, "rv", "reviews", func(after string, limit int) ([]storage.Review, string, error) {
		return s.DB.Reviews(r.Site, r.DocID(), after, limit)
	}, reviewJSON)
}

// HandleGetReview serves GET /documents/{id}/reviews/{reviewId}.
func (s *Handlers) HandleGetReview(r *api.Request) error {
	rv, err := s.DB.GetReview(r.Site, r.DocID(), api.PathParam(r, "reviewId"))
	if err != nil {
		return err
	}
	return r.JSON(map[string]any{"review": reviewJSON(rv)})
}

// HandleUpdateReview serves PATCH /documents/{id}/reviews/{reviewId}.
func (s *Handlers) HandleUpdateReview(r *api.Request) error {
	var in struct {
		Review *struct {
			ReviewStatus      *string `json:"reviewStatus"`
			RequiredDecisions *int64  `json:"requiredDecisions"`
			Comments          *string `json:"comments"`
		} `json:"review"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if in.Review == nil {
		return api.Invalid("review", "'review' is required")
	}
	v := in.Review
	if v.ReviewStatus != nil && !slices.Contains(reviewStatuses, *v.ReviewStatus) {
		return api.Invalid("reviewStatus", "invalid 'reviewStatus'")
	}
	if v.RequiredDecisions != nil && (*v.RequiredDecisions < 1 || *v.RequiredDecisions > storage.MaxRequiredDecisions) {
		return api.Invalid("requiredDecisions", fmt.Sprintf("'requiredDecisions' must be between 1 and %d", storage.MaxRequiredDecisions))
	}
	if v.Comments != nil {
		if err := checkReviewText("comments", *v.Comments); err != nil {
			return err
		}
	}
	u := storage.ReviewUpdate{DocumentID: r.DocID(), ReviewID: api.PathParam(r, "reviewId"), ReviewStatus: v.ReviewStatus,
		RequiredDecisions: v.RequiredDecisions, Comments: v.Comments}
	if _, err := s.Apply(r, storage.OpUpdateReview, u); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: "Review updated"})
}

// HandleGetReviewDecisions serves GET /documents/{id}/reviews/{reviewId}/decisions.
func (s *Handlers) HandleGetReviewDecisions(r *api.Request) error {
	id := api.PathParam(r, "reviewId")
	if _, err := s.DB.GetReview(r.Site, r.DocID(), id); err != nil {
		return err
	}
	parent := reviewParent(r)
	return api.KeyPage(r, "rd", "decisions", func(after string, limit int) ([]storage.ReviewDecision, string, error) {
		return s.DB.ReviewDecisions(r.Site, r.DocID(), id, after, limit)
	}, func(d *storage.ReviewDecision) map[string]any { return decisionJSON(d, parent) })
}

// HandleAddReviewDecision serves POST /documents/{id}/reviews/{reviewId}/decisions.
func (s *Handlers) HandleAddReviewDecision(r *api.Request) error {
	var in struct {
		Decision *struct {
			Type     string `json:"type"`
			Decision string `json:"decision"`
			Comment  string `json:"comment"`
		} `json:"decision"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	if in.Decision == nil {
		return api.Invalid("decision", "'decision' is required")
	}
	v := in.Decision
	switch {
	case v.Type == "":
		return api.Invalid("type", "'type' is required")
	case !slices.Contains(reviewDecisionTypes, v.Type):
		return api.Invalid("type", "invalid 'type', use APPROVAL, RECOMMENDATION, ACKNOWLEDGMENT or COMMENT")
	case utf8.RuneCountInString(v.Decision) > 255:
		return api.Invalid("decision", "'decision' is longer than 255 characters")
	}
	if err := checkReviewText("comment", v.Comment); err != nil {
		return err
	}
	id := api.PathParam(r, "reviewId")
	rv, err := s.DB.GetReview(r.Site, r.DocID(), id)
	if err != nil {
		return err
	}
	if len(rv.ApprovalGroups) > 0 && !slices.ContainsFunc(rv.ApprovalGroups, func(g string) bool { return slices.Contains(r.Principal.Groups, g) }) {
		return api.ErrStatus(http.StatusUnauthorized, "fkq access denied (approval group required: "+strings.Join(rv.ApprovalGroups, ",")+")")
	}
	d := storage.ReviewDecision{DocumentID: r.DocID(), ReviewID: id, DecisionID: r.NewID(), Type: v.Type,
		Decision: v.Decision, Comment: v.Comment}
	if _, err := s.Apply(r, storage.OpAddReviewDecision, d); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"decisionId": d.DecisionID})
}

// openReviewScan bounds the records GET /reviews examines for one page.
const openReviewScan = 10000

// HandleGetOpenReviews serves GET /reviews (Quire's; the console's inbox):
// the site's open reviews the caller could decide (no approval groups, or
// one of the caller's groups among them) on documents the caller may read
// (folder permissions), with the document's path. Paged by `next`.
func (s *Handlers) HandleGetOpenReviews(r *api.Request) error {
	limit, err := api.ListLimit(r)
	if err != nil {
		return err
	}
	after, err := api.ParseKeyToken(r, "rvo")
	if err != nil {
		return err
	}
	paths := map[string]string{}
	items, next, err := s.DB.OpenReviews(r.Site, after, limit, openReviewScan, func(rv *storage.Review) bool {
		if len(rv.ApprovalGroups) > 0 && !slices.ContainsFunc(rv.ApprovalGroups, func(g string) bool { return slices.Contains(r.Principal.Groups, g) }) {
			return false
		}
		doc := rv.DocumentID
		if rv.ParentID != "" {
			doc = rv.ParentID
		}
		d, err := s.DB.GetDocument(r.Site, doc)
		if err != nil || !s.DocAllows(r, d.Path, storage.FolderRead) {
			return false
		}
		paths[rv.DocumentID+"/"+rv.ReviewID] = d.Path
		return true
	})
	if err != nil {
		return err
	}
	list := make([]map[string]any, 0, len(items))
	for i := range items {
		m := reviewJSON(&items[i])
		m["path"] = paths[items[i].DocumentID+"/"+items[i].ReviewID]
		list = append(list, m)
	}
	out := map[string]any{"reviews": list}
	if next != "" {
		out["next"] = api.KeyToken("rvo", next)
	}
	return r.JSON(out)
}
