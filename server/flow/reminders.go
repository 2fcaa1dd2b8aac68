package flow

import (
	"strconv"
	"strings"

	"quire/server/internal/api"
	"quire/storage"
)

// notificationJSON is a record as FormKiQ's DocumentNotification, with
// Quire's documentId, siteId and subject beside.
func notificationJSON(site string) func(n *storage.DocNotification) map[string]any {
	return func(n *storage.DocNotification) map[string]any {
		m := map[string]any{
			"documentId": n.DocumentID, "siteId": site, "notificationType": n.NotificationType,
			"notificationDate": api.FormatDate(n.NotificationDate), "status": n.Status,
			"cc": api.NonNil(n.CC), "bcc": api.NonNil(n.BCC), "insertedDate": api.FormatDate(n.InsertedDate),
		}
		opt := func(k, v string) {
			if v != "" {
				m[k] = v
			}
		}
		opt("entityTypeId", n.EntityTypeID)
		opt("entityId", n.EntityID)
		opt("actionSk", n.ActionSk)
		opt("subject", n.Subject)
		opt("userId", n.UserID)
		if n.NotificationType == storage.NotificationInApp {
			opt("body", n.Text) // an in-app notification is read here, not mailed
		}
		return m
	}
}

// HandleGetDocumentNotifications serves GET /documents/{id}/notifications:
// the document's notification records, oldest first.
func (s *Handlers) HandleGetDocumentNotifications(r *api.Request) error {
	d, err := s.DB.GetDocument(r.Site, r.DocID())
	if err != nil {
		return err
	}
	return api.KeyPage(r, "notification", "notifications", func(after string, limit int) ([]storage.DocNotification, string, error) {
		return s.DB.DocumentNotifications(r.Site, d.DocumentID, after, limit)
	}, notificationJSON(r.Site))
}

// HandleGetUserNotifications serves GET /userNotifications: the
// notifications of the site addressed (cc or bcc) to the address in the
// caller's custom:email claim, newest first, with the action each made.
// A caller without the claim has none. A notification names its document
// (id, subject): those of documents in folders the caller cannot READ are
// left out, as GET /userActivities leaves out their activities.
func (s *Handlers) HandleGetUserNotifications(r *api.Request) error {
	addr, _ := r.Principal.Claims["custom:email"].(string)
	if addr == "" && r.Principal.DirectoryUser() {
		// A user of the built-in directory: its token carries the address
		// an Admin gave the user as "email" (auth.SignUser).
		addr, _ = r.Principal.Claims["email"].(string)
	}
	addr = strings.ToLower(strings.TrimSpace(addr))
	conv := notificationJSON(r.Site)
	return api.KeyPage(r, "usernotification", "notifications", func(after string, limit int) ([]storage.DocNotification, string, error) {
		if addr == "" || len(addr) > 320 {
			return nil, "", nil
		}
		return s.DB.UserNotifications(addr, r.Site, after, limit)
	}, func(n *storage.DocNotification) map[string]any {
		if !s.notificationVisible(r, n) {
			return nil
		}
		m := conv(n)
		if n.ActionSk != "" {
			if seq, err := strconv.Atoi(n.ActionSk); err != nil {
			} else if a, err := s.DB.GetAction(r.Site, storage.ActionRef{DocumentID: n.DocumentID, Seq: seq}); err == nil {
				m["action"] = map[string]any{"type": a.Type, "status": a.Status}
			}
		}
		return m
	})
}

// notificationVisible reports whether the caller may see a notification:
// READ on its document's folder (an artifact's: its parent's). Where
// folder permissions may hide documents, one whose document is gone is
// left out too: nothing tells which folder it was in.
func (s *Handlers) notificationVisible(r *api.Request, n *storage.DocNotification) bool {
	if n.DocumentID == "" || !s.FolderRestricted(r) {
		return true
	}
	d, err := s.DB.GetDocumentAny(r.Site, n.DocumentID)
	if err != nil {
		return false
	}
	if d.ArtifactOf != "" {
		if d, err = s.DB.GetDocumentAny(r.Site, d.ArtifactOf); err != nil {
			return false
		}
	}
	return s.DocAllows(r, d.Path, storage.FolderRead)
}
