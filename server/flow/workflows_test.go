package flow_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// otherSite is the site a caller of site is not in.
func otherSite(site string) string {
	if site == "default" {
		return "finance"
	}
	return "default"
}

// addQueue creates a queue and returns its id.
func addQueue(t *testing.T, s *quiretest.Server, tok, site, name string) string {
	t.Helper()
	r := s.Do(http.MethodPost, "/queues"+site, map[string]any{"name": name}, tok)
	servertest.MustStatus(t, r, http.StatusCreated)
	return quiretest.Str(t, r.JSON(t), "queueId")
}

// addWorkflow creates a workflow and returns its id.
func addWorkflow(t *testing.T, s *quiretest.Server, tok, site string, body any) string {
	t.Helper()
	r := s.Do(http.MethodPost, "/workflows"+site, body, tok)
	servertest.MustStatus(t, r, http.StatusCreated)
	return quiretest.Str(t, r.JSON(t), "workflowId")
}

// docWorkflow returns a document's run through a workflow.
func docWorkflow(t *testing.T, s *quiretest.Server, tok, site, doc, wf string) map[string]any {
	t.Helper()
	r := s.Do(http.MethodGet, "/documents/"+doc+"/workflows/"+wf+site, nil, tok)
	servertest.MustStatus(t, r, http.StatusOK)
	return quiretest.Obj(t, r.JSON(t)["workflow"])
}

// waitStep waits until the document is in step (status IN_PROGRESS) with
// its QUEUE action IN_QUEUE when queued, or until status is reached.
func waitWorkflow(t *testing.T, s *quiretest.Server, tok, site, doc, wf, status, stepID string, queued bool) map[string]any {
	t.Helper()
	var last map[string]any
	servertest.WaitFor(t, fmt.Sprintf("document %s: workflow %s, step %q", doc, status, stepID), func() bool {
		last = docWorkflow(t, s, tok, site, doc, wf)
		if last["status"] != status || (stepID != "" && last["currentStepId"] != stepID) {
			return false
		}
		if !queued {
			return true
		}
		for _, a := range servertest.Actions(t, s, tok, site, doc) {
			if a["type"] == "QUEUE" && a["workflowStepId"] == stepID && a["status"] == "IN_QUEUE" {
				return true
			}
		}
		return false
	})
	return last
}

