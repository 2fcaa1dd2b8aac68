package server_test

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server"
	"quire/server/internal/servertest"
)

// The permission matrix (issue 29) is generated from the route table:
// every route either touches documents, and then has rows here that a
// set of callers without the rights must be refused on (and nothing
// written), or is listed in notDocumentRoutes with the reason. A new route
// in neither fails TestPermissionMatrix_Classified.
//
// Routes with a {documentId} path parameter get a row by themselves (the
// folder permission their method implies, or docRouteFolderPerm); routes
// that name documents elsewhere (body, query, an envelope, a folder) have
// explicit rows in bodyDocRows; routes that list or search documents are
// in filterDocRoutes: they must not show the locked document to a caller
// without READ on its folder.

// docRouteFolderPerm overrides the folder permission a {documentId}
// route needs when its method does not say it.
var docRouteFolderPerm = map[string]string{
	"GET /documents/:documentId/upload":                                         "WRITE", // replaces content
	"POST /esignature/:provider/:documentId/envelopes/:envelopeId/views/sender": "READ",
	"POST /documents/:documentId/fulltext":                                      "WRITE",
}

// matrixRow is one request that names the locked document (or its
// folder) other than by the {documentId} path parameter.
type matrixRow struct {
	name  string
	path  string // <open>, <locked>, <lockedPdf>, <env>, <seq> are replaced
	body  string
	perm  string // the folder permission it needs: READ, WRITE or DELETE
	after func(t *testing.T, m *matrix, caller string)
}

// bodyDocRows: routes that name a document in their body or query.
var bodyDocRows = map[string][]matrixRow{
	"POST /documents/:documentId/generate": {
		{name: "data source", path: "/documents/<open>/generate", body: `{"path":"pub/out.docx","datasources":[{"documentId":"<locked>"}]}`, perm: "READ"},
		{name: "inserted document", path: "/documents/<open>/generate", body: `{"outputType":"PDF","path":"pub/out.pdf","insertDocuments":[{"documentId":"<lockedPdf>","position":"APPEND"}]}`, perm: "READ"},
		{name: "saveAsDocumentId", path: "/documents/<open>/generate", body: `{"saveAsDocumentId":"<locked>"}`, perm: "WRITE"},
		{name: "path", path: "/documents/<open>/generate", body: `{"path":"f/planted.docx"}`, perm: "WRITE"},
	},
	"GET /activities": {
		{name: "documentId", path: "/activities?documentId=<locked>", perm: "READ"},
	},
	"POST /documents/compress": {
		{name: "documentIds", path: "/documents/compress", body: `{"documentIds":["<locked>"]}`, perm: "READ"},
		{name: "documents", path: "/documents/compress", body: `{"documents":[{"documentId":"<locked>"}]}`, perm: "READ"},
	},
	"POST /shortlinks": {
		{name: "targetUrl", path: "/shortlinks", body: `{"targetUrl":"/documents/<locked>","slug":"matrix"}`, perm: "READ",
			after: func(t *testing.T, m *matrix, caller string) {
				if r := m.s.Do(http.MethodGet, "/s/matrix", nil, ""); r.Status < 400 {
					t.Errorf("%s: a short link to the locked document was made: %d", caller, r.Status)
				}
			}},
	},
	"DELETE /shortlinks/:slug": {
		// A link to a document is deleted with the right that made it:
		// READ on the document's folder (API.md "Short links").
		{name: "document link", path: "/shortlinks/matrixdel", perm: "READ",
			after: func(t *testing.T, m *matrix, caller string) {
				if r := m.s.Do(http.MethodGet, "/s/matrixdel", nil, ""); r.Status >= 400 {
					t.Errorf("%s: the short link to the locked document stopped working: %d", caller, r.Status)
				}
			}},
	},
	"POST /sites/:siteId/sequences/:sequenceId/next": {
		{name: "documentId", path: "/sites/default/sequences/<seq>/next", body: `{"documentId":"<locked>"}`, perm: "WRITE"},
	},
	"POST /documents": {
		{name: "path", path: "/documents", body: `{"path":"f/planted.txt","content":"x"}`, perm: "WRITE"},
		{name: "artifact", path: "/documents", body: `{"artifacts":true,"documentId":"<locked>","content":"x","contentType":"text/plain"}`, perm: "WRITE"},
	},
	"POST /folders": {
		{name: "in a locked folder", path: "/folders", body: `{"path":"f/planted-folder"}`, perm: "WRITE"},
	},
	"POST /documents/upload": {
		{name: "path", path: "/documents/upload", body: `{"path":"f/planted-upload.txt"}`, perm: "WRITE"},
	},
	"GET /documents/upload": {
		{name: "path", path: "/documents/upload?path=f/planted-get.txt", perm: "WRITE"},
	},
	"POST /esignature/:provider/events": {
		{name: "envelopeId", path: "/esignature/local/events", body: `{"envelopeId":"<env>","event":"envelope-voided","reason":"x"}`, perm: "WRITE"},
	},
	"POST /folders/:indexKey/moves": {
		{name: "folder", path: "/folders/<fIndexKey>/moves", body: `{"path":"pub/moved"}`, perm: "WRITE"},
	},
	"POST /indices/:indexType/move": {
		{name: "folder", path: "/indices/folder/move", body: `{"source":"f/","target":"pub/"}`, perm: "WRITE"},
	},
	"DELETE /folders/:indexKey": {
		{name: "folder", path: "/folders/<fIndexKey>", perm: "DELETE"},
		{name: "empty subfolder", path: "/folders/<subIndexKey>", perm: "DELETE"},
	},
	"DELETE /indices/:indexType/:indexKey": {
		{name: "folder", path: "/indices/folder/<fIndexKey>", perm: "DELETE"},
		{name: "empty subfolder", path: "/indices/folder/<subIndexKey>", perm: "DELETE"},
	},
}

