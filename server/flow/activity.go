package flow

import (
	"fmt"
	"net/http"
	"strings"

	"quire/auth"
	"quire/server/internal/api"
	"quire/storage"
)

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
		"type": a.Type, "insertedDate": api.FormatDate(a.InsertedDate), "userId": a.UserID,
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

// HandleGetDocumentActivities serves GET /documents/{id}/userActivities
// (with artifactId: the artifact's own trail).
func (s *Handlers) HandleGetDocumentActivities(r *api.Request) error {
	if _, err := s.DB.GetDocumentAny(r.Site, r.DocID()); err != nil {
		return err
	}
	return api.KeyPage(r, "activity", "userActivities", func(after string, limit int) ([]storage.Activity, string, error) {
		return s.DB.DocumentActivities(r.Site, r.DocID(), after, limit)
	}, activityJSON)
}

// activitiesUser is whose activities a request reads: the caller's, or
// with userId another user's (Admins and the site's governors only).
func activitiesUser(r *api.Request) (string, error) {
	user := r.User()
	if u := r.Query("userId"); u != "" && u != user {
		if !r.Principal.Admin && !r.Principal.Can(r.Site, auth.PermGovern) {
			return "", api.ErrStatus(http.StatusUnauthorized, "fkq access denied (GOVERN permission required to read another user's activities)")
		}
		if !api.ValidUserID(u) {
			return "", storage.Invalid("userId", "invalid 'userId'")
		}
		user = u
	}
	return user, nil
}

// HandleGetUserActivities serves GET /userActivities: the caller's
// changes in the site, or with userId another user's (Admins and the
// site's governors only).
func (s *Handlers) HandleGetUserActivities(r *api.Request) error {
	user, err := activitiesUser(r)
	if err != nil {
		return err
	}
	return api.KeyPage(r, "useractivity", "userActivities", func(after string, limit int) ([]storage.Activity, string, error) {
		return s.DB.UserActivities(r.Site, user, after, limit)
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
func (s *Handlers) activityVisible(r *api.Request, a *storage.Activity) bool {
	if !s.FolderRestricted(r) {
		return true
	}
	if a.Path != "" && !s.DocAllows(r, a.Path, storage.FolderRead) {
		return false
	}
	if a.DocumentID == "" {
		return true
	}
	d, err := s.DB.GetDocumentAny(r.Site, a.DocumentID)
	if err != nil {
		return true // gone: the recorded path decided
	}
	if d.ArtifactOf != "" {
		if d, err = s.DB.GetDocumentAny(r.Site, d.ArtifactOf); err != nil {
			return true
		}
	}
	return s.DocAllows(r, d.Path, storage.FolderRead)
}

// activityResources are the filters of FormKiQ's GET /activities that
// name a resource whose changes Quire does not record (it records
// document changes): each is refused with 400, never ignored.
var activityResources = []struct{ param, what string }{
	{"entityTypeId", "entity types"}, {"namespace", "entity types"}, {"entityId", "entities"},
	{"rulesetId", "rulesets"}, {"ruleId", "rules"}, {"workflowId", "workflows"}, {"queueId", "queues"},
	{"webhookId", "webhooks"}, {"locale", "locales"}, {"attributeKey", "attributes"}, {"schema", "schemas"},
	{"classificationId", "classifications"}, {"mappingId", "mappings"}, {"apiKey", "API keys"},
	{"controlPolicy", "control policies"},
}

// HandleGetActivities serves FormKiQ's GET /activities
// (GetResourceActivities) over Quire's trail of document changes: with
// documentId (and artifactId) a document's trail, as GET
// /documents/{id}/userActivities; otherwise the caller's or, with userId,
// another user's, as GET /userActivities. start and end bound
// insertedDate; sort is DESC (newest first) only.
func (s *Handlers) HandleGetActivities(r *api.Request) error {
	for _, res := range activityResources {
		if r.Query(res.param) != "" {
			return api.Invalid(res.param, fmt.Sprintf("activities of %s are not recorded: Quire records document changes (use documentId or userId)", res.what))
		}
	}
	if v := strings.ToUpper(r.Query("sort")); v != "" && v != "DESC" {
		return api.Invalid("sort", "invalid 'sort': activities are listed newest first (DESC)")
	}
	start, err := api.ParseDateParam(r, "start", false)
	if err != nil {
		return err
	}
	end, err := api.ParseDateParam(r, "end", true)
	if err != nil {
		return err
	}
	inRange := func(a *storage.Activity) bool {
		return (start.IsZero() || !a.InsertedDate.Before(start)) && (end.IsZero() || a.InsertedDate.Before(end))
	}
	docID, art := strings.Clone(r.Query("documentId")), strings.Clone(r.Query("artifactId"))
	if docID == "" && art != "" {
		return api.Invalid("artifactId", "'artifactId' needs 'documentId'")
	}
	if docID != "" {
		if r.Query("userId") != "" {
			return api.Invalid("userId", "give 'documentId' or 'userId', not both")
		}
		d, err := s.DB.GetDocumentAny(r.Site, docID)
		if api.IsNotFound(err) || (err == nil && d.ArtifactOf != "") {
			return &storage.NotFoundError{Msg: fmt.Sprintf("Document %s not found.", docID)}
		}
		if err != nil {
			return err
		}
		if err := s.RequireDocPath(r, d.Path, storage.FolderRead); err != nil {
			return err
		}
		rec := d.DocumentID
		if art != "" {
			a, err := s.DB.GetArtifact(r.Site, d.DocumentID, art)
			if err != nil {
				return err
			}
			rec = a.DocumentID
		}
		return api.KeyPage(r, "activity", "activities", func(after string, limit int) ([]storage.Activity, string, error) {
			return s.DB.DocumentActivities(r.Site, rec, after, limit)
		}, func(a *storage.Activity) map[string]any {
			if !inRange(a) {
				return nil
			}
			return resourceActivityJSON(a)
		})
	}
	user, err := activitiesUser(r)
	if err != nil {
		return err
	}
	return api.KeyPage(r, "useractivity", "activities", func(after string, limit int) ([]storage.Activity, string, error) {
		return s.DB.UserActivities(r.Site, user, after, limit)
	}, func(a *storage.Activity) map[string]any {
		if !inRange(a) || !s.activityVisible(r, a) {
			return nil
		}
		return resourceActivityJSON(a)
	})
}

// resourceActivityJSON is an entry as FormKiQ's Activity: resource
// "documents", status COMPLETE (only changes that happened are
// recorded), delegation {usedByUserId, reason} for a delegated change,
// beside Quire's fields of activityJSON.
func resourceActivityJSON(a *storage.Activity) map[string]any {
	m := activityJSON(a)
	m["resource"], m["status"] = "documents", "COMPLETE"
	if a.Source == storage.SourceDelegation {
		m["delegation"] = map[string]any{"usedByUserId": a.Actor, "reason": a.Reason}
	}
	return m
}