// TestWorkflows_Definitions: CRUD of workflows on two sites, with the
// refusals (shapes, references, readers, another site, unknown ids,
// workflows in use).
func TestWorkflows_Definitions(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			qid := addQueue(t, s, admin, site.Query, "Approvals")
			body := map[string]any{"name": "Invoices", "description": "approve invoices", "status": "ACTIVE", "steps": []any{
				map[string]any{"stepId": "approve", "queue": map[string]any{"queueId": qid, "approvalGroups": []string{"approvers"}},
					"decisions": []any{map[string]any{"type": "REJECT", "nextStepId": "file"}}},
				map[string]any{"stepId": "file", "action": map[string]any{"type": "MOVE", "parameters": map[string]any{"path": "filed/"}}},
			}}
			id := addWorkflow(t, s, admin, site.Query, body)
			bad := func(mod func(m map[string]any)) map[string]any {
				m := map[string]any{"name": "x", "status": "ACTIVE", "steps": []any{map[string]any{"stepId": "a", "queue": map[string]any{"queueId": qid}}}}
				mod(m)
				return m
			}
			servertest.RunSteps(t, s, admin, site.Query, []servertest.Step{
				{Name: "get", Method: "GET", Path: "/workflows/" + id, Body: nil, Want: 200, Resp: `~"steps":[{"decisions":[{"type":"REJECT","nextStepId":"file"}],"queue":{"approvalGroups":["approvers"],"queueId":"` + qid + `"},"stepId":"approve"},{"action":{"parameters":{"path":"filed/"},"type":"MOVE"},"stepId":"file"}]`},
				{Name: "get in use", Method: "GET", Path: "/workflows/" + id, Body: nil, Want: 200, Resp: `~"inUse":false`},
				{Name: "list", Method: "GET", Path: "/workflows", Body: nil, Want: 200, Resp: `~"workflowId":"` + id + `"`},
				{Name: "list active", Method: "GET", Path: "/workflows?status=ACTIVE", Body: nil, Want: 200, Resp: `~"workflowId":"` + id + `"`},
				{Name: "list inactive", Method: "GET", Path: "/workflows?status=INACTIVE", Body: nil, Want: 200, Resp: `{"workflows":[]}`},
				{Name: "list bad status", Method: "GET", Path: "/workflows?status=SOMETIMES", Body: nil, Want: 400, Resp: `{"errors":[{"key":"status","error":"invalid 'status' parameter, use ACTIVE or INACTIVE"}]}`},
				{Name: "no name", Method: "POST", Path: "/workflows", Body: bad(func(m map[string]any) { delete(m, "name") }), Want: 400, Resp: `{"errors":[{"key":"name","error":"'name' is required"}]}`},
				{Name: "no status", Method: "POST", Path: "/workflows", Body: bad(func(m map[string]any) { delete(m, "status") }), Want: 400, Resp: `{"errors":[{"key":"status","error":"'status' is required"}]}`},
				{Name: "no steps", Method: "POST", Path: "/workflows", Body: bad(func(m map[string]any) { delete(m, "steps") }), Want: 400, Resp: `{"errors":[{"key":"steps","error":"'steps' is required"}]}`},
				{Name: "bad status", Method: "POST", Path: "/workflows", Body: bad(func(m map[string]any) { m["status"] = "ON" }), Want: 400, Resp: `{"errors":[{"key":"status","error":"invalid 'status', use ACTIVE or INACTIVE"}]}`},
				{Name: "unknown queue", Method: "POST", Path: "/workflows", Body: bad(func(m map[string]any) {
					m["steps"] = []any{map[string]any{"queue": map[string]any{"queueId": "nope"}}}
				}), Want: 400, Resp: `{"errors":[{"key":"steps[0].queue.queueId","error":"'queueId' does not exist"}]}`},
				{Name: "empty step", Method: "POST", Path: "/workflows", Body: bad(func(m map[string]any) { m["steps"] = []any{map[string]any{"stepId": "a"}} }), Want: 400,
					Resp: `{"errors":[{"key":"steps[0]","error":"a step needs an 'action', a 'queue', 'mappings' or a 'decision'"}]}`},
				{Name: "duplicate step", Method: "POST", Path: "/workflows", Body: bad(func(m map[string]any) {
					m["steps"] = []any{map[string]any{"stepId": "a", "queue": map[string]any{"queueId": qid}}, map[string]any{"stepId": "a", "queue": map[string]any{"queueId": qid}}}
				}), Want: 400, Resp: `{"errors":[{"key":"steps[1].stepId","error":"duplicate 'stepId' 'a'"}]}`},
				{Name: "unknown next step", Method: "POST", Path: "/workflows", Body: bad(func(m map[string]any) {
					m["steps"] = []any{map[string]any{"stepId": "a", "queue": map[string]any{"queueId": qid}, "decisions": []any{map[string]any{"type": "APPROVE", "nextStepId": "zz"}}}}
				}), Want: 400, Resp: `{"errors":[{"key":"steps[0].decisions.nextStepId","error":"'nextStepId' names no step of the workflow"}]}`},
				{Name: "bad transition", Method: "POST", Path: "/workflows", Body: bad(func(m map[string]any) {
					m["steps"] = []any{map[string]any{"stepId": "a", "queue": map[string]any{"queueId": qid}, "decision": map[string]any{"defaultTransition": map[string]any{"type": "JUMP"}}}}
				}), Want: 400, Resp: `{"errors":[{"key":"steps[0].decision.transition.type","error":"invalid 'type', use STEP, RETRY or COMPLETE"}]}`},
				{Name: "bad criterion source", Method: "POST", Path: "/workflows", Body: bad(func(m map[string]any) {
					m["steps"] = []any{map[string]any{"stepId": "a", "queue": map[string]any{"queueId": qid}, "decision": map[string]any{"conditions": []any{
						map[string]any{"all": []any{map[string]any{"source": "TITLE", "operator": "EQ"}}, "transition": map[string]any{"type": "COMPLETE"}}}}}}
				}), Want: 400, Resp: `{"errors":[{"key":"steps[0].decision.conditions[0].source","error":"invalid 'source', use PATH, CONTENT_TYPE or {\"attributeKey\"}"}]}`},
				{Name: "bad step action", Method: "POST", Path: "/workflows", Body: bad(func(m map[string]any) {
					m["steps"] = []any{map[string]any{"action": map[string]any{"type": "MOVE", "parameters": map[string]any{"path": "no-slash"}}}}
				}), Want: 400, Resp: `{"errors":[{"key":"steps[0].action.parameters.path","error":"'path' parameter must end with '/'"}]}`},
				{Name: "too many steps", Method: "POST", Path: "/workflows", Body: bad(func(m map[string]any) {
					var st []any
					for i := 0; i < 51; i++ {
						st = append(st, map[string]any{"queue": map[string]any{"queueId": qid}})
					}
					m["steps"] = st
				}), Want: 400, Resp: `{"errors":[{"key":"steps","error":"a workflow has at most 50 steps"}]}`},
				{Name: "patch", Method: "PATCH", Path: "/workflows/" + id, Body: map[string]any{"name": "Invoices 2", "status": "INACTIVE"}, Want: 200, Resp: `{"message":"Workflow updated"}`},
				{Name: "patched", Method: "GET", Path: "/workflows/" + id, Body: nil, Want: 200, Resp: `~"name":"Invoices 2"`},
				{Name: "patch bad status", Method: "PATCH", Path: "/workflows/" + id, Body: map[string]any{"status": "MAYBE"}, Want: 400, Resp: `{"errors":[{"key":"status","error":"invalid 'status', use ACTIVE or INACTIVE"}]}`},
				{Name: "put", Method: "PUT", Path: "/workflows/" + id, Body: body, Want: 200, Resp: `{"message":"Workflow set"}`},
				{Name: "put unknown", Method: "PUT", Path: "/workflows/nope", Body: body, Want: 404, Resp: `{"message":"Workflow 'nope' not found"}`},
				{Name: "put create", Method: "PUT", Path: "/workflows/mine?createIfMissing=true", Body: body, Want: 200, Resp: `{"message":"Workflow set"}`},
				{Name: "put bad flag", Method: "PUT", Path: "/workflows/mine?createIfMissing=yes", Body: body, Want: 400, Resp: `{"errors":[{"key":"createIfMissing","error":"invalid 'createIfMissing' parameter"}]}`},
				{Name: "get unknown", Method: "GET", Path: "/workflows/nope", Body: nil, Want: 404, Resp: `{"message":"Workflow 'nope' not found"}`},
				{Name: "documents of unknown", Method: "GET", Path: "/workflows/nope/documents", Body: nil, Want: 404, Resp: `{"message":"Workflow 'nope' not found"}`},
				{Name: "queue in use", Method: "DELETE", Path: "/queues/" + qid, Body: nil, Want: 400, Resp: `{"errors":[{"key":"queueId","error":"queue is used by workflow '` + id + `'"}]}`},
				{Name: "two approve decisions", Method: "POST", Path: "/workflows", Body: bad(func(m map[string]any) {
					m["steps"] = []any{map[string]any{"stepId": "a", "queue": map[string]any{"queueId": qid}, "decisions": []any{
						map[string]any{"type": "APPROVE", "nextStepId": "a"}, map[string]any{"type": "APPROVE", "nextStepId": "a"}}}}
				}), Want: 400, Resp: `{"errors":[{"key":"steps[0].decisions.type","error":"duplicate decision 'APPROVE'"}]}`},
				{Name: "delete created", Method: "DELETE", Path: "/workflows/mine", Body: nil, Want: 200, Resp: `{"message":"Workflow deleted"}`},
				{Name: "delete unknown", Method: "DELETE", Path: "/workflows/mine", Body: nil, Want: 404, Resp: `{"message":"Workflow 'mine' not found"}`},
			})
			// Callers without GOVERN, or of another site, are refused.
			siteName := strings.TrimPrefix(site.Query, "?siteId=")
			if siteName == "" {
				siteName = "default"
			}
			for _, c := range []struct {
				name, tok string
				method    string
				path      string
				want      int
			}{
				{"writer adds", s.Token("wendy", siteName), "POST", "/workflows", 401},
				{"writer deletes", s.Token("wendy", siteName), "DELETE", "/workflows/" + id, 401},
				{"writer patches", s.Token("wendy", siteName), "PATCH", "/workflows/" + id, 401},
				{"reader reads", s.Token("rita", siteName+"_read"), "GET", "/workflows/" + id, 200},
				{"another site reads", s.Token("oscar", otherSite(siteName)), "GET", "/workflows/" + id + "?siteId=" + siteName, 401},
				{"another site's own view", s.Token("oscar", otherSite(siteName), otherSite(siteName)+"_govern"), "GET", "/workflows/" + id + "?siteId=" + otherSite(siteName), 404},
			} {
				path := c.path
				if !strings.Contains(path, "siteId=") {
					path += site.Query
				}
				r := s.Do(c.method, path, body, c.tok)
				if r.Status != c.want {
					t.Errorf("%s: %d %s, want %d", c.name, r.Status, r.Body, c.want)
				}
			}
			// In use: a document in it keeps it (and its steps).
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/workflows/"+id+site.Query, map[string]any{"status": "ACTIVE"}, admin), http.StatusOK)
			doc := servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": "in/a.txt", "content": "a"})
			servertest.RunSteps(t, s, admin, site.Query, []servertest.Step{
				{Name: "start", Method: "POST", Path: "/documents/" + doc + "/workflows", Body: map[string]any{"workflowId": id}, Want: 201, Resp: `{"message":"Document added to workflow"}`},
				{Name: "start again", Method: "POST", Path: "/documents/" + doc + "/workflows", Body: map[string]any{"workflowId": id}, Want: 400, Resp: `{"errors":[{"key":"workflowId","error":"document is already in workflow '` + id + `'"}]}`},
				{Name: "start unknown", Method: "POST", Path: "/documents/" + doc + "/workflows", Body: map[string]any{"workflowId": "nope"}, Want: 400, Resp: `{"errors":[{"key":"workflowId","error":"'workflowId' does not exist"}]}`},
				{Name: "start without id", Method: "POST", Path: "/documents/" + doc + "/workflows", Body: map[string]any{}, Want: 400, Resp: `{"errors":[{"key":"workflowId","error":"'workflowId' is required"}]}`},
				{Name: "start unknown document", Method: "POST", Path: "/documents/00000000-0000-0000-0000-000000000000/workflows", Body: map[string]any{"workflowId": id}, Want: 404, Resp: ""},
				{Name: "in use", Method: "GET", Path: "/workflows/" + id, Body: nil, Want: 200, Resp: `~"inUse":true`},
				{Name: "delete in use", Method: "DELETE", Path: "/workflows/" + id, Body: nil, Want: 400, Resp: `{"errors":[{"key":"workflowId","error":"workflow is in use: documents are in it"}]}`},
				{Name: "set in use", Method: "PUT", Path: "/workflows/" + id, Body: body, Want: 400, Resp: `{"errors":[{"key":"workflowId","error":"workflow is in use: its steps cannot change while documents are in it"}]}`},
				{Name: "its documents", Method: "GET", Path: "/workflows/" + id + "/documents", Body: nil, Want: 200, Resp: `~"documentId":"` + doc + `"`},
			})
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/workflows/"+id+site.Query, map[string]any{"status": "INACTIVE"}, admin), http.StatusOK)
			other := servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": "in/b.txt", "content": "b"})
			servertest.RunSteps(t, s, admin, site.Query, []servertest.Step{
				{Name: "inactive", Method: "POST", Path: "/documents/" + other + "/workflows", Body: map[string]any{"workflowId": id}, Want: 400, Resp: `{"errors":[{"key":"workflowId","error":"workflow is not ACTIVE"}]}`},
				{Name: "not in it", Method: "GET", Path: "/documents/" + other + "/workflows/" + id, Body: nil, Want: 404, Resp: `{"message":"Document ` + other + ` is not in workflow '` + id + `'"}`},
				{Name: "no workflows", Method: "GET", Path: "/documents/" + other + "/workflows", Body: nil, Want: 200, Resp: `{"workflows":[]}`},
			})
			// A reader may not put a document in a workflow.
			r := s.Do(http.MethodPost, "/documents/"+other+"/workflows"+site.Query, map[string]any{"workflowId": id}, s.Token("rita", siteName+"_read"))
			servertest.MustStatus(t, r, http.StatusUnauthorized)
		})
	}
}