// filterDocRoutes list or search documents: the locked document (or the
// one hide names) must not be in their answer, and nothing changes.
var filterDocRoutes = map[string]struct{ path, body, hide string }{
	"GET /documents":                 {"/documents", "", ""},
	"GET /folders":                   {"/folders?path=f", "", ""},
	"POST /search":                   {"/search", `{"query":{"documentIds":["<locked>"]}}`, ""},
	"POST /searchFulltext":           {"/searchFulltext", `{"query":{"text":"lockedcontent"}}`, ""},
	"POST /queryFulltext":            {"/queryFulltext", `{"query":{"match":{"content":"lockedcontent"}}}`, ""},
	"POST /indices/search":           {"/indices/search", `{"indexType":"folder","indexKey":"f"}`, ""},
	"GET /queues/:queueId/documents": {"/queues/<queue>/documents", "", ""},
	"PATCH /documents/tags":          {"/documents/tags", `{"match":{"tag":{"key":"t","eq":"v"}},"update":{"tags":[{"key":"stolen","value":"x"}]}}`, ""},
	// A batch names the document it leaves out (its errors); it must not
	// be among those tagged.
	"POST /documents/tags/batch": {"/documents/tags/batch", `{"documentIds":["<locked>"],"tags":[{"key":"stolen","value":"x"}]}`, `"documentIds":["<locked>"`},
	"GET /userActivities":        {"/userActivities", "", ""},
	"GET /reviews":               {"/reviews", "", ""},
	// The fixture document is in the fixture workflow (routeFixtures).
	"GET /workflows/:workflowId/documents": {"/workflows/<workflowId>/documents", "", ""},
	// The callers' custom:email is in the cc of a notification of a
	// document in the locked folder nf.
	"GET /userNotifications": {"/userNotifications", "", "<notified>"},
}

// notDocumentRoutes touch no document a caller names, with the reason.
var notDocumentRoutes = map[string]string{}

