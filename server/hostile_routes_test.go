package server_test

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server"
	"quire/server/internal/api"
	"quire/server/internal/servertest"
	"quire/storage"
)

// The hostile-input tests are generated from the server's route table
// (fiber's GetRoutes): every route and method gets hostile bodies and
// hostile query strings, so a new route is covered without anyone adding
// it here. What the table needs per route is checked by
// TestRobustness_RouteTableComplete: a value for each path parameter, and
// a valid sample body for each route that takes one (the mutations start
// from it and reach fields a generic body never would).

// routeSamples holds a valid body for every POST, PUT and PATCH route,
// keyed "METHOD /template"; "" marks a route that takes no JSON body.
// Values in braces (<documentId>) are replaced by the fixtures' ids.
var routeSamples = map[string]string{
	"PATCH /system/configuration":                                                  `{}`,
	"POST /system/keys/rotate":                                                     `{"graceSeconds":3600}`,
	"POST /system/secrets/rotate":                                                  `{}`,
	"POST /sites/:siteId/apiKeys":                                                  `{"name":"scanner","permissions":["READ","WRITE"]}`,
	"POST /documents":                                                              `{"path":"s/a.txt","content":"x","contentType":"text/plain","checksumType":"SHA1","tags":[{"key":"t","value":"v"},{"key":"u","values":["a","b"]}],"metadata":[{"key":"m","value":"v"}],"attributes":[{"key":"k","stringValue":"v"}],"actions":[{"type":"FULLTEXT"}],"documents":[{"content":"c","path":"s/c.txt","tags":[{"key":"t","value":"w"}]}]}`,
	"POST /documents/upload":                                                       `{"path":"u/a.txt","tags":[{"key":"t","value":"v"}],"attributes":[{"key":"k","stringValue":"v"}]}`,
	"PATCH /documents/tags":                                                        `{"match":{"tag":{"key":"t","eq":"v"}},"update":{"tags":[{"key":"t2","value":"v"}]}}`,
	"POST /documents/tags/batch":                                                   `{"documentIds":["<documentId>"],"tags":[{"key":"t","value":"v"},{"key":"u","values":["a","b"]}]}`,
	"PATCH /documents/:documentId":                                                 `{"path":"p/b.txt","deepLinkPath":"https://example.com/x","width":"10","tags":[{"key":"t","value":"v"}],"metadata":[{"key":"m","values":["a"]}],"attributes":[{"key":"k","stringValue":"v"}]}`,
	"PUT /documents/:documentId/restore":                                           "",
	"PUT /documents/:documentId/versions":                                          `{"versionKey":"<versionKey>"}`,
	"PUT /documents/:documentId/artifacts/promoteArtifact":                         `{}`,
	"PUT /documents/:documentId/checkout":                                          `{}`,
	"POST /esignature/:provider/:documentId/envelopes":                             `{"emailSubject":"s","environment":"DEVELOPMENT","signers":[{"name":"n","email":"a@example.com","recipientId":"1","routingOrder":"1"}]}`,
	"POST /esignature/:provider/:documentId/envelopes/:envelopeId/send":            `{}`,
	"POST /esignature/:provider/:documentId/envelopes/:envelopeId/views/recipient": `{"environment":"DEVELOPMENT","recipientView":{"recipientId":"1","returnUrl":"https://example.com/"}}`,
	"POST /esignature/:provider/:documentId/envelopes/:envelopeId/views/sender":    `{}`,
	"POST /esignature/:provider/:documentId/envelopes/:envelopeId/reminders":       `{"recipientIds":["1"]}`,
	"POST /esignature/:provider/:documentId/envelopes/:envelopeId/void":            `{"voidedReason":"r"}`,
	"POST /esignature/:provider/events":                                            `{"envelopeId":"x","event":"recipient-sent"}`,
	"POST /esign/:token":                                                           `{"action":"sign","typedName":"n"}`,
	"POST /documents/:documentId/certifications":                                   `{"target":"DOWNLOAD","certificates":[{"alias":"a1","sourceType":"QUIRE_SECRETS"}]}`,
	"POST /sites/:siteId/secrets":                                                  `{"alias":"a1","type":"PKCS12","data":"AAAA","password":"p"}`,
	"POST /documents/:documentId/generate":                                         `{"outputType":"DOCX","datasources":[{"documentId":"x","dataRoot":"data"}]}`,
	"PUT /documents/:documentId/legalHold":                                         `{}`,
	"POST /documents/:documentId/actions":                                          `{"actions":[{"type":"FULLTEXT","parameters":{"characterMax":"40"}},{"type":"RESIZE","parameters":{"width":"10","height":"10"}}]}`,
	"POST /documents/:documentId/actions/retry":                                    "",
	"PUT /documents/:documentId/malwareScan":                                       "",
	"PUT /documents/:documentId/antivirus":                                         "",
	"POST /documents/:documentId/ocr":                                              `{"parseTypes":["TEXT"],"ocrEngine":"TESSERACT","ocrNumberOfPages":"1"}`,
	"POST /queues":                                                                 `{"name":"q2"}`,
	"POST /queues/:queueId/documents/:documentId/decisions":                        `{"decision":"APPROVE"}`,
	"POST /workflows":                                                              sampleWorkflow,
	"PUT /workflows/:workflowId":                                                   sampleWorkflow,
	"PATCH /workflows/:workflowId":                                                 `{"name":"w3","description":"d","status":"ACTIVE"}`,
	"POST /documents/:documentId/workflows":                                        `{"workflowId":"<workflowId>"}`,
	"POST /documents/:documentId/workflow/:workflowId/decisions":                   `{"decision":"APPROVE","comments":"c"}`,
	"POST /rulesets":                                                               `{"ruleset":{"description":"d","priority":1,"version":1,"status":"ACTIVE"}}`,
	"PATCH /rulesets/:rulesetId":                                                   `{"ruleset":{"description":"d2","priority":2,"status":"INACTIVE"}}`,
	"POST /rulesets/:rulesetId/rules":                                              sampleRule,
	"PATCH /rulesets/:rulesetId/rules/:ruleId":                                     sampleRule,
	"POST /documents/:documentId/reviews":                                          `{"review":{"reviewCategory":"c","requiredDecisions":100}}`,
	"POST /documents/:documentId/notes":                                            `{"note":{"text":"n"}}`,
	"POST /sites/:siteId/savedSearches":                                            `{"savedSearch":{"name":"v","query":{"query":{}}}}`,
	"POST /sites/:siteId/intakeProfiles/:name/test":                                `{"source":"mail"}`,
	"PATCH /documents/:documentId/reviews/:reviewId":                               `{"review":{"comments":"c"}}`,
	"POST /documents/:documentId/reviews/:reviewId/decisions":                      `{"decision":{"type":"COMMENT"}}`,
	"PATCH /sites/:siteId/configuration":                                           `{"notificationEmail":"a@example.com"}`,
	"POST /sites/:siteId/configuration/notification/test":                          `{"to":"a@example.com"}`,
	"POST /system/mail/test":                                                       `{"to":"a@example.com"}`,
	"POST /documents/:documentId/tags":                                             `{"tags":[{"key":"t","value":"v"}]}`,
	"PUT /documents/:documentId/tags":                                              `{"tags":[{"key":"t","value":"v"}]}`,
	"PATCH /documents/:documentId/tags":                                            `{"tags":[{"key":"t","values":["v","w"]}]}`,
	"PUT /documents/:documentId/tags/:tagKey":                                      `{"value":"v"}`,
	"POST /attributes":                                                             `{"attribute":{"key":"k2","dataType":"STRING","type":"STANDARD"}}`,
	"PATCH /attributes/:key":                                                       `{"attribute":{"type":"STANDARD"}}`,
	"POST /documents/:documentId/attributes":                                       `{"attributes":[{"key":"k","stringValues":["v","w"]}]}`,
	"PUT /documents/:documentId/attributes":                                        `{"attributes":[{"key":"k","stringValue":"v"}]}`,
	"PUT /documents/:documentId/attributes/:attributeKey":                          `{"attribute":{"stringValue":"v"}}`,
	"PUT /sites/:siteId/schema/document":                                           `{"name":"s","attributes":{"optional":[{"attributeKey":"k"}]}}`,
	"POST /sites/:siteId/classifications":                                          `{"classification":{"name":"c2","attributes":{"optional":[{"attributeKey":"k"}]}}}`,
	"PUT /sites/:siteId/classifications/:classificationId":                         `{"classification":{"name":"c","attributes":{"optional":[{"attributeKey":"k","allowedValues":["v"]}]}}}`,
	"POST /entityTypes":                                                            `{"entityType":{"namespace":"CUSTOM","name":"T2"}}`,
	"PUT /entityTypes/:entityTypeId":                                               `{"entityType":{"namespace":"CUSTOM","name":"T"}}`,
	"POST /entities/:entityTypeId":                                                 `{"entity":{"name":"e2","attributes":[{"key":"k","stringValue":"v"}]}}`,
	"PUT /entities/:entityTypeId/:entityId":                                        `{"entity":{"name":"e","attributes":[{"key":"k","stringValue":"v"}]}}`,
	"PATCH /entities/:entityTypeId/:entityId":                                      `{"entity":{"attributes":[{"key":"k","stringValue":"w"}]}}`,
	"POST /search":                                     `{"query":{"tag":{"key":"t","eq":"v"},"documentIds":["<documentId>"]},"responseFields":{"tags":["t"]}}`,
	"POST /searchFulltext":                             `{"query":{"text":"x","page":1}}`,
	"POST /queryFulltext":                              `{"query":{"match":{"content":"x"}},"from":0,"size":10}`,
	"POST /folders":                                    `{"path":"f/g"}`,
	"POST /indices/search":                             `{"indexType":"folder"}`,
	"POST /indices/:indexType/move":                    `{"source":"f/","target":"g/"}`,
	"POST /folders/:indexKey/moves":                    `{"path":"h"}`,
	"PUT /folders/permissions":                         `{"path":"f","roles":[{"roleName":"r","permissions":["READ"]}]}`,
	"POST /mappings":                                   `{"mapping":{"name":"m2","attributes":[{"attributeKey":"k","sourceType":"CONTENT","labelTexts":["a"],"labelMatchingType":"FUZZY"}]}}`,
	"PUT /mappings/:mappingId":                         `{"mapping":{"name":"m","attributes":[{"attributeKey":"k","sourceType":"CONTENT","labelTexts":["a"],"labelMatchingType":"FUZZY"}]}}`,
	"POST /sites/:siteId/intakeProfiles":               `{"intakeProfile":{"name":"hostile","pathTemplate":"In/{folder}/{filename}","tags":[{"key":"t","value":"{sender}"}],"actions":[{"type":"OCR"}],"duplicates":"VERSION"}}`,
	"PUT /sites/:siteId/intakeProfiles/:name":          `{"intakeProfile":{"pathTemplate":"In/{filename}","attributes":[{"key":"k","stringValue":"{subject}"}]}}`,
	"POST /sites/:siteId/intake/:name":                 "",
	"POST /sites/:siteId/sequences":                    `{"sequence":{"attributeKey":"seqk","pattern":"INV-{SEQUENCE:6}"}}`,
	"POST /sites/:siteId/sequences/:sequenceId/next":   `{"documentId":"<documentId>"}`,
	"POST /webhooks":                                   `{"name":"w2","ttl":"60","enabled":"true","tags":[{"key":"t","value":"v"}],"actions":[{"type":"CHECKSUM","parameters":{"checksumType":"SHA256"}}]}`,
	"PATCH /webhooks/:webhookId":                       `{"name":"w","enabled":"false","ttl":"120","tags":[{"key":"t","values":["a","b"]}]}`,
	"POST /webhooks/:webhookId/tags":                   `{"key":"t","value":"v"}`,
	"POST /private/webhooks/*":                         `{"k":"v"}`,
	"POST /public/webhooks/*":                          `{"k":"v"}`,
	"POST /sites/:siteId/delegationTokens":             `{"permissions":["READ","WRITE"],"onBehalfOf":{"username":"clerk"},"reason":"audit"}`,
	"POST /system/inferenceModels/agreement":           `{"modelId":"llama3"}`,
	"POST /users":                                      `{"user":{"username":"u2","attributes":{"givenName":"U"}},"temporaryPassword":"temp-password"}`,
	"PUT /users/:username/:userOperation":              `{"temporaryPassword":"temp-password-2"}`,
	"POST /groups":                                     `{"group":{"name":"g2","description":"d"}}`,
	"POST /groups/:groupName/users":                    `{"user":{"username":"u1"}}`,
	"POST /login":                                      `{"username":"u1","password":"temp-password"}`,
	"POST /login/refresh":                              `{"refreshToken":"x"}`,
	"POST /login/logout":                               `{"refreshToken":"x"}`,
	"POST /respondToAuthChallenge":                     `{"session":"x","username":"u1","newPassword":"new-password"}`,
	"POST /changePassword":                             `{"accessToken":"x","previousPassword":"a","proposedPassword":"new-password"}`,
	"POST /forgotPassword":                             `{"username":"u1"}`,
	"POST /forgotPasswordConfirm":                      `{"username":"u1","code":"x","password":"new-password"}`,
	"POST /confirmRegistration":                        `{"username":"u1","code":"x"}`,
	"PUT /documents/:documentId/ocr":                   `{"content":"text","contentType":"text/plain"}`,
	"POST /documents/:documentId/syncs":                `{"sync":{"service":"FULLTEXT","type":"METADATA"}}`,
	"POST /reindex/documents/:documentId":              `{"target":"ATTRIBUTES"}`,
	"POST /public/documents":                           `{"path":"p/a.txt","content":"x","tags":[{"key":"t","value":"v"}]}`,
	"POST /shares/folders/:indexKey":                   `{"share":{"group":"partners","permissions":["READ","WRITE"]}}`,
	"PUT /sites/:siteId/groups/:groupName/permissions": `{"permissions":["READ","WRITE"]}`,
	// A name: the outbound policy refuses it when dialed (loopback), so
	// the events of the sweep's writes go nowhere.
	"POST /sites/:siteId/eventSubscriptions":                       `{"url":"http://localhost:9/events","eventTypes":["quire.document.created"]}`,
	"PATCH /sites/:siteId/eventSubscriptions/:eventSubscriptionId": `{"eventTypes":["quire.document.deleted"]}`,
	"PATCH /sites/:siteId":                                         `{"site":{"title":"T"}}`,
	"POST /sites":                                                  `{"site":{"id":"s2","title":"T","status":"ACTIVE"}}`,
	"POST /sites/:siteId/locales":                                  `{"locale":"de"}`,
	"POST /sites/:siteId/locales/:locale/resourceItems":            `{"resourceItem":{"itemType":"SCHEMA","attributeKey":"k","allowedValue":"v2","localizedValue":"V"}}`,
	"PUT /sites/:siteId/locales/:locale/resourceItems/:itemKey":    `{"resourceItem":{"itemType":"INTERFACE","interfaceKey":"i1","localizedValue":"I"}}`,
	"PUT /documents/:documentId/fulltext":                          `{"content":"text","contentType":"text/plain","tags":[{"key":"t","value":"v"}]}`,
	"POST /documents/:documentId/fulltext":                         `{"content":"text","tags":[{"key":"t","values":["v","w"]}]}`,
	"PATCH /documents/:documentId/fulltext":                        `{"content":"text2","tags":[{"key":"u","value":"x"}]}`,
	"POST /documents/compress":                                     `{"documentIds":["<documentId>"]}`,
	"POST /shortlinks":                                             `{"targetUrl":"/documents/<documentId>","slug":"s2"}`,
	"PUT /uploads/examine/:siteId/:id":                             "", // content, not JSON; signed
	"PUT /uploads/:siteId/:documentId":                             "", // content, not JSON; signed (uploads are issue 11 §4's area)
	"POST /cluster/join":                                           `{"token":"quirejoin1.e30.AAAA","nodeId":"n2","raftAddress":"127.0.0.1:7002","csr":"x"}`,
	"POST /cluster/nodes/:nodeId/rejoin":                           `{"raftAddress":"127.0.0.1:7002"}`,
	"POST /cluster/verify":                                         "",
}