// siteNameOf is the site a test site query names.
func siteNameOf(query string) string {
	if n := strings.TrimPrefix(query, "?siteId="); n != "" {
		return n
	}
	return "default"
}

// approvalWorkflow: approve (queue, approvers only; REJECT goes to fix),
// sum (CHECKSUM; amount > 1000 goes to big, else COMPLETE), big (a second
// queue), fix (MOVE to rejected/).
func approvalWorkflow(t *testing.T, s *quiretest.Server, tok, site string) (wf, q1, q2 string) {
	t.Helper()
	q1, q2 = addQueue(t, s, tok, site, "Approvals"), addQueue(t, s, tok, site, "Big amounts")
	wf = addWorkflow(t, s, tok, site, map[string]any{"name": "Invoices", "description": "d", "status": "ACTIVE", "steps": []any{
		map[string]any{"stepId": "approve", "queue": map[string]any{"queueId": q1, "approvalGroups": []string{"approvers"}},
			"decisions": []any{map[string]any{"type": "REJECT", "nextStepId": "fix"}}},
		map[string]any{"stepId": "sum", "action": map[string]any{"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA256"}},
			"decision": map[string]any{"conditions": []any{map[string]any{
				"all":        []any{map[string]any{"source": map[string]any{"attributeKey": "amount"}, "operator": "GT", "numberValue": 1000}},
				"transition": map[string]any{"type": "STEP", "stepId": "big"}}},
				"defaultTransition": map[string]any{"type": "COMPLETE"}}},
		map[string]any{"stepId": "big", "queue": map[string]any{"queueId": q2}, "decision": map[string]any{"defaultTransition": map[string]any{"type": "COMPLETE"}}},
		map[string]any{"stepId": "fix", "action": map[string]any{"type": "MOVE", "parameters": map[string]any{"path": "rejected/"}}},
	}})
	return wf, q1, q2
}