func init() {
	for _, r := range []string{
		"GET /healthz", "GET /readyz", "GET /metrics", "GET /version", "GET /sites", "GET /system/configuration",
		"GET /system/inferenceModels",
	} {
		notDocumentRoutes[r] = "server facts, no document"
	}
	for _, r := range []string{
		"PUT /uploads/:siteId/:documentId", "PUT /uploads/examine/:siteId/:id", "GET /archives/:siteId/:archiveId",
		"GET /downloads/:siteId/:documentId", "HEAD /downloads/:siteId/:documentId", "GET /published/:siteId/:documentId",
		"GET /s/:slug", "GET /esign/:token", "POST /esign/:token", "GET /esign/:token/document", "GET /esign-status/:envelopeId",
	} {
		notDocumentRoutes[r] = "no token: the URL's signature, slug or signing token is the credential, minted by a route of the matrix (url, upload, compress, publication, shortlink, envelope) after its checks"
	}
	for _, r := range []string{
		"POST /login", "POST /login/refresh", "POST /respondToAuthChallenge", "POST /changePassword", "POST /forgotPassword",
		"POST /forgotPasswordConfirm", "POST /confirmRegistration", "POST /cluster/join", "POST /login/logout",
		"GET /login/oidc/info", "GET /login/oidc", "GET /login/oidc/callback",
	} {
		notDocumentRoutes[r] = "sign-in and cluster join: no document"
	}
	for _, r := range []string{"GET /branding/logo", "GET /sites/:siteId/branding/logo"} {
		notDocumentRoutes[r] = "no token: a branding logo, served only for the hash of the stored logo (v=), no document"
	}
	for _, r := range []string{"GET /console/*", "HEAD /console/*"} {
		notDocumentRoutes[r] = "the web console's embedded files: no document"
	}
	for _, r := range []string{"GET /sites/:siteId/savedSearches", "POST /sites/:siteId/savedSearches", "DELETE /sites/:siteId/savedSearches/:savedSearchId"} {
		notDocumentRoutes[r] = "saved searches: a user's named queries, no document (running one is /queryFulltext, in the matrix)"
	}
	notDocumentRoutes["POST /public/documents"] = "anonymous intake where a governor enables it: adds new documents only, at the site configuration's folder"
	notDocumentRoutes["POST /public/webhooks/*"] = "anonymous webhook intake (webhooks.public): a new document under webhooks/, checked there"
	for _, r := range []string{
		"GET /sites/:siteId/intakeProfiles", "POST /sites/:siteId/intakeProfiles", "GET /sites/:siteId/intakeProfiles/:name",
		"PUT /sites/:siteId/intakeProfiles/:name", "DELETE /sites/:siteId/intakeProfiles/:name", "GET /sites/:siteId/intakeProfiles/:name/errors",
		"POST /sites/:siteId/intakeProfiles/:name/test",
	} {
		notDocumentRoutes[r] = "intake profiles: site governors' settings, no document"
	}
	notDocumentRoutes["POST /sites/:siteId/intake/:name"] = "scanner intake: new documents only, at the path a governor's profile sets, WRITE on that folder checked for the profile's identity (intake.go)"
	notDocumentRoutes["POST /private/webhooks/*"] = "webhook intake: a new document under webhooks/<id>, WRITE checked on that folder (webhooks.go)"
	for _, r := range []string{
		"GET /system/backup", "GET /cluster/status", "GET /system/health", "POST /system/mail/test", "DELETE /cluster/nodes/:nodeId", "POST /cluster/nodes/:nodeId/rejoin", "POST /cluster/verify", "POST /system/keys/rotate",
		"POST /system/secrets/rotate", "PATCH /system/configuration", "GET /users", "POST /users", "GET /users/:username",
		"DELETE /users/:username", "GET /users/:username/groups", "PUT /users/:username/:userOperation", "GET /groups",
		"POST /groups", "GET /groups/:groupName", "DELETE /groups/:groupName", "GET /groups/:groupName/users",
		"POST /groups/:groupName/users", "DELETE /groups/:groupName/users/:username", "POST /system/inferenceModels/agreement",
		"POST /sites", "PATCH /sites/:siteId",
	} {
		notDocumentRoutes[r] = "Admins only (a backup holds documents: Admins are not limited by folders)"
	}
	for _, r := range []string{
		"GET /sites/:siteId/locales", "POST /sites/:siteId/locales", "DELETE /sites/:siteId/locales/:locale",
		"GET /sites/:siteId/locales/:locale/resourceItems", "POST /sites/:siteId/locales/:locale/resourceItems",
		"GET /sites/:siteId/locales/:locale/resourceItems/:itemKey", "PUT /sites/:siteId/locales/:locale/resourceItems/:itemKey",
		"DELETE /sites/:siteId/locales/:locale/resourceItems/:itemKey", "GET /sites/:siteId/apiKeys", "POST /sites/:siteId/apiKeys",
		"DELETE /sites/:siteId/apiKeys/:apiKey", "POST /sites/:siteId/delegationTokens", "GET /sites/:siteId/secrets",
		"POST /sites/:siteId/secrets", "DELETE /sites/:siteId/secrets/:alias", "GET /sites/:siteId/configuration",
		"PATCH /sites/:siteId/configuration", "POST /sites/:siteId/configuration/notification/test",
		"GET /sites/:siteId/schema/document", "PUT /sites/:siteId/schema/document",
		"GET /sites/:siteId/schema/document/attributes/:key/allowedValues", "GET /sites/:siteId/classifications",
		"POST /sites/:siteId/classifications", "GET /sites/:siteId/classifications/:classificationId",
		"PUT /sites/:siteId/classifications/:classificationId", "DELETE /sites/:siteId/classifications/:classificationId",
		"GET /sites/:siteId/classifications/:classificationId/attributes/:key/allowedValues",
		"GET /sites/:siteId/sequences", "POST /sites/:siteId/sequences", "GET /sites/:siteId/sequences/:sequenceId",
		"DELETE /sites/:siteId/sequences/:sequenceId",
		"GET /attributes", "POST /attributes", "GET /attributes/:key", "PATCH /attributes/:key", "DELETE /attributes/:key",
		"GET /attributes/:key/allowedValues", "GET /entityTypes", "POST /entityTypes", "GET /entityTypes/:entityTypeId",
		"PUT /entityTypes/:entityTypeId", "DELETE /entityTypes/:entityTypeId", "GET /entities/:entityTypeId",
		"POST /entities/:entityTypeId", "GET /entities/:entityTypeId/:entityId", "PUT /entities/:entityTypeId/:entityId",
		"PATCH /entities/:entityTypeId/:entityId", "DELETE /entities/:entityTypeId/:entityId",
		"DELETE /entities/:entityTypeId/:entityId/attributes/:attributeKey",
		"GET /queues", "POST /queues", "GET /queues/:queueId", "DELETE /queues/:queueId",
		"GET /workflows", "POST /workflows", "GET /workflows/:workflowId", "PUT /workflows/:workflowId",
		"PATCH /workflows/:workflowId", "DELETE /workflows/:workflowId", "GET /rulesets", "POST /rulesets",
		"GET /rulesets/:rulesetId", "PATCH /rulesets/:rulesetId", "DELETE /rulesets/:rulesetId",
		"GET /rulesets/:rulesetId/rules", "POST /rulesets/:rulesetId/rules", "GET /rulesets/:rulesetId/rules/:ruleId",
		"PATCH /rulesets/:rulesetId/rules/:ruleId", "DELETE /rulesets/:rulesetId/rules/:ruleId",
		"GET /mappings", "POST /mappings", "GET /mappings/:mappingId", "PUT /mappings/:mappingId", "DELETE /mappings/:mappingId",
		"GET /webhooks", "POST /webhooks", "GET /webhooks/:webhookId", "PATCH /webhooks/:webhookId", "DELETE /webhooks/:webhookId",
		"GET /webhooks/:webhookId/tags", "POST /webhooks/:webhookId/tags", "GET /folders/:indexKey/permissions",
		"PUT /folders/permissions", "GET /objects/examine/pdf", "GET /objects/examine/:id/pdf",
		"GET /shares", "POST /shares/folders/:indexKey", "DELETE /shares/:shareKey",
		"GET /sites/:siteId/groups", "GET /sites/:siteId/groups/:groupName", "DELETE /sites/:siteId/groups/:groupName",
		"PUT /sites/:siteId/groups/:groupName/permissions",
		"GET /sites/:siteId/eventSubscriptions", "POST /sites/:siteId/eventSubscriptions",
		"GET /sites/:siteId/eventSubscriptions/:eventSubscriptionId", "PATCH /sites/:siteId/eventSubscriptions/:eventSubscriptionId",
		"DELETE /sites/:siteId/eventSubscriptions/:eventSubscriptionId",
	} {
		notDocumentRoutes[r] = "site settings, definitions, folders without documents, examine objects (uploads outside documents), or the caller's own records"
	}
}