// sampleWorkflow and sampleRule are valid workflow and rule bodies.
const (
	sampleWorkflow = `{"name":"w2","description":"d","status":"ACTIVE","steps":[` +
		`{"stepId":"review","queue":{"queueId":"<queueId>","approvalGroups":["g1"]},"decisions":[{"type":"REJECT","nextStepId":"review"}]},` +
		`{"stepId":"sum","action":{"type":"CHECKSUM","parameters":{"checksumType":"SHA1"}},"decision":{"conditions":[` +
		`{"all":[{"source":{"attributeKey":"k"},"operator":"EQ","stringValue":"v"}],"any":[{"source":"PATH","operator":"STARTS_WITH","stringValue":"f/"}],"transition":{"type":"COMPLETE"}}],` +
		`"defaultTransition":{"type":"STEP","stepId":"review"}}}]}`
	sampleRule = `{"rule":{"priority":1,"description":"d","workflowId":"<workflowId>","status":"ACTIVE","conditions":{"must":[` +
		`{"criterion":"CONTENT_TYPE","value":"text/plain","operation":"EQ"},{"criterion":"ATTRIBUTE","attributeKey":"k","value":"v","operation":"CONTAINS"}]}}}`
)

// routeFixtures creates one of everything a path parameter can name and
// returns the parameter values.
func routeFixtures(t *testing.T, s *quiretest.Server, tok string) map[string]string {
	t.Helper()
	create := func(method, path, body, field string) string {
		t.Helper()
		r := s.DoHeaders(method, path, body, tok, map[string]string{"Content-Type": "application/json"})
		if r.Status >= 300 {
			t.Fatalf("fixture %s %s: %d %s", method, path, r.Status, r.Body)
		}
		if field == "" {
			return ""
		}
		v, _ := r.JSON(t)[field].(string)
		if v == "" {
			t.Fatalf("fixture %s %s: no %s in %s", method, path, field, r.Body)
		}
		return v
	}
	create("POST", "/attributes", `{"attribute":{"key":"k"}}`, "")
	create("POST", "/attributes", `{"attribute":{"key":"seqk"}}`, "")
	p := map[string]string{
		"siteId": "default", "tagKey": "t", "tagValue": "v", "key": "k", "attributeKey": "k", "attributeValue": "v",
		"indexType": "folder", "llmPromptEntityName": "x", "nodeId": "n2",
		"indexName": "x", "snapshotName": "x", "repositoryName": "x", "shareKey": "x",
	}
	p["documentId"] = create("POST", "/documents", `{"path":"f/doc.txt","content":"x","tags":[{"key":"t","value":"v"}],"attributes":[{"key":"k","stringValue":"v"}]}`, "documentId")
	// An earlier version of the document: a metadata change keeps one.
	create("PATCH", "/documents/"+p["documentId"], `{"metadata":[{"key":"m","value":"v"}]}`, "")
	if vs := s.Do(http.MethodGet, "/documents/"+p["documentId"]+"/versions", nil, tok).JSON(t); len(quiretest.List(t, vs, "documents")) == 2 {
		p["versionKey"] = quiretest.Str(t, quiretest.Item(t, vs, "documents", 1), "versionKey")
	}
	p["apiKey"] = create("POST", "/sites/default/apiKeys", routeSamples["POST /sites/:siteId/apiKeys"], "apiKey")
	p["classificationId"] = create("POST", "/sites/default/classifications", `{"classification":{"name":"c","attributes":{"optional":[{"attributeKey":"k"}]}}}`, "classificationId")
	p["entityTypeId"] = create("POST", "/entityTypes", `{"entityType":{"namespace":"CUSTOM","name":"T"}}`, "entityTypeId")
	p["entityId"] = create("POST", "/entities/"+p["entityTypeId"], `{"entity":{"name":"e"}}`, "entityId")
	p["queueId"] = create("POST", "/queues", `{"name":"q"}`, "queueId")
	// A workflow (on a queue of its own) the document is in, and a rule.
	wq := create("POST", "/queues", `{"name":"wq"}`, "queueId")
	p["workflowId"] = create("POST", "/workflows", `{"name":"w","status":"ACTIVE","steps":[{"stepId":"s1","queue":{"queueId":"`+wq+`"}}]}`, "workflowId")
	create("POST", "/documents/"+p["documentId"]+"/workflows", `{"workflowId":"`+p["workflowId"]+`"}`, "")
	p["rulesetId"] = create("POST", "/rulesets", `{"ruleset":{"description":"r"}}`, "rulesetId")
	p["ruleId"] = create("POST", "/rulesets/"+p["rulesetId"]+"/rules", `{"rule":{"workflowId":"`+p["workflowId"]+`","conditions":{"must":[{"criterion":"FIELD","fieldName":"path","value":"nomatch/","operation":"CONTAINS"}]}}}`, "ruleId")
	for deadline := time.Now().Add(30 * time.Second); ; {
		r := s.Do(http.MethodGet, "/documents/"+p["documentId"]+"/actions", nil, tok)
		if strings.Contains(string(r.Body), `"IN_QUEUE"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fixture: the document's workflow step did not queue it: %s", r.Body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	p["reviewId"] = create("POST", "/documents/"+p["documentId"]+"/reviews", `{"review":{"reviewCategory":"c","requiredDecisions":100}}`, "reviewId")
	p["noteId"] = create("POST", "/documents/"+p["documentId"]+"/notes", `{"note":{"text":"n"}}`, "noteId")
	p["savedSearchId"] = create("POST", "/sites/default/savedSearches", `{"savedSearch":{"name":"v","query":{"query":{}}}}`, "savedSearchId")
	p["mappingId"] = create("POST", "/mappings", strings.Replace(routeSamples["POST /mappings"], `"m2"`, `"m"`, 1), "mappingId")
	create("POST", "/sites/default/intakeProfiles", `{"intakeProfile":{"name":"fx","actions":[]}}`, "")
	p["name"] = "fx"
	p["sequenceId"] = create("POST", "/sites/default/sequences", routeSamples["POST /sites/:siteId/sequences"], "sequenceId")
	p["indexKey"] = create("POST", "/folders", `{"path":"f/sub"}`, "indexKey")
	p["webhookId"] = create("POST", "/webhooks", `{"name":"w"}`, "webhookId")
	p["eventSubscriptionId"] = create("POST", "/sites/default/eventSubscriptions", routeSamples["POST /sites/:siteId/eventSubscriptions"], "eventSubscriptionId")
	create("POST", "/shortlinks", `{"targetUrl":"https://example.com/","slug":"s1"}`, "")
	p["slug"] = "s1"
	create("POST", "/users", `{"user":{"username":"u1"},"temporaryPassword":"temp-password"}`, "")
	create("POST", "/groups", `{"group":{"name":"g1"}}`, "")
	p["username"], p["groupName"], p["userOperation"] = "u1", "g1", "ENABLE"
	create("POST", "/sites/default/locales", `{"locale":"fr"}`, "")
	create("POST", "/sites/default/locales/fr/resourceItems", `{"resourceItem":{"itemType":"INTERFACE","interfaceKey":"i1","localizedValue":"I"}}`, "")
	p["locale"], p["itemKey"] = "fr", "i1"
	p["id"] = create("GET", "/objects/examine/pdf", "", "id")
	p["archiveId"] = "x"
	p["provider"], p["envelopeId"], p["token"], p["alias"] = "local", "x", "x", "a1"
	return p
}

type apiRoute struct{ method, template string }

func (r apiRoute) String() string { return r.method + " " + r.template }

// apiRoutes is the server's route table, without middleware entries.
func apiRoutes(s *quiretest.Server) []apiRoute {
	var out []apiRoute
	for _, r := range s.Node.Server.App().GetRoutes(true) {
		if r.Path == "/" || r.Method == http.MethodConnect || r.Method == http.MethodTrace || r.Method == http.MethodOptions {
			continue
		}
		out = append(out, apiRoute{r.Method, r.Path})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

var routeParam = regexp.MustCompile(`:(\w+)`)

// fill substitutes the route's parameters; ok is false for one the
// fixtures do not know.
func fill(r apiRoute, params map[string]string) (string, bool) {
	ok := true
	p := routeParam.ReplaceAllStringFunc(r.template, func(m string) string {
		v, found := params[m[1:]]
		ok = ok && found
		return url.PathEscape(v)
	})
	return p, ok
}

func takesBody(method string) bool {
	return method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch
}

// TestRobustness_RouteTableComplete fails when a route exists that the
// generated hostile-input test cannot exercise fully: a path parameter
// without a fixture value, or a body route without a sample.
func TestRobustness_RouteTableComplete(t *testing.T) {
	s := quiretest.NewServer(t)
	params := routeFixtures(t, s, s.Admin())
	routes := apiRoutes(s)
	if len(routes) < 100 {
		t.Fatalf("route table has only %d routes", len(routes))
	}
	for _, r := range routes {
		if _, ok := fill(r, params); !ok {
			t.Errorf("%s: a path parameter has no fixture value in routeFixtures", r)
		}
		if _, ok := routeSamples[r.String()]; takesBody(r.method) && !ok {
			t.Errorf("%s: no sample body in routeSamples", r)
		}
	}
	for k := range routeSamples {
		if !slices.ContainsFunc(routes, func(r apiRoute) bool { return r.String() == k }) {
			t.Errorf("routeSamples has %q, which is not a route", k)
		}
	}
	// Every query parameter read anywhere is one some route reads, by the
	// sweep's count: a name read where no route's handler reaches would be
	// swept only as a foreign name.
	scope := queryNames(t)
	read, sent := map[string]bool{}, 0
	for _, r := range routes {
		own, _ := scope.forRoute(t, r)
		for _, n := range own {
			read[n] = true
		}
		sent += len(own)
	}
	t.Logf("%d routes read %d query parameter names each on average, of %d", len(routes), sent/len(routes), len(scope.all))
	for _, n := range scope.all {
		if !read[n] {
			t.Errorf("query parameter %q is read by no route's code nor the core (queryNames)", n)
		}
	}
}

// genericBodies are hostile bodies sent to every route whatever it takes.
var genericBodies = []string{``, `null`, `[]`, `"str"`, `123`, `{`, `{} {}`, `{"a":1} garbage`, "{\"path\":\"\xff\"}", `{"key":"\udc00"}`,
	`{"tags":null}`, `{"tags":[null]}`, `{"tags":"x"}`, `{"content":null}`, `{"documents":[{}]}`, `{"documents":[null]}`,
	`{"metadata":[{"key":"a","values":[1]}]}`, `{"actions":[{"type":"OCR","parameters":[1]}]}`, `{"path":"\u0000"}`, `{"key":""}`, `{"match":{}}`,
	`{"match":{"tag":{"key":"k"}},"update":{"tags":[{"key":"x"}]}}`, `{"width":{}}`, `{"documentId":null,"content":"x"}`,
	`{"attributes":[null]}`, `{"attributes":[{"key":"a","numberValue":"x"}]}`, `{"attributes":{}}`, `{"attribute":{"key":null}}`,
	`{"attributes":[{"key":"a","entities":[null]}]}`, `{"attributes":[{"documentId":"x","relationship":1}]}`,
	`{"attribute":{"key":"k","dataType":"DATE","validationRegex":"(("}}`, `{"name":"s","attributes":{"required":[null]}}`,
	`{"name":"s","attributes":{"compositeKeys":[{"attributeKeys":null}]}}`, `{"classification":{"attributes":{}}}`,
	`{"entityType":{"namespace":"CUSTOM","name":"a/b"}}`, `{"entity":{"attributes":[{}]}}`, `{"sequence":{"pattern":"{SEQUENCE:999}"}}`,
	`{"mapping":{"name":"m","attributes":[null]}}`, `{"actions":[{"type":"RESIZE","parameters":{"width":{},"height":[1]}}]}`,
	`{"actions":[{"type":"WEBHOOK","parameters":{"url":"http://[::1"}}]}`, `{"actions":null}`, `{"notification":{"smtp":{"port":"x"}}}`,
	`{"llm":{"url":"ftp://x"}}`, `{"decision":7}`, `{"to":"not-mail"}`, `{"query":{"tag":{"key":"a","range":{"start":{},"end":[]}}}}`,
	`{"query":{"attribute":{"key":"a","eq":"x","range":{"start":"1","end":"2","type":"NUMBER"}}}}`, `{"query":{"text":"((("}}`,
	`{"query":{"text":"a:b:c~~~/[["}}`, `{"query":{"query_string":{"query":"((("}}}`, `{"query":{"match":{"content":{}}}}`,
	`{"query":{"fuzzy":{"a":"","b":""}}}`, `{"query":{"meta":{"folder":"../.."}}}`, `{"query":{"filename":{"beginsWith":""}}}`,
	`{"query":{"documentIds":[null]}}`, `{"path":"a/../b"}`, `{"indexType":"tags"}`, `{"query":{"page":-5,"text":"x"}}`,
	`{"mapping":{"name":"m","classifications":[{"conditions":[null]}]}}`, strings.Repeat(`[`, 10000)}

// longContent is the generic body with a long content (valid base64),
// sent to every route as mutations' long strings are.
var longContent = hostileBody{`{"content":"` + strings.Repeat("A", midStringBytes) + `","isBase64":true}`,
	`{"content":"` + strings.Repeat("A", hostileStringBytes) + `","isBase64":true}`}

// hostileStringBytes and hostileCopies are the sizes the sweep makes a
// string and an array: just over every bound of storage/limits.go (the
// largest, MaxDefinitionBytes, 256 KiB; MaxDocumentValues, 2,000 values)
// and Badger's 65,000-byte key limit, so each takes a route past every
// limit check, as 1 MiB and 10,000 copies did, at a quarter of the bytes
// the race detector follows through each copy of the body (issue 45: the
// sweep was the long pole of make test, CPU-bound, 58% of it the race
// detector on these bodies). Bounds that only a larger value exceeds
// (inline content's 5 MB, a 1 MiB e-sign or data source body) are each
// a ReadBody or content limit the same generic code checks for the
// routes whose limit these values do exceed.
//
// A long string is first sent midStringBytes long: just over every bound
// of one field (the largest, a 64 KiB request body or intake field) and
// Badger's key limit. Only where that body was not refused (400) does the
// sweep send it again hostileStringBytes long, to go past the bounds of a
// whole command (a definition's 256 KiB, a request's 128 KiB of values)
// and the few of 256 KiB (a logo, a drawn signature): a bound refuses
// every string longer than it, so a 400 for the shorter string is the same
// 400 for the longer one, and it was most of the bytes the sweep sent and
// the server decoded under the race detector (issue 45: 38% of the
// sweep's CPU went with the long strings).
var (
	hostileStringBytes = storage.MaxDefinitionBytes + 1024
	midStringBytes     = 64<<10 + 1024
	hostileCopies      = storage.MaxDocumentValues + 1
)

// badUTF8 marks where mutate puts raw invalid UTF-8 (json.Marshal would
// escape it).
const badUTF8 = "\x01badutf8\x01"

// longMark marks where mutations puts a long string (midString, then
// hostileString): the body is the one json.Marshal made of the long string
// itself (the same bytes), without the encoder's byte-by-byte pass over
// 257 KiB under the race detector (mutations: 6.5% of the sweep's perf
// samples before, 2.6% after).
const longMark = "\x02long\x02"

// midString and hostileString are the long strings of mutations.
var (
	midString     = strings.Repeat("a", midStringBytes)
	hostileString = strings.Repeat("a", hostileStringBytes)
)

// hostileBody is a body the sweep sends, and longer the same body with
// its long string hostileStringBytes long instead of midStringBytes ("" for
// a body without one): sent only when body was not refused.
type hostileBody struct{ body, longer string }

// hostileBodies are bodies without a long string.
func hostileBodies(bodies []string) []hostileBody {
	out := make([]hostileBody, len(bodies))
	for i, b := range bodies {
		out[i] = hostileBody{body: b}
	}
	return out
}

// mutations derives hostile bodies from a valid sample: each string
// becomes long (midStringBytes, then hostileStringBytes), invalid UTF-8, a path with '//' and
// CR LF, and empty; each number huge, negative and 1e308; each array
// hostileCopies copies of its first element, and empty; each object null.
func mutations(t *testing.T, sample string) []hostileBody {
	t.Helper()
	var root any
	if err := json.Unmarshal([]byte(sample), &root); err != nil {
		t.Fatalf("sample %s: %v", sample, err)
	}
	var out []hostileBody
	long := []byte(strings.ReplaceAll(longMark, "\x02", `\u0002`))
	emit := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("encode mutation: %v", err)
		}
		b = bytes.ReplaceAll(b, []byte(strings.ReplaceAll(badUTF8, "\x01", `\u0001`)), []byte("bi\xff\xfe"))
		if !bytes.Contains(b, long) {
			out = append(out, hostileBody{body: string(b)})
			return
		}
		out = append(out, hostileBody{string(bytes.ReplaceAll(b, long, []byte(midString))), string(bytes.ReplaceAll(b, long, []byte(hostileString)))})
	}
	// walk visits every value with a setter that replaces it in root.
	var walk func(v any, key string, set func(any))
	walk = func(v any, key string, set func(any)) {
		var variants []any
		switch x := v.(type) {
		case string:
			variants = []any{longMark, badUTF8, "a//b\r\nc", ""}
		case float64:
			variants = []any{json.Number("9223372036854775807"), json.Number("-99999999999999999999"), 1e308, -1.0}
		case bool:
			variants = []any{"x"}
		case []any:
			variants = []any{[]any{}, nil}
			if len(x) > 0 {
				many := make([]any, hostileCopies)
				for i := range many {
					many[i] = x[0]
				}
				variants = append(variants, many)
			}
			for i := range x {
				walk(x[i], key, func(n any) { x[i] = n })
			}
		case map[string]any:
			variants = []any{nil}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k], k, func(n any) { x[k] = n })
			}
		}
		for _, n := range variants {
			set(n)
			emit(root)
			set(v)
		}
	}
	walk(root, "", func(n any) { root = n })
	return out
}

// queryNameRE finds a query parameter a file reads. \b: the route
// table's byQuery("GET", ...) rows name a method, not a query parameter;
// without it GET, POST, PUT, PATCH and DELETE were swept as five more
// names no handler reads (issue 45).
var queryNameRE = regexp.MustCompile(`\b(?:Query|QueryBool|[qQ]ueryInt|[pP]arseDateParam\(r,)\(?\s*"(\w+)"`)

// queryByVariable finds a query read whose name is a variable (a table of
// names, a helper's parameter): the code that holds one may read any
// name, so a route that reaches it is sent every name. ParseDateParam's
// callers name theirs (queryNameRE).
var queryByVariable = regexp.MustCompile(`\b(?:Query|QueryBool|[qQ]ueryInt)\(\s*[^"\s)]`)

// queryScope is what the sweep knows of the query parameters the
// handlers read, found in the server's source so a new one is covered
// too. A route is sent the names read by the code its handler reaches,
// and the names the core reads: the code routes wraps every request in
// (the middleware, the token check, api's Wrap), found by the same walk
// from routes. A helper of package server or server/internal that only
// some handlers call (paging's limit and next, the URL routes' duration)
// is the code those handlers reach, not the core: sending its names to
// every route was 30% of the sweep's requests (issue 45).
// The code a handler reaches is its declaration and, transitively, what
// that names: a function or package variable of its own package or of a
// server package it names, and for a method call x.M every method or
// function M of its package and of the server packages it imports (the
// receiver's type is not resolved; a superset), and the functions
// package server hands the domains as values (handed). Code outside
// server/ reads no query parameter (the sweep never looked there). A
// name a route's code never reads is answered as the route without it,
// as the foreign names show; sending every name to every route was most
// of the sweep's requests (issue 45).
type queryScope struct {
	all      []string                          // every name read anywhere (siteId aside)
	core     map[string]bool                   // read by the code every request runs: sent to every route
	decls    map[string]map[string][]*declRead // package import path -> declared name -> each declaration
	imports  map[string]map[string]bool        // package import path -> the server packages it imports, transitively
	handlers map[string]string                 // "METHOD path" -> its handler's symbol (server.RouteHandlers)
	// handed are the functions package server hands the domains as
	// values (s.signatures.CertifyEnvelope = s.signatures.CertifyWithSite):
	// a domain calls them through a field, so every route may reach them.
	handed []string
	// The walk from handed, made once: the names read, the declarations
	// visited, whether a name held in a variable is read.
	handedNames map[string]bool
	handedSeen  map[[2]string]bool
	handedAny   bool
}

// coreNameTaken says, for each query parameter the core reads, whether
// a route's row takes it (api.RouteFlags). The core refuses it with 400
// before the handler on every other route, whatever its value, so there
// the sweep sends it one hostile value, not each: the same refusal six
// times over was a sixth of the sweep's requests (issue 45).
var coreNameTaken = map[string]func(api.RouteFlags) bool{
	"artifactId": func(f api.RouteFlags) bool { return f.ArtifactID },
	"versionKey": func(f api.RouteFlags) bool { return f.VersionKey },
	"shareKey":   func(f api.RouteFlags) bool { return f.ShareKey },
}

// declRead is one declaration of a function, method or package
// variable: the query names its text reads and what it names.
type declRead struct {
	names     []string
	anyName   bool        // it reads a query parameter named by a variable
	local     []string    // identifiers of its own package
	qualified [][2]string // pkg.Name of another server package: {import path, Name}
	selectors []string    // x.M where x is not a package
}

const serverPkg = "quire/server"

func queryNames(t *testing.T) *queryScope {
	t.Helper()
	q := &queryScope{core: map[string]bool{}, decls: map[string]map[string][]*declRead{},
		imports: map[string]map[string]bool{}, handlers: server.RouteHandlers()}
	// Every package of the server reads query parameters: the core, the
	// request API and the domains (issue 45).
	fset := token.NewFileSet()
	all := map[string]bool{}
	err := filepath.WalkDir(".", func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, p, b, 0)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		pkg := serverPkg
		if dir != "." {
			pkg += "/" + dir
		}
		for _, m := range queryNameRE.FindAllSubmatch(b, -1) {
			all[string(m[1])] = true
		}
		if q.imports[pkg] == nil {
			q.imports[pkg], q.decls[pkg] = map[string]bool{}, map[string][]*declRead{}
		}
		imported := map[string]string{} // name in this file -> server package
		for _, im := range f.Imports {
			path := strings.Trim(im.Path.Value, `"`)
			if !strings.HasPrefix(path, serverPkg+"/") {
				continue
			}
			q.imports[pkg][path] = true
			name := path[strings.LastIndex(path, "/")+1:]
			if im.Name != nil {
				name = im.Name.Name
			}
			imported[name] = path
		}
		add := func(name string, n ast.Node) {
			text := b[fset.Position(n.Pos()).Offset:fset.Position(n.End()).Offset]
			d := &declRead{anyName: name != "ParseDateParam" && queryByVariable.Match(text)}
			for _, m := range queryNameRE.FindAllSubmatch(text, -1) {
				d.names = append(d.names, string(m[1]))
			}
			sels := map[*ast.Ident]bool{}
			ast.Inspect(n, func(x ast.Node) bool {
				switch x := x.(type) {
				case *ast.SelectorExpr:
					sels[x.Sel] = true
					if id, ok := x.X.(*ast.Ident); ok && imported[id.Name] != "" {
						sels[id] = true
						d.qualified = append(d.qualified, [2]string{imported[id.Name], x.Sel.Name})
					} else {
						d.selectors = append(d.selectors, x.Sel.Name)
					}
				case *ast.Ident:
					if !sels[x] {
						d.local = append(d.local, x.Name)
					}
				}
				return true
			})
			q.decls[pkg][name] = append(q.decls[pkg][name], d)
		}
		for _, decl := range f.Decls {
			switch x := decl.(type) {
			case *ast.FuncDecl:
				add(x.Name.Name, x)
				if pkg == serverPkg && x.Name.Name != "routeRows" {
					q.handed = append(q.handed, methodValues(x)...)
				}
			case *ast.GenDecl:
				for _, spec := range x.Specs {
					if vs, ok := spec.(*ast.ValueSpec); ok {
						for _, n := range vs.Names {
							add(n.Name, vs)
						}
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Imports, transitively.
	for changed := true; changed; {
		changed = false
		for _, deps := range q.imports {
			for d := range deps {
				for dd := range q.imports[d] {
					if !deps[dd] {
						deps[dd], changed = true, true
					}
				}
			}
		}
	}
	// Only the packages the server is built from: not the test helpers of
	// internal/servertest.
	for p := range q.decls {
		if p != serverPkg && !q.imports[serverPkg][p] {
			delete(q.decls, p)
		}
	}
	// The core: what routes wraps every request in (the middleware, the
	// token check, Wrap), not the handlers the route table's rows name.
	core, _, anyName := q.reach([][2]string{{serverPkg, "routes"}}, map[[2]string]bool{{serverPkg, "routeRows"}: true})
	if anyName {
		t.Fatalf("the code every request runs reads a query parameter named by a variable: the sweep cannot tell which")
	}
	delete(core, "siteId")
	for n := range core {
		if coreNameTaken[n] == nil {
			t.Fatalf("the code every request runs reads the query parameter %q: coreNameTaken must say which routes' rows take it", n)
		}
	}
	q.core = core
	var handed [][2]string
	for _, n := range q.handed {
		for p := range q.decls {
			if p != serverPkg {
				handed = append(handed, [2]string{p, n})
			}
		}
	}
	q.handedNames, q.handedSeen, q.handedAny = q.reach(handed, nil)
	delete(all, "siteId") // a hostile siteId is a 401/403 before anything else runs
	for k := range all {
		q.all = append(q.all, k)
	}
	sort.Strings(q.all)
	if len(q.all) < 15 {
		t.Fatalf("found only %d query parameter names: %v", len(q.all), q.all)
	}
	return q
}

// methodValues are the names of the selectors x.M that n names but does
// not call: method values and fields it reads.
func methodValues(n ast.Node) []string {
	called := map[ast.Expr]bool{}
	var out []string
	ast.Inspect(n, func(x ast.Node) bool {
		switch x := x.(type) {
		case *ast.CallExpr:
			called[x.Fun] = true
		case *ast.SelectorExpr:
			if !called[x] {
				out = append(out, x.Sel.Name)
			}
		}
		return true
	})
	return out
}

var funcLiteral = regexp.MustCompile(`^func\d+$`)

// handlerDecl is the package and declaration a handler symbol names:
// the method of "pkg.(*T).Method-fm", the function that holds the
// literal of "pkg.(*T).Method.func1".
func handlerDecl(symbol string) (pkg, name string) {
	slash := strings.LastIndex(symbol, "/")
	pkg, rest, _ := strings.Cut(symbol[slash+1:], ".")
	for _, part := range strings.Split(strings.TrimSuffix(rest, "-fm"), ".") {
		if part != "" && !strings.HasPrefix(part, "(") && !funcLiteral.MatchString(part) {
			name = part
		}
	}
	return symbol[:slash+1] + pkg, name
}

// reach walks the code the declarations roots name (pkg, name pairs)
// reaches, past the declarations done holds (their walk is done): it
// returns the query names that code reads, the declarations it visited,
// and whether it reads a name held in a variable.
func (q *queryScope) reach(roots [][2]string, done map[[2]string]bool) (map[string]bool, map[[2]string]bool, bool) {
	set := map[string]bool{}
	seen := map[[2]string]bool{}
	var todo [][2]string
	visit := func(pkg, name string) {
		k := [2]string{pkg, name}
		if !seen[k] && !done[k] && len(q.decls[pkg][name]) > 0 {
			seen[k] = true
			todo = append(todo, k)
		}
	}
	for _, r := range roots {
		visit(r[0], r[1])
	}
	for len(todo) > 0 {
		k := todo[0]
		todo = todo[1:]
		for _, d := range q.decls[k[0]][k[1]] {
			if d.anyName {
				return nil, nil, true
			}
			for _, n := range d.names {
				set[n] = true
			}
			for _, n := range d.local {
				visit(k[0], n)
			}
			for _, pn := range d.qualified {
				visit(pn[0], pn[1])
			}
			for _, n := range d.selectors {
				visit(k[0], n)
				for p := range q.imports[k[0]] {
					visit(p, n)
				}
			}
		}
	}
	return set, seen, false
}

// forRoute is the names rt reads (siteId aside), sorted: the core's and
// those of the code its handler reaches; own are the latter (nil when
// that code reads a name held in a variable: it is sent every name).
func (q *queryScope) forRoute(t *testing.T, rt apiRoute) (names []string, own map[string]bool) {
	t.Helper()
	key := rt.String()
	if rt.method == http.MethodHead {
		key = http.MethodGet + " " + rt.template
	}
	symbol, ok := q.handlers[key]
	if !ok {
		t.Fatalf("%s has no handler in the route table (server.RouteHandlers)", rt)
	}
	pkg, name := handlerDecl(symbol)
	roots := [][2]string{{pkg, name}}
	if len(q.decls[pkg][name]) == 0 {
		// An inlined literal names its caller's package: the declaration
		// of that name in any package.
		roots = roots[:0]
		for p := range q.decls {
			if len(q.decls[p][name]) > 0 {
				roots = append(roots, [2]string{p, name})
			}
		}
		if len(roots) == 0 {
			t.Fatalf("%s: handler %s has no declaration under server/", rt, symbol)
		}
	}
	if q.handedAny {
		return q.all, nil
	}
	// The walk of the handed functions, the same for every route, was
	// made once (queryNames).
	own, _, anyName := q.reach(roots, q.handedSeen)
	if anyName {
		return q.all, nil
	}
	maps.Copy(own, q.handedNames)
	delete(own, "siteId")
	set := maps.Clone(own)
	maps.Copy(set, q.core)
	delete(set, "siteId")
	return slices.Sorted(maps.Keys(set)), own
}

// foreign are names a route does not read, sent to show an
// unknown name is harmless: one no handler reads anywhere, and two read
// elsewhere, taken in turn from every name (i counts the routes, so the
// sweep sends each name somewhere as a foreign one).
func (q *queryScope) foreign(i int, own []string) []string {
	out := []string{"quireNoSuchParameter"}
	for j := 0; j < len(q.all) && len(out) < 3; j++ {
		if n := q.all[(2*i+j)%len(q.all)]; !slices.Contains(own, n) {
			out = append(out, n)
		}
	}
	return out
}

// hostileQueryValues are sent, one parameter at a time, to every route.
var hostileQueryValues = []string{"%FF%FE", "9223372036854775807", "-9223372036854775808", "99999999999999999999999", "-1",
	"%00a%0D%0Ab", url.QueryEscape(strings.Repeat("z", 8<<10))}

// TestRobustness_NoServerErrors sends hostile bodies and query strings to
// every route of the route table: each must get an answer below 500, and
// the server must stay up.
func TestRobustness_NoServerErrors(t *testing.T) {
	s := quiretest.NewServer(t)
	tok := s.Admin()
	params := routeFixtures(t, s, tok)
	routes := apiRoutes(s)
	scope := queryNames(t)
	// The sweep judges each route's own answer: a redirect is not followed.
	// GET /s/:slug answers 302 to its link's target, https://example.com/
	// here, and following it dialed out of loopback once per request (50 s
	// of failed dials a run, answered with status 0, which checked nothing
	// of Quire's). A 500 is never a redirect, so no 500 hides behind one;
	// the routes a redirect leads to are in the route table and swept too.
	s.Client = &http.Client{Timeout: 60 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	// WebDAV wants Basic credentials (an API key as the password), not the
	// admin's bearer token: with the token every /dav request was a 401
	// that reached no WebDAV handler. davReached counts the answers that
	// got past the credential check.
	davKey := servertest.APIKey(t, s, "READ", "WRITE", "DELETE")
	davReached := 0
	// longSent and longerSent count the bodies with a long string, and
	// those sent again with the longer one.
	longSent, longerSent := 0, 0
	// check sends one request and answers its status.
	check := func(t *testing.T, method, path, body string) int {
		t.Helper()
		if path == "/dav" || strings.HasPrefix(path, "/dav/") || strings.HasPrefix(path, "/dav?") {
			var b []byte
			if body != "" {
				b = []byte(body)
			}
			code, rb, _ := servertest.DavDo(t, s, method, path, davKey, b, map[string]string{"Content-Type": "application/json"})
			if code != http.StatusUnauthorized {
				davReached++
			}
			if code >= 500 {
				t.Errorf("%s %.200s with %.80q: %d %.300s", method, path, body, code, rb)
			}
			return code
		}
		var b any
		if body != "" {
			b = body
		}
		r := s.DoHeaders(method, path, b, tok, map[string]string{"Content-Type": "application/json"})
		if r.Status == http.StatusOK && method == http.MethodPost && path == "/system/keys/rotate" {
			// A rotation keeps the keys before it verifying until the
			// next one: the token signed with them stops working at the
			// second. The sweep signs a new one after each, so the
			// requests after it reach their handlers as the admin's.
			tok = s.Admin()
		}
		if r.Status == http.StatusNotImplemented && refusedReason(r) {
			return r.Status // a route refused on purpose (refused.go)
		}
		if r.Status >= 500 {
			t.Errorf("%s %.200s with %.80q: %d %s", method, path, body, r.Status, r.Body)
		}
		return r.Status
	}
	// Deleting routes go last so the others still find the fixtures.
	sort.SliceStable(routes, func(i, j int) bool {
		return routes[i].method != http.MethodDelete && routes[j].method == http.MethodDelete
	})
	for i, rt := range routes {
		t.Run(rt.String(), func(t *testing.T) {
			path, ok := fill(rt, params)
			if !ok {
				t.Fatalf("no fixture for a parameter (see TestRobustness_RouteTableComplete)")
			}
			if takesBody(rt.method) {
				bodies := append(hostileBodies(genericBodies), longContent)
				if sample := routeSamples[rt.String()]; sample != "" {
					for k, v := range params {
						sample = strings.ReplaceAll(sample, "<"+k+">", v)
					}
					bodies = append(bodies, mutations(t, sample)...)
				}
				for _, b := range bodies {
					// The longer string only where the shorter one got past
					// every bound (hostileStringBytes).
					code := check(t, rt.method, path, b.body)
					if b.longer == "" {
						continue
					}
					longSent++
					if code != http.StatusBadRequest {
						longerSent++
						check(t, rt.method, path, b.longer)
					}
				}
			}
			values := hostileQueryValues
			if rt.method == http.MethodHead || rt.String() == "GET /metrics" {
				// HEAD: the GET handler, already covered; HEAD's own answer is
				// what counts. /metrics reads no query parameter, and each
				// answer gathers every metric (a third of the sweep's time).
				values = values[:1]
			}
			own, handler := scope.forRoute(t, rt)
			flags := s.Node.Server.RouteFlags[http.MethodGet+" "+rt.template]
			if rt.method != http.MethodHead {
				flags = s.Node.Server.RouteFlags[rt.String()]
			}
			for _, n := range append(own, scope.foreign(i, own)...) {
				vals := values
				if taken := coreNameTaken[n]; taken != nil && handler != nil && !handler[n] && !taken(flags) {
					vals = vals[:1] // refused before the handler (coreNameTaken)
				}
				for _, v := range vals {
					check(t, rt.method, path+"?"+n+"="+v, "")
				}
			}
			// The token must still be the admin's: with it rejected,
			// every later request is a 401 that checks nothing of its
			// route (the key rotation's second success did that to the
			// third of the sweep after it, unseen, until issue 45).
			if r := s.Do(http.MethodGet, "/version", nil, tok); r.Status != http.StatusOK {
				t.Fatalf("the sweep's admin token no longer works after this route: GET /version %d %s", r.Status, r.Body)
			}
		})
	}
	if davReached == 0 {
		t.Errorf("no /dav request of the sweep got past WebDAV's credential check")
	}
	t.Logf("%d bodies with a %d-byte string, %d of them sent again with a %d-byte one", longSent, midStringBytes, longerSent, hostileStringBytes)
	if longerSent == 0 {
		t.Errorf("no %d-byte string got past the bounds of one field: the sweep sent none of %d bytes", midStringBytes, hostileStringBytes)
	}
	// Odd values of particular parameters (dates, zones, tokens).
	id := params["documentId"]
	gets := []string{"/documents?limit=abc", "/documents?limit=-5", "/documents?date=2026-13-45", "/documents?date=2026-01-01&tz=Mars/Base",
		"/documents?softDeleted=true&start=yesterday", "/documents?softDeleted=true&sort=UP", "/documents?previous=%25%25",
		"/documents/" + id + "/tags?next=zzz", "/documents/" + id + "/url?duration=-1", "/documents/not-a-uuid",
		"/documents/" + id + "/tags/a%2Fb%25ZZ", "/documents/upload?contentLength=-1", "/documents/upload?duration=x",
		"/documents/" + id + "/content?siteId=../../etc", "/uploads/default/" + id, "/downloads/default/" + id + "?signature=x&expires=1",
		"/attributes?next=%%", "/attributes?limit=x", "/documents/" + id + "/attributes?next=abc", "/entityTypes?namespace=X",
		"/entities/nope?next=zz", "/sites/default/classifications?next=@@", "/attributes/%00/allowedValues",
		"/sites/default/schema/document/attributes/x/allowedValues", "/sites/default/sequences/none",
		"/folders?indexKey=%%", "/folders?indexKey=AA", "/folders?path=../../x", "/folders?next=zz",
		"/documents/" + id + "/actions?next=zz", "/documents/" + id + "/actions?limit=x", "/documents?actionStatus=%00",
		"/queues?next=@@", "/queues/x/documents", "/publications/" + id, "/published/default/" + id + "?v=x&signature=y&expires=1",
		"/documents/" + id + "/ai/prompts/x", "/documents/" + id + "/ocr?outputType=X", "/documents/" + id + "/fulltext"}
	for _, g := range gets {
		check(t, http.MethodGet, g, "")
	}
	if r := s.Do(http.MethodGet, "/healthz", nil, ""); r.Status != http.StatusOK {
		t.Fatalf("server not healthy after abuse: %d", r.Status)
	}
}