// actionTypes returns "TYPE:STATUS" of a document's actions in order.
func actionTypes(t *testing.T, s *quiretest.Server, tok, site, doc string) []string {
	t.Helper()
	var out []string
	for _, a := range servertest.Actions(t, s, tok, site, doc) {
		out = append(out, quiretest.Str(t, a, "type")+":"+quiretest.Str(t, a, "status"))
	}
	return out
}

// TestWorkflows_DocumentThroughSteps: documents move through queue steps
// (decided on the workflow route and on Quire's queue alias), action steps
// and condition routing to the workflow's end; approval groups, finished
// steps and rejections without a route are refused or end the workflow.
func TestWorkflows_DocumentThroughSteps(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			name := siteNameOf(site.Query)
			servertest.MustStatus(t, s.Do(http.MethodPost, "/attributes"+site.Query, map[string]any{"attribute": map[string]any{"key": "amount", "dataType": "NUMBER"}}, admin), http.StatusCreated)
			wf, q1, q2 := approvalWorkflow(t, s, admin, site.Query)
			approver, writer := s.Token("alice", name, "approvers"), s.Token("wendy", name)
			newDoc := func(path string, amount float64) string {
				id := servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": path, "content": "invoice", "attributes": []any{map[string]any{"key": "amount", "numberValue": amount}}, "actions": []any{}})
				servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+id+"/workflows"+site.Query, map[string]any{"workflowId": wf}, writer), http.StatusCreated)
				return id
			}
			decide := func(tok, doc, decision string) *quiretest.Response {
				return s.Do(http.MethodPost, "/documents/"+doc+"/workflow/"+wf+"/decisions"+site.Query, map[string]any{"decision": decision, "comments": "ok"}, tok)
			}

			// A: small amount, approved: the CHECKSUM step ends it.
			small := newDoc("inbox/small.txt", 50)
			dw := waitWorkflow(t, s, admin, site.Query, small, wf, "IN_PROGRESS", "approve", true)
			if dw["name"] != "Invoices" || dw["actionCount"] != float64(1) || dw["completedActionCount"] != float64(0) {
				t.Fatalf("document workflow %v", dw)
			}
			r := s.Do(http.MethodGet, "/queues/"+q1+"/documents"+site.Query, nil, admin)
			servertest.MustStatus(t, r, http.StatusOK)
			if doc := quiretest.Item(t, r.JSON(t), "documents", 0); quiretest.Obj(t, doc["workflow"])["workflowId"] != wf || quiretest.Obj(t, doc["document"])["documentId"] != small {
				t.Fatalf("queue documents %s", r.Body)
			}
			servertest.MustStatus(t, decide(writer, small, "APPROVE"), http.StatusUnauthorized) // not an approver
			servertest.MustBody(t, decide(approver, small, "APPROVE"), `{"message":"Decision saved"}`)
			waitWorkflow(t, s, admin, site.Query, small, wf, "COMPLETE", "", false)
			if got := actionTypes(t, s, admin, site.Query, small); !servertest.EqualStrings(got, []string{"QUEUE:ASYNC_COMPLETE", "CHECKSUM:COMPLETE"}) {
				t.Fatalf("actions %v", got)
			}
			r = decide(approver, small, "APPROVE")
			servertest.MustStatus(t, r, http.StatusBadRequest)
			servertest.MustBody(t, r, `{"errors":[{"key":"decision","error":"document '`+small+`' awaits no decision in workflow '`+wf+`': the workflow is COMPLETE"}]}`)
			if a := servertest.NthAction(t, s, admin, site.Query, small, 0); a["workflowId"] != wf || a["workflowStepId"] != "approve" || quiretest.Obj(t, a["metadata"])["decision"] != "APPROVE" {
				t.Fatalf("queue action %v", a)
			}
			if r := s.Do(http.MethodGet, "/workflows/"+wf+"/documents"+site.Query, nil, admin); strings.Contains(string(r.Body), small) {
				t.Fatalf("a finished document is still listed in the workflow: %s", r.Body)
			}

			// B: big amount, approved on Quire's queue route (the alias,
			// approval groups checked too), then routed to the second queue.
			big := newDoc("inbox/big.txt", 5000)
			waitWorkflow(t, s, admin, site.Query, big, wf, "IN_PROGRESS", "approve", true)
			alias := "/queues/" + q1 + "/documents/" + big + "/decisions" + site.Query
			servertest.MustStatus(t, s.Do(http.MethodPost, alias, map[string]any{"decision": "APPROVE"}, writer), http.StatusUnauthorized)
			servertest.MustBody(t, s.Do(http.MethodPost, alias, map[string]any{"decision": "APPROVE"}, approver), `{"message":"Decision saved"}`)
			waitWorkflow(t, s, admin, site.Query, big, wf, "IN_PROGRESS", "big", true)
			if r := s.Do(http.MethodGet, "/queues/"+q2+"/documents"+site.Query, nil, admin); !strings.Contains(string(r.Body), big) {
				t.Fatalf("second queue: %s", r.Body)
			}
			servertest.MustBody(t, decide(writer, big, "approve"), `{"message":"Decision saved"}`) // no approval groups on this step
			waitWorkflow(t, s, admin, site.Query, big, wf, "COMPLETE", "", false)
			if got := actionTypes(t, s, admin, site.Query, big); !servertest.EqualStrings(got, []string{"QUEUE:ASYNC_COMPLETE", "CHECKSUM:COMPLETE", "QUEUE:ASYNC_COMPLETE"}) {
				t.Fatalf("actions %v", got)
			}

			// C: rejected in approve: the REJECT route moves it to rejected/.
			rej := newDoc("inbox/rej.txt", 10)
			waitWorkflow(t, s, admin, site.Query, rej, wf, "IN_PROGRESS", "approve", true)
			servertest.MustStatus(t, decide(approver, rej, "REJECT"), http.StatusCreated)
			waitWorkflow(t, s, admin, site.Query, rej, wf, "COMPLETE", "", false)
			if p := s.Do(http.MethodGet, "/documents/"+rej+site.Query, nil, admin).JSON(t)["path"]; p != "rejected/rej.txt" {
				t.Fatalf("rejected document at %v", p)
			}

			// D: rejected in big, which has no REJECT route: FAILED.
			failed := newDoc("inbox/failed.txt", 2000)
			waitWorkflow(t, s, admin, site.Query, failed, wf, "IN_PROGRESS", "approve", true)
			servertest.MustStatus(t, decide(approver, failed, "APPROVE"), http.StatusCreated)
			waitWorkflow(t, s, admin, site.Query, failed, wf, "IN_PROGRESS", "big", true)
			servertest.MustStatus(t, decide(approver, failed, "REJECT"), http.StatusCreated)
			dw = waitWorkflow(t, s, admin, site.Query, failed, wf, "FAILED", "big", false)
			if dw["message"] != "rejected in step 'big'" {
				t.Fatalf("failed workflow %v", dw)
			}
			r = decide(approver, failed, "APPROVE")
			servertest.MustBody(t, r, `{"errors":[{"key":"decision","error":"document '`+failed+`' awaits no decision in workflow '`+wf+`': the workflow is FAILED"}]}`)

			// Refusals of the decision route.
			other := servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": "inbox/none.txt", "content": "x"})
			servertest.RunSteps(t, s, admin, site.Query, []servertest.Step{
				{Name: "no decision", Method: "POST", Path: "/documents/" + small + "/workflow/" + wf + "/decisions", Body: map[string]any{}, Want: 400, Resp: `{"errors":[{"key":"decision","error":"'decision' is required"}]}`},
				{Name: "bad decision", Method: "POST", Path: "/documents/" + small + "/workflow/" + wf + "/decisions", Body: map[string]any{"decision": "MAYBE"}, Want: 400, Resp: `{"errors":[{"key":"decision","error":"invalid 'decision', use APPROVE or REJECT"}]}`},
				{Name: "not in the workflow", Method: "POST", Path: "/documents/" + other + "/workflow/" + wf + "/decisions", Body: map[string]any{"decision": "APPROVE"}, Want: 404, Resp: `{"message":"Document ` + other + ` is not in workflow '` + wf + `'"}`},
				{Name: "unknown document", Method: "POST", Path: "/documents/00000000-0000-0000-0000-000000000000/workflow/" + wf + "/decisions", Body: map[string]any{"decision": "APPROVE"}, Want: 404, Resp: ""},
				{Name: "list", Method: "GET", Path: "/documents/" + small + "/workflows", Body: nil, Want: 200, Resp: `~"status":"COMPLETE"`},
			})
			r = s.Do(http.MethodPost, "/documents/"+small+"/workflow/"+wf+"/decisions"+site.Query, map[string]any{"decision": "APPROVE"}, s.Token("rita", name+"_read", "approvers"))
			servertest.MustStatus(t, r, http.StatusUnauthorized)
			r = s.Do(http.MethodPost, "/documents/"+small+"/workflow/"+wf+"/decisions?siteId="+name, map[string]any{"decision": "APPROVE"}, s.Token("oscar", otherSite(name), "approvers"))
			servertest.MustStatus(t, r, http.StatusUnauthorized)
		})
	}
}