// docRoute reports whether a route names a document by its path.
func docRoute(route string) bool { return strings.Contains(route, ":documentId") }

func TestPermissionMatrix_Classified(t *testing.T) {
	s := quiretest.NewServer(t)
	routes := apiRoutes(s)
	all := map[string]bool{}
	for _, r := range routes {
		k := r.String()
		all[k] = true
		if r.method == http.MethodHead {
			k = "GET " + r.template // fiber's HEAD runs the GET handler
		}
		_, body := bodyDocRows[k]
		_, filter := filterDocRoutes[k]
		_, none := notDocumentRoutes[k]
		n := 0
		for _, b := range []bool{docRoute(k) && !none, body, filter, none} {
			if b {
				n++
			}
		}
		switch {
		case n == 0:
			t.Errorf("%s: not in the permission matrix: give it rows (bodyDocRows, filterDocRoutes) or a reason in notDocumentRoutes", k)
		case n > 1 && !(docRoute(k) && body):
			t.Errorf("%s: classified more than once", k)
		}
	}
	for _, m := range []map[string]bool{keysOf(bodyDocRows), keysOf(filterDocRoutes), keysOf(notDocumentRoutes), keysOf(docRouteFolderPerm)} {
		for k := range m {
			if !all[k] {
				t.Errorf("the matrix names %q, which is not a route", k)
			}
		}
	}
}

