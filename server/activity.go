package server

import (
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"quire/storage"
)

// The activity trail (API.md "Activity trail"; storage/activity.go):
// GET /documents/{id}/userActivities and GET /userActivities.

// via is where a request's commands come from, stored with each command.
func via(r *reqCtx) *storage.Via {
	v := &storage.Via{RequestID: requestID(r.Ctx), Source: storage.SourceUser}
	switch {
	case r.public:
		v.Source = storage.SourcePublic
	case r.p == nil:
	case r.p.Delegation != nil:
		v.Source, v.Actor, v.Reason = storage.SourceDelegation, r.p.Delegation.Actor, r.p.Delegation.Reason
	case r.p.APIKeySite != "":
		v.Source, v.Actor = storage.SourceAPIKey, r.p.APIKeyName
	case strings.HasPrefix(r.user(), "webhook/"):
		v.Source = storage.SourceWebhook
	}
	return v
}

// activityJSON is an entry as FormKiQ's UserActivity, with Quire's
// fields (op, source, requestId, actor, reason, changed) beside.
func activityJSON(a *storage.Activity) map[string]any {
	doc := map[string]any{"documentId": a.DocumentID}
	if a.Path != "" {
		doc["path"] = a.Path
	}
	if a.ArtifactID != "" {
		doc["artifactId"] = a.ArtifactID
	}
	m := map[string]any{
		"type": a.Type, "insertedDate": formatDate(a.InsertedDate), "userId": a.UserID,
		"document": doc, "documentId": a.DocumentID, "op": a.Op, "source": a.Source,
	}
	opt := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	opt("artifactId", a.ArtifactID)
	opt("requestId", a.RequestID)
	opt("actor", a.Actor)
	opt("reason", a.Reason)
	if len(a.Changed) > 0 {
		m["changed"] = a.Changed
	}
	if len(a.Changes) > 0 {
		m["changes"] = a.Changes
	}
	return m
}

// handleGetDocumentActivities serves GET /documents/{id}/userActivities
// (with artifactId: the artifact's own trail).
func (s *Server) handleGetDocumentActivities(r *reqCtx) error {
	if _, err := s.db.GetDocumentAny(r.site, r.docID()); err != nil {
		return err
	}
	return keyPage(r, "activity", "userActivities", func(after string, limit int) ([]storage.Activity, string, error) {
		return s.db.DocumentActivities(r.site, r.docID(), after, limit)
	}, activityJSON)
}

// handleGetUserActivities serves GET /userActivities: the caller's
// changes in the site, or with userId another user's (Admins and the
// site's governors only).
func (s *Server) handleGetUserActivities(r *reqCtx) error {
	user := r.user()
	if u := r.Query("userId"); u != "" && u != user {
		if !r.p.Admin && !r.p.Can(r.site, govern) {
			return errStatus(http.StatusUnauthorized, "fkq access denied (GOVERN permission required to read another user's activities)")
		}
		if !validUserID(u) {
			return storage.Invalid("userId", "invalid 'userId'")
		}
		user = u
	}
	return keyPage(r, "useractivity", "userActivities", func(after string, limit int) ([]storage.Activity, string, error) {
		return s.db.UserActivities(r.site, user, after, limit)
	}, func(a *storage.Activity) map[string]any {
		if !s.activityVisible(r, a) {
			return nil
		}
		return activityJSON(a)
	})
}

// activityVisible reports whether the caller may see an activity: READ on
// the folder its document was in then and is in now (issue 29: an API
// key acts as the user who created it, and that user's trail names
// documents of folders the key cannot read).
func (s *Server) activityVisible(r *reqCtx, a *storage.Activity) bool {
	if !s.folderRestricted(r) {
		return true
	}
	if a.Path != "" && !s.docAllows(r, a.Path, storage.FolderRead) {
		return false
	}
	if a.DocumentID == "" {
		return true
	}
	d, err := s.db.GetDocumentAny(r.site, a.DocumentID)
	if err != nil {
		return true // gone: the recorded path decided
	}
	if d.ArtifactOf != "" {
		if d, err = s.db.GetDocumentAny(r.site, d.ArtifactOf); err != nil {
			return true
		}
	}
	return s.docAllows(r, d.Path, storage.FolderRead)
}

// validUserID accepts a user name as a query parameter: 1 to 256 bytes of
// valid UTF-8 without control characters.
func validUserID(u string) bool {
	if u == "" || len(u) > 256 || !utf8.ValidString(u) {
		return false
	}
	return !strings.ContainsFunc(u, unicode.IsControl)
}