// TestWorkflows_ConcurrentDecisions: decisions sent at once on a document
// waiting in a step give exactly one outcome: one 201, the others refused
// by the applier, and the document enters the next step once.
func TestWorkflows_ConcurrentDecisions(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			wf, _, _ := approvalWorkflow(t, s, admin, site.Query)
			for round := 0; round < 3; round++ {
				doc := servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": fmt.Sprintf("race/%d.txt", round), "content": "x", "actions": []any{}})
				servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+doc+"/workflows"+site.Query, map[string]any{"workflowId": wf}, admin), http.StatusCreated)
				waitWorkflow(t, s, admin, site.Query, doc, wf, "IN_PROGRESS", "approve", true)
				const n = 12
				codes := make([]int, n)
				bodies := make([]string, n)
				var start, done sync.WaitGroup
				start.Add(1)
				for i := 0; i < n; i++ {
					done.Add(1)
					go func(i int) {
						defer done.Done()
						decision := "APPROVE"
						if i%2 == 1 {
							decision = "REJECT"
						}
						start.Wait()
						r := s.Do(http.MethodPost, "/documents/"+doc+"/workflow/"+wf+"/decisions"+site.Query, map[string]any{"decision": decision}, admin)
						codes[i], bodies[i] = r.Status, string(r.Body)
					}(i)
				}
				start.Done()
				done.Wait()
				ok := 0
				for i, c := range codes {
					switch {
					case c == http.StatusCreated:
						ok++
					case c != http.StatusBadRequest || !strings.Contains(bodies[i], "awaits no decision"):
						t.Errorf("decision %d: %d %s, want 201 once and 400 'awaits no decision'", i, c, bodies[i])
					}
				}
				if ok != 1 {
					t.Fatalf("%d decisions succeeded, want exactly 1: %v", ok, codes)
				}
				// Whichever won, the document left the approve step once.
				servertest.WaitFor(t, "the document to leave the approve step", func() bool {
					return docWorkflow(t, s, admin, site.Query, doc, wf)["currentStepId"] != "approve"
				})
				got := actionTypes(t, s, admin, site.Query, doc)
				queues, next := 0, 0
				for _, a := range got {
					switch {
					case strings.HasPrefix(a, "QUEUE:"):
						queues++
					case strings.HasPrefix(a, "CHECKSUM:"), strings.HasPrefix(a, "MOVE:"):
						next++
					}
				}
				if queues != 1 || next != 1 || len(got) != 2 {
					t.Fatalf("actions after the race %v, want one QUEUE and one next-step action", got)
				}
			}
		})
	}
}