func keysOf[V any](m map[string]V) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

// matrix is the fixture: a locked folder f (READ for the group
// f_readers only) holding the route fixtures' document, a PDF with a
// draft envelope, and an open document elsewhere.
type matrix struct {
	s       *quiretest.Server
	admin   string
	params  map[string]string
	subst   map[string]string
	callers []matrixCaller
}

type matrixCaller struct {
	name string
	tok  string
	del  string // a delegation token
	// refusedFor: the folder permissions this caller lacks on f.
	refusedFor []string
}

// matrixEmail is the callers' custom:email claim.
const matrixEmail = "watcher@example.com"

func newMatrix(t *testing.T) *matrix {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	m := &matrix{s: s, admin: admin, params: routeFixtures(t, s, admin)}
	locked := m.params["documentId"]
	if p := servertest.DocPath(t, s, admin, "", locked); !strings.HasPrefix(p, "f/") {
		t.Fatalf("the fixture document is at %q, not in f/", p)
	}
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+locked, map[string]any{"content": "lockedcontent", "contentType": "text/plain"}, admin), http.StatusOK)
	// An open review of the locked document (the content change above
	// superseded the fixtures' one): GET /reviews must not list it.
	servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+locked+"/reviews", map[string]any{"review": map[string]any{"reviewCategory": "inbox", "requiredDecisions": 100}}, admin), http.StatusCreated)
	lockedPdf := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "f/contract.pdf", "contentType": "application/pdf", "isBase64": true, "content": servertest.B64(quiretest.TextPDF("Contract"))})
	// Its thumbnail is made in the background after the first listing
	// that shows it (API.md "Thumbnails"): made before the snapshots, so
	// that a listing in a row below finds it made and changes nothing.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		l := s.Do(http.MethodGet, "/folders?path=f&limit=100", nil, admin)
		servertest.MustStatus(t, l, http.StatusOK)
		made := false
		for _, x := range quiretest.List(t, l.JSON(t), "documents") {
			if o := quiretest.Obj(t, x); o["documentId"] == lockedPdf && o["thumbnailUrl"] != nil {
				made = true
			}
		}
		if made {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no thumbnail of f/contract.pdf within 30 s: %s", l.Body)
		}
	}
	r := s.Do(http.MethodPost, "/esignature/local/"+lockedPdf+"/envelopes", map[string]any{"status": "created", "signers": []map[string]any{{"name": "A", "email": "a@example.com"}}}, admin)
	servertest.MustStatus(t, r, http.StatusOK)
	env := quiretest.Str(t, r.JSON(t), "envelopeId")
	m.params["envelopeId"], m.params["provider"] = env, "local"
	open := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "pub/open.txt", "content": "open"})
	q := s.Do(http.MethodPost, "/documents/"+locked+"/actions", map[string]any{"actions": []map[string]any{{"type": "QUEUE", "queueId": m.params["queueId"]}}}, admin)
	servertest.MustStatus(t, q, http.StatusOK)
	fKey := s.Do(http.MethodGet, "/folders", nil, admin)
	servertest.MustStatus(t, fKey, http.StatusOK)
	fIndexKey := ""
	for _, x := range quiretest.List(t, fKey.JSON(t), "documents") {
		if o := quiretest.Obj(t, x); o["path"] == "f" {
			fIndexKey, _ = o["indexKey"].(string)
		}
	}
	if fIndexKey == "" {
		t.Fatalf("no indexKey for folder f in %s", fKey.Body)
	}
	// A notification to the callers' address about a document of nf, a
	// folder as locked as f (outside the snapshot: its action runs on).
	servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/default/configuration", map[string]any{"notificationEmail": "dms@example.com"}, admin), http.StatusOK)
	notified := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "nf/notified.txt", "content": "x"})
	servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+notified+"/actions", map[string]any{"actions": []map[string]any{
		{"type": "NOTIFICATION", "parameters": map[string]any{"notificationType": "email", "notificationToCc": matrixEmail,
			"notificationSubject": "Locked", "notificationText": "t"}},
	}}, admin), http.StatusOK)
	// A short link to the locked document, and an artifact of it.
	servertest.MustStatus(t, s.Do(http.MethodPost, "/shortlinks", map[string]any{"targetUrl": "/documents/" + locked, "slug": "matrixdel"}, admin), http.StatusCreated)
	art := s.Do(http.MethodPost, "/documents", map[string]any{"artifacts": true, "documentId": locked, "content": "artifact", "contentType": "text/plain"}, admin)
	servertest.MustStatus(t, art, http.StatusCreated)
	servertest.SetFolderRoles(t, s, admin, "", "f", map[string][]string{"f_readers": {"READ"}})
	servertest.SetFolderRoles(t, s, admin, "", "nf", map[string][]string{"f_readers": {"READ"}})
	m.subst = map[string]string{"<open>": open, "<locked>": locked, "<lockedPdf>": lockedPdf, "<env>": env,
		"<notified>": notified, "<artifact>": quiretest.Str(t, art.JSON(t), "artifactId"),
		"<seq>": m.params["sequenceId"], "<queue>": m.params["queueId"], "<fIndexKey>": fIndexKey, "<subIndexKey>": m.params["indexKey"],
		"<documentId>": locked, "<versionKey>": m.params["versionKey"], "<workflowId>": m.params["workflowId"],
		"<queueId>": m.params["queueId"]}
	if m.subst["<versionKey>"] == "" {
		t.Fatalf("the fixture document has no earlier version")
	}

	key := s.Do(http.MethodPost, "/sites/default/apiKeys", map[string]any{"name": "matrix", "permissions": []string{"READ", "WRITE", "DELETE"}}, admin)
	servertest.MustStatus(t, key, http.StatusOK)
	roKey := s.Do(http.MethodPost, "/sites/default/apiKeys", map[string]any{"name": "matrix-ro", "permissions": []string{"READ"}}, admin)
	servertest.MustStatus(t, roKey, http.StatusOK)
	dl := s.Do(http.MethodPost, "/sites/default/delegationTokens", map[string]any{"permissions": []string{"READ", "WRITE", "DELETE"}, "onBehalfOf": map[string]any{"username": "clerk"}, "reason": "matrix"}, admin)
	servertest.MustStatus(t, dl, http.StatusOK)
	all := []string{"READ", "WRITE", "DELETE"}
	email := map[string]any{"custom:email": matrixEmail}
	m.callers = []matrixCaller{
		{name: "no role on the folder", tok: s.TokenWithClaims("mallory", email, "default"), refusedFor: all},
		{name: "READ only on the folder", tok: s.TokenWithClaims("rita", email, "default", "f_readers"), refusedFor: []string{"WRITE", "DELETE"}},
		{name: "another site", tok: s.TokenWithClaims("oscar", email, "finance"), refusedFor: all},
		{name: "read-only role on the site", tok: s.TokenWithClaims("rex", email, "default_read"), refusedFor: all},
		{name: "API key", tok: quiretest.Str(t, key.JSON(t), "apiKey"), refusedFor: all},
		{name: "read-only API key", tok: quiretest.Str(t, roKey.JSON(t), "apiKey"), refusedFor: all},
		{name: "delegated token", tok: admin, del: quiretest.Str(t, dl.JSON(t), "delegationToken"), refusedFor: all},
	}
	return m
}

