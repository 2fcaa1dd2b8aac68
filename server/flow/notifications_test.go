package flow_test

import (
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestUserNotifications: GET /userNotifications lists the notifications
// addressed (cc or bcc) to the caller's custom:email claim, in the site
// asked for, with the action each made; the username plays no part, and
// a caller without the claim has none. GET /documents/{id}/notifications
// lists a document's records.
func TestUserNotifications(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	alice := s.TokenWithClaims("alice", map[string]any{"custom:email": "Alice@Example.com"}, "default", "finance")
	bob := s.TokenWithClaims("bob", map[string]any{"custom:email": "bob@example.com"}, "default", "finance")
	// Named like alice's address, but without the claim.
	noClaim := s.Token("alice@example.com", "default", "finance")
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			siteID := strings.TrimPrefix(site.Query, "?siteId=")
			if siteID == "" {
				siteID = "default"
			}
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/"+siteID+"/configuration", map[string]any{"notificationEmail": "dms@example.com"}, admin), http.StatusOK)
			id := servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": "notify/doc.txt", "content": "x"})
			servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+id+"/actions"+site.Query, map[string]any{"actions": []map[string]any{
				{"type": "NOTIFICATION", "parameters": map[string]any{"notificationType": "email", "notificationToCc": "alice@example.com",
					"notificationToBcc": "bob@example.com, carol@example.com", "notificationSubject": "Please sign", "notificationText": "t"}},
				{"type": "NOTIFICATION", "parameters": map[string]any{"notificationType": "email", "notificationToCc": "carol@example.com",
					"notificationSubject": "Not for alice", "notificationText": "t"}},
			}}, admin), http.StatusOK)

			r := s.Do(http.MethodGet, "/userNotifications"+site.Query, nil, alice)
			servertest.MustStatus(t, r, http.StatusOK)
			ns := quiretest.List(t, r.JSON(t), "notifications")
			if len(ns) != 1 {
				t.Fatalf("alice's notifications: %s", r.Body)
			}
			n := quiretest.Obj(t, ns[0])
			if quiretest.Str(t, n, "documentId") != id || quiretest.Str(t, n, "subject") != "Please sign" || quiretest.Str(t, n, "status") != "ACTION_CREATED" ||
				quiretest.Str(t, n, "notificationType") != "EMAIL" || quiretest.Str(t, quiretest.Obj(t, n["action"]), "type") != "NOTIFICATION" {
				t.Errorf("alice's notification %v", n)
			}
			r = s.Do(http.MethodGet, "/userNotifications"+site.Query, nil, bob)
			servertest.MustStatus(t, r, http.StatusOK)
			if ns := quiretest.List(t, r.JSON(t), "notifications"); len(ns) != 1 || !strings.Contains(string(r.Body), `"bcc":["bob@example.com","carol@example.com"]`) {
				t.Errorf("bob's (bcc) notifications: %s", r.Body)
			}
			r = s.Do(http.MethodGet, "/userNotifications"+site.Query, nil, noClaim)
			servertest.MustStatus(t, r, http.StatusOK)
			if ns := quiretest.List(t, r.JSON(t), "notifications"); len(ns) != 0 {
				t.Errorf("a caller without the claim: %s", r.Body)
			}
			d := s.Do(http.MethodGet, "/documents/"+id+"/notifications"+site.Query, nil, admin)
			servertest.MustStatus(t, d, http.StatusOK)
			if ns := quiretest.List(t, d.JSON(t), "notifications"); len(ns) != 2 || !strings.Contains(string(d.Body), `"cc":["carol@example.com"]`) {
				t.Errorf("the document's notifications: %s", d.Body)
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, "/userNotifications"+servertest.Query(site.Query, "next=bogus"), nil, alice), http.StatusBadRequest)
		})
	}
	// Each site lists its own: alice has one in each, not two in either.
	for _, site := range servertest.Sites {
		r := s.Do(http.MethodGet, "/userNotifications"+site.Query, nil, alice)
		if ns := quiretest.List(t, r.JSON(t), "notifications"); len(ns) != 1 {
			t.Errorf("%s: alice has %d notifications, want 1: %s", site.Name, len(ns), r.Body)
		}
	}
}