// TestWorkflows_CrashSafe: the server is closed while step two's action
// (a WEBHOOK whose receiver holds the first call) is running, and reopened
// on the same data: the document ends in exactly one step, with each
// step's action once, and goes on to the end.
func TestWorkflows_CrashSafe(t *testing.T) {
	var calls atomic.Int32
	first, release := make(chan struct{}), make(chan struct{})
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			close(first)
			select { // held until the server goes away (bounded)
			case <-r.Context().Done():
			case <-release:
			case <-time.After(20 * time.Second):
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer recv.Close()
	dir := t.TempDir()
	s := quiretest.StartServer(t, dir, quiretest.AllowLoopbackOutbound)
	admin := s.Admin()
	type fixture struct{ wf, q1, q3, doc string }
	fx := map[string]*fixture{}
	for _, site := range servertest.Sites {
		q1, q3 := addQueue(t, s, admin, site.Query, "first"), addQueue(t, s, admin, site.Query, "third")
		wf := addWorkflow(t, s, admin, site.Query, map[string]any{"name": "Three steps", "status": "ACTIVE", "steps": []any{
			map[string]any{"stepId": "one", "queue": map[string]any{"queueId": q1}},
			map[string]any{"stepId": "two", "action": map[string]any{"type": "WEBHOOK", "parameters": map[string]any{"url": recv.URL + "/hook"}}},
			map[string]any{"stepId": "three", "queue": map[string]any{"queueId": q3}},
		}})
		doc := servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": "crash/doc.txt", "content": "crash-safe", "actions": []any{}})
		servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+doc+"/workflows"+site.Query, map[string]any{"workflowId": wf}, admin), http.StatusCreated)
		waitWorkflow(t, s, admin, site.Query, doc, wf, "IN_PROGRESS", "one", true)
		fx[site.Name] = &fixture{wf, q1, q3, doc}
	}
	for _, site := range servertest.Sites {
		f := fx[site.Name]
		servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+f.doc+"/workflow/"+f.wf+"/decisions"+site.Query, map[string]any{"decision": "APPROVE"}, admin), http.StatusCreated)
	}
	select {
	case <-first:
	case <-time.After(30 * time.Second):
		t.Fatalf("step two's webhook never ran")
	}
	// Closed mid-way: a webhook of step two is running. The shutdown
	// gives running actions until its context ends, then cuts them short
	// (they run again at the next start): a second here, not the 10 s of
	// quiretest's Close, which the held call always ran into (issue 45).
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	err := s.Node.Close(ctx)
	cancel()
	if err != nil {
		t.Fatalf("close mid-way: %v", err)
	}
	s.Node = nil
	close(release)
	s = quiretest.StartServer(t, dir, quiretest.AllowLoopbackOutbound)
	admin = s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			f := fx[site.Name]
			waitWorkflow(t, s, admin, site.Query, f.doc, f.wf, "IN_PROGRESS", "three", true)
			if got := actionTypes(t, s, admin, site.Query, f.doc); !servertest.EqualStrings(got, []string{"QUEUE:ASYNC_COMPLETE", "WEBHOOK:COMPLETE", "QUEUE:IN_QUEUE"}) {
				t.Fatalf("actions after the restart %v", got)
			}
			for q, want := range map[string]bool{f.q1: false, f.q3: true} {
				r := s.Do(http.MethodGet, "/queues/"+q+"/documents"+site.Query, nil, admin)
				servertest.MustStatus(t, r, http.StatusOK)
				if n := strings.Count(string(r.Body), `"documentId":"`+f.doc+`"`); (n > 0) != want {
					t.Fatalf("queue %s lists the document %d times: %s", q, n, r.Body)
				}
			}
			servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+f.doc+"/workflow/"+f.wf+"/decisions"+site.Query, map[string]any{"decision": "APPROVE"}, admin), http.StatusCreated)
			dw := waitWorkflow(t, s, admin, site.Query, f.doc, f.wf, "COMPLETE", "", false)
			if _, ok := dw["completedDate"]; !ok {
				t.Fatalf("no completedDate on the finished workflow: %v", dw)
			}
		})
	}
}