func (m *matrix) fill(s string) string {
	for k, v := range m.subst {
		s = strings.ReplaceAll(s, k, v)
	}
	return s
}

// siteQuery adds siteId=default, so a caller of another site names it.
func siteQuery(path string) string {
	if strings.Contains(path, "?") {
		return path + "&siteId=default"
	}
	return path + "?siteId=default"
}

func (m *matrix) do(c matrixCaller, method, path, body string) *quiretest.Response {
	h := map[string]string{}
	if body != "" {
		h["Content-Type"] = "application/json"
	}
	if c.del != "" {
		h["x-formkiq-delegation-token"] = c.del
	}
	var b any
	if body != "" {
		b = body
	}
	return m.s.DoHeaders(method, siteQuery(path), b, c.tok, h)
}

// snapshot is what an admin sees of the locked folder and its documents.
func (m *matrix) snapshot(t *testing.T) map[string]string {
	t.Helper()
	locked, pdf := m.subst["<locked>"], m.subst["<lockedPdf>"]
	out := map[string]string{}
	for _, p := range []string{
		"/documents/" + locked, "/documents/" + locked + "/tags", "/documents/" + locked + "/attributes",
		"/documents/" + locked + "/versions", "/documents/" + locked + "/artifacts", "/documents/" + locked + "/actions",
		"/documents/" + locked + "/reviews", "/documents/" + locked + "/fulltext", "/documents/" + locked + "/ocr",
		"/documents/" + locked + "/content", "/documents/" + pdf, "/documents/" + pdf + "/artifacts",
		"/esignature/local/" + pdf + "/envelopes/" + m.subst["<env>"], "/folders?path=f", "/folders?path=f/sub",
		"/publications/" + locked, "/documents/" + locked + "/checkout", "/documents/" + locked + "/workflows",
	} {
		r := m.s.Do(http.MethodGet, p, nil, m.admin)
		// A listing's thumbnailUrl is a URL signed for each answer (it
		// changes with the time, not with the state): its artifact is in
		// the artifacts' snapshot.
		out[p] = thumbnailURL.ReplaceAllString(string(r.Body), `"thumbnailUrl":"<signed>"`)
	}
	return out
}