// TestRulesets_StartWorkflows: rulesets and rules CRUD on two sites with
// their refusals; a rule whose conditions match a document created or
// updated after it exists starts its workflow, once.
func TestRulesets_StartWorkflows(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			name := siteNameOf(site.Query)
			qid := addQueue(t, s, admin, site.Query, "Inbox")
			wf := addWorkflow(t, s, admin, site.Query, map[string]any{"name": "Review", "status": "ACTIVE", "steps": []any{
				map[string]any{"stepId": "review", "queue": map[string]any{"queueId": qid}}}})
			before := servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": "invoices/old.txt", "content": "x", "contentType": "text/plain", "actions": []any{}})
			r := s.Do(http.MethodPost, "/rulesets"+site.Query, map[string]any{"ruleset": map[string]any{"description": "Invoices", "priority": 1, "version": 1, "status": "ACTIVE"}}, admin)
			servertest.MustStatus(t, r, http.StatusCreated)
			rs := quiretest.Str(t, r.JSON(t), "rulesetId")
			rule := map[string]any{"rule": map[string]any{"priority": 1, "description": "text invoices", "workflowId": wf, "status": "ACTIVE",
				"conditions": map[string]any{"must": []any{
					map[string]any{"criterion": "CONTENT_TYPE", "value": "text/plain", "operation": "EQ"},
					map[string]any{"criterion": "FIELD", "fieldName": "path", "value": "invoices/", "operation": "CONTAINS"},
				}}}}
			r = s.Do(http.MethodPost, "/rulesets/"+rs+"/rules"+site.Query, rule, admin)
			servertest.MustStatus(t, r, http.StatusCreated)
			ruleID := quiretest.Str(t, r.JSON(t), "ruleId")
			withCond := func(c map[string]any) map[string]any {
				return map[string]any{"rule": map[string]any{"workflowId": wf, "conditions": map[string]any{"must": []any{c}}}}
			}
			servertest.RunSteps(t, s, admin, site.Query, []servertest.Step{
				{Name: "get ruleset", Method: "GET", Path: "/rulesets/" + rs, Body: nil, Want: 200, Resp: `~"description":"Invoices","insertedDate"`},
				{Name: "list rulesets", Method: "GET", Path: "/rulesets", Body: nil, Want: 200, Resp: `~"rulesetId":"` + rs + `"`},
				{Name: "get rule", Method: "GET", Path: "/rulesets/" + rs + "/rules/" + ruleID, Body: nil, Want: 200, Resp: `~"conditions":{"must":[{"criterion":"CONTENT_TYPE","operation":"EQ","value":"text/plain"},{"criterion":"FIELD","fieldName":"path","operation":"CONTAINS","value":"invoices/"}]}`},
				{Name: "list rules", Method: "GET", Path: "/rulesets/" + rs + "/rules", Body: nil, Want: 200, Resp: `~"ruleId":"` + ruleID + `"`},
				{Name: "no ruleset body", Method: "POST", Path: "/rulesets", Body: map[string]any{}, Want: 400, Resp: `{"errors":[{"key":"ruleset","error":"'ruleset' is required"}]}`},
				{Name: "bad ruleset status", Method: "POST", Path: "/rulesets", Body: map[string]any{"ruleset": map[string]any{"status": "OFF"}}, Want: 400, Resp: `{"errors":[{"key":"status","error":"invalid 'status', use ACTIVE or INACTIVE"}]}`},
				{Name: "huge priority", Method: "POST", Path: "/rulesets", Body: map[string]any{"ruleset": map[string]any{"priority": 1e300}}, Want: 400, Resp: `{"errors":[{"key":"priority","error":"invalid 'priority'"}]}`},
				{Name: "no rule body", Method: "POST", Path: "/rulesets/" + rs + "/rules", Body: map[string]any{}, Want: 400, Resp: `{"errors":[{"key":"rule","error":"'rule' is required"}]}`},
				{Name: "no workflow", Method: "POST", Path: "/rulesets/" + rs + "/rules", Body: map[string]any{"rule": map[string]any{"conditions": map[string]any{"must": []any{map[string]any{"criterion": "CONTENT_TYPE", "value": "x", "operation": "EQ"}}}}}, Want: 400,
					Resp: `{"errors":[{"key":"workflowId","error":"'workflowId' is required"}]}`},
				{Name: "unknown workflow", Method: "POST", Path: "/rulesets/" + rs + "/rules", Body: map[string]any{"rule": map[string]any{"workflowId": "nope", "conditions": map[string]any{"must": []any{map[string]any{"criterion": "CONTENT_TYPE", "value": "x", "operation": "EQ"}}}}}, Want: 400,
					Resp: `{"errors":[{"key":"workflowId","error":"'workflowId' does not exist"}]}`},
				{Name: "no conditions", Method: "POST", Path: "/rulesets/" + rs + "/rules", Body: map[string]any{"rule": map[string]any{"workflowId": wf}}, Want: 400, Resp: `{"errors":[{"key":"conditions.must","error":"'conditions.must' is required"}]}`},
				{Name: "text criterion", Method: "POST", Path: "/rulesets/" + rs + "/rules", Body: withCond(map[string]any{"criterion": "TEXT", "value": "x", "operation": "CONTAINS"}), Want: 400,
					Resp: `{"errors":[{"key":"conditions.must[0].criterion","error":"criterion 'TEXT' is not supported: rules are matched when a document is created or updated, before its content is read"}]}`},
				{Name: "bad operation", Method: "POST", Path: "/rulesets/" + rs + "/rules", Body: withCond(map[string]any{"criterion": "CONTENT_TYPE", "value": "x", "operation": "LIKE"}), Want: 400,
					Resp: `{"errors":[{"key":"conditions.must[0].operation","error":"invalid 'operation', use EQ or CONTAINS"}]}`},
				{Name: "attribute without key", Method: "POST", Path: "/rulesets/" + rs + "/rules", Body: withCond(map[string]any{"attribute": "ATTRIBUTE", "value": "x", "operation": "EQ"}), Want: 400,
					Resp: `{"errors":[{"key":"conditions.must[0].attributeKey","error":"'attributeKey' is required for criterion ATTRIBUTE"}]}`},
				{Name: "bad field", Method: "POST", Path: "/rulesets/" + rs + "/rules", Body: withCond(map[string]any{"criterion": "FIELD", "fieldName": "title", "value": "x", "operation": "EQ"}), Want: 400,
					Resp: `{"errors":[{"key":"conditions.must[0].fieldName","error":"'fieldName' must be one of path, contentType, userId, deepLinkPath, checksum"}]}`},
				{Name: "rule of unknown ruleset", Method: "POST", Path: "/rulesets/nope/rules", Body: rule, Want: 404, Resp: `{"message":"Ruleset 'nope' not found"}`},
				{Name: "unknown ruleset", Method: "GET", Path: "/rulesets/nope", Body: nil, Want: 404, Resp: `{"message":"Ruleset 'nope' not found"}`},
				{Name: "unknown rule", Method: "GET", Path: "/rulesets/" + rs + "/rules/nope", Body: nil, Want: 404, Resp: `{"message":"Rule 'nope' not found"}`},
				{Name: "rules of unknown ruleset", Method: "GET", Path: "/rulesets/nope/rules", Body: nil, Want: 404, Resp: `{"message":"Ruleset 'nope' not found"}`},
				{Name: "workflow used by a rule", Method: "DELETE", Path: "/workflows/" + wf, Body: nil, Want: 400, Resp: `{"errors":[{"key":"workflowId","error":"workflow is in use by rule '` + rs + `/` + ruleID + `'"}]}`},
			})
			for _, c := range []struct {
				name, tok, method, path string
				want                    int
			}{
				{"writer adds a ruleset", s.Token("wendy", name), "POST", "/rulesets", 401},
				{"writer adds a rule", s.Token("wendy", name), "POST", "/rulesets/" + rs + "/rules", 401},
				{"writer deletes a rule", s.Token("wendy", name), "DELETE", "/rulesets/" + rs + "/rules/" + ruleID, 401},
				{"reader reads", s.Token("rita", name+"_read"), "GET", "/rulesets/" + rs + "/rules/" + ruleID, 200},
				{"another site", s.Token("oscar", otherSite(name)), "GET", "/rulesets/" + rs + "?siteId=" + name, 401},
			} {
				p := c.path
				if !strings.Contains(p, "siteId=") {
					p += site.Query
				}
				if r := s.Do(c.method, p, rule, c.tok); r.Status != c.want {
					t.Errorf("%s: %d %s, want %d", c.name, r.Status, r.Body, c.want)
				}
			}

			// Matching documents created after the rule start the workflow.
			match := servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": "invoices/new.txt", "content": "x", "contentType": "text/plain", "actions": []any{}})
			dw := waitWorkflow(t, s, admin, site.Query, match, wf, "IN_PROGRESS", "review", true)
			if dw["ruleId"] != rs+"/"+ruleID {
				t.Fatalf("started by %v", dw["ruleId"])
			}
			other := servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": "letters/new.txt", "content": "x", "contentType": "text/plain", "actions": []any{}})
			if r := s.Do(http.MethodGet, "/documents/"+other+"/workflows"+site.Query, nil, admin); string(r.Body) != `{"workflows":[]}` {
				t.Fatalf("a document the rule does not match is in a workflow: %s", r.Body)
			}
			if r := s.Do(http.MethodGet, "/documents/"+before+"/workflows"+site.Query, nil, admin); string(r.Body) != `{"workflows":[]}` {
				t.Fatalf("a document older than the rule is in a workflow: %s", r.Body)
			}
			// An update that makes a document match starts it; a later
			// update does not start it twice.
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+other+site.Query, map[string]any{"path": "invoices/moved.txt"}, admin), http.StatusOK)
			waitWorkflow(t, s, admin, site.Query, other, wf, "IN_PROGRESS", "review", true)
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/documents/"+other+site.Query, map[string]any{"path": "invoices/moved-again.txt"}, admin), http.StatusOK)
			if got := actionTypes(t, s, admin, site.Query, other); !servertest.EqualStrings(got, []string{"QUEUE:IN_QUEUE"}) {
				t.Fatalf("actions %v, want the workflow started once", got)
			}
			// An INACTIVE rule (and a deleted one) starts nothing.
			servertest.RunSteps(t, s, admin, site.Query, []servertest.Step{
				{Name: "deactivate rule", Method: "PATCH", Path: "/rulesets/" + rs + "/rules/" + ruleID, Body: map[string]any{"rule": map[string]any{"status": "INACTIVE"}}, Want: 200, Resp: `{"message":"Rule updated"}`},
				{Name: "inactive", Method: "GET", Path: "/rulesets/" + rs + "/rules/" + ruleID, Body: nil, Want: 200, Resp: `~"status":"INACTIVE"`},
			})
			quiet := servertest.AddDoc(t, s, admin, site.Query, map[string]any{"path": "invoices/quiet.txt", "content": "x", "contentType": "text/plain", "actions": []any{}})
			if r := s.Do(http.MethodGet, "/documents/"+quiet+"/workflows"+site.Query, nil, admin); string(r.Body) != `{"workflows":[]}` {
				t.Fatalf("an inactive rule started a workflow: %s", r.Body)
			}
			servertest.RunSteps(t, s, admin, site.Query, []servertest.Step{
				{Name: "patch ruleset", Method: "PATCH", Path: "/rulesets/" + rs, Body: map[string]any{"ruleset": map[string]any{"description": "Invoices 2"}}, Want: 200, Resp: `{"message":"Ruleset updated"}`},
				{Name: "patched", Method: "GET", Path: "/rulesets/" + rs, Body: nil, Want: 200, Resp: `~"description":"Invoices 2"`},
				{Name: "delete rule", Method: "DELETE", Path: "/rulesets/" + rs + "/rules/" + ruleID, Body: nil, Want: 200, Resp: `{"message":"Rule deleted"}`},
				{Name: "delete rule again", Method: "DELETE", Path: "/rulesets/" + rs + "/rules/" + ruleID, Body: nil, Want: 404, Resp: `{"message":"Rule '` + ruleID + `' not found"}`},
				{Name: "delete ruleset", Method: "DELETE", Path: "/rulesets/" + rs, Body: nil, Want: 200, Resp: `{"message":"Ruleset deleted"}`},
				{Name: "gone", Method: "GET", Path: "/rulesets/" + rs, Body: nil, Want: 404, Resp: ""},
			})
		})
	}
}