var thumbnailURL = regexp.MustCompile(`"thumbnailUrl":"[^"]*"`)

func refused(status int) bool {
	return status == http.StatusUnauthorized || status == http.StatusForbidden
}

// TestPermissionMatrix_DocumentRoutes: for every route that names a
// document, every caller without the folder permission it needs (no role
// on the folder, READ only, another site, a read-only site role, API
// keys, a delegated token) is refused, and nothing is written.
func TestPermissionMatrix_DocumentRoutes(t *testing.T) {
	m := newMatrix(t)
	routes := apiRoutes(m.s)
	// Deleting routes go last, so a failure to refuse one does not take
	// the fixtures of the others away.
	slices.SortStableFunc(routes, func(a, b apiRoute) int {
		da, db := a.method == http.MethodDelete, b.method == http.MethodDelete
		switch {
		case da == db:
			return 0
		case db:
			return -1
		}
		return 1
	})
	// The snapshot (18 GETs) is taken once per row, after all the row's
	// callers, not after each caller: a change any of them made is still
	// a difference from the snapshot before the row (only a second
	// caller undoing the first one's write, itself refused, could hide
	// it), and the failure names the row and its callers. Taken after
	// each caller it was 18 of every 19 requests of the test (issue 45).
	before := m.snapshot(t)
	check := func(t *testing.T, callers []string) {
		t.Helper()
		if len(callers) == 0 {
			return
		}
		after := m.snapshot(t)
		for k, v := range before {
			if after[k] != v {
				t.Errorf("one of %s: %s changed:\n before %.300s\n after  %.300s", strings.Join(callers, ", "), k, v, after[k])
			}
		}
		before = after
	}
	rows := 0
	artRoutes, vkRoutes := server.ArtifactRoutes(), server.VersionKeyRoutes()
	for _, rt := range routes {
		k := rt.String()
		// fiber's HEAD runs the GET handler: HEAD gets the GET's rows
		// (path and query variants), each refused the same.
		gk := k
		if rt.method == http.MethodHead {
			gk = "GET " + rt.template
			if _, filter := filterDocRoutes[gk]; filter || !docRoute(gk) {
				continue
			}
		}
		if _, none := notDocumentRoutes[k]; none {
			continue
		}
		if f, ok := filterDocRoutes[k]; ok {
			t.Run(k, func(t *testing.T) {
				var ran []string
				for _, c := range m.callers {
					if !slices.Contains(c.refusedFor, "READ") {
						continue // may see it
					}
					ran = append(ran, c.name)
					r := m.do(c, rt.method, m.fill(f.path), m.fill(f.body))
					rows++
					hide := m.subst["<locked>"]
					if f.hide != "" {
						hide = m.fill(f.hide)
					}
					if r.Status >= 500 || strings.Contains(string(r.Body), hide) {
						t.Errorf("%s: %d, the locked document is shown: %.300s", c.name, r.Status, r.Body)
					}
				}
				check(t, ran)
			})
			continue
		}
		var list []matrixRow
		if docRoute(k) {
			path, ok := fill(rt, m.params)
			if !ok {
				t.Errorf("%s: no fixture for a parameter", k)
				continue
			}
			perm := docRouteFolderPerm[gk]
			if perm == "" {
				switch rt.method {
				case http.MethodGet, http.MethodHead:
					perm = "READ"
				case http.MethodDelete:
					perm = "DELETE"
				default:
					perm = "WRITE"
				}
			}
			body := routeSamples[k]
			if !takesBody(rt.method) {
				body = ""
			}
			list = append(list, matrixRow{name: "path", path: path, body: body, perm: perm})
			// The query variants that name the document's artifact or
			// an earlier version: the same folder check applies.
			if artRoutes[gk] {
				list = append(list, matrixRow{name: "artifactId", path: path + "?artifactId=<artifact>", body: body, perm: perm})
			}
			if vkRoutes[gk] {
				list = append(list, matrixRow{name: "versionKey", path: path + "?versionKey=<versionKey>", body: body, perm: perm})
			}
		}
		list = append(list, bodyDocRows[k]...)
		for _, row := range list {
			t.Run(k+" "+row.name, func(t *testing.T) {
				var ran []string
				for _, c := range m.callers {
					if !slices.Contains(c.refusedFor, row.perm) {
						continue
					}
					ran = append(ran, c.name)
					r := m.do(c, rt.method, m.fill(row.path), m.fill(row.body))
					rows++
					if !refused(r.Status) {
						t.Errorf("%s (needs %s): %d %.300s, want 401 or 403", c.name, row.perm, r.Status, r.Body)
					}
					if row.after != nil {
						row.after(t, m, c.name)
					}
				}
				check(t, ran)
			})
		}
	}
	t.Logf("%d requests refused or filtered", rows)
}
