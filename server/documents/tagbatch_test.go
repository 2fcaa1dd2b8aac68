package documents_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestTags_Batch: POST /documents/tags/batch adds the same tags to many
// documents in one request; a document the caller may not write, or that
// is not there, is named in the answer's errors and the others are
// tagged; a request over the limits or with a bad tag or body is refused
// whole, before anything is written.
func TestTags_Batch(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	joe := s.Token("joe", "default") // writes the default site, not the folder locked/
	open := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "open/a.txt", "content": "a"})
	open2 := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "open/b.txt", "content": "b"})
	locked := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "locked/c.txt", "content": "c"})
	trashed := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "open/d.txt", "content": "d"})
	servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+trashed+"?softDelete=true", nil, admin), http.StatusOK)
	servertest.MustStatus(t, s.Do(http.MethodPut, "/folders/permissions", map[string]any{"path": "locked", "roles": []any{
		map[string]any{"roleName": "others", "permissions": []string{"READ", "WRITE"}}}}, admin), http.StatusOK)
	const unknown = "5e9d4c1a-0000-4000-8000-000000000000"
	many := make([]string, 201)
	for i := range many {
		many[i] = fmt.Sprintf("%s-%d", open, i)
	}
	many[0] = open
	long := strings.Repeat("v", 1024)
	var sixtyFour []string
	for i := 0; i < 64; i++ {
		sixtyFour = append(sixtyFour, fmt.Sprintf("%s%02d", long[:1022], i))
	}
	tests := []struct {
		name   string
		body   any
		tok    string
		status int
		resp   string
		tagged []string // documents that carry the step's tag key afterwards
		bare   []string // documents that do not
	}{
		{"some left out", map[string]any{"documentIds": []string{open, locked, unknown, trashed}, "tags": []map[string]any{{"key": "k1", "value": "v"}}}, joe, 200,
			`{"documentIds":["` + open + `"],"errors":[{"key":"` + locked + `","error":"fkq access denied to folder (locked) (WRITE)"},{"key":"` + unknown + `","error":"Document ` + unknown + ` not found."},{"key":"` + trashed + `","error":"Document ` + trashed + ` not found."}],"message":"Tagged 1 of 4 documents."}`,
			[]string{open}, []string{locked}},
		{"all tagged, values and a key only", map[string]any{"documentIds": []string{open, open2}, "tags": []map[string]any{{"key": "k2", "values": []string{"x", "y"}}, {"key": "k2only"}}}, joe, 200,
			`{"documentIds":["` + open + `","` + open2 + `"],"message":"Tagged 2 of 2 documents."}`, []string{open, open2}, nil},
		{"an admin writes every folder", map[string]any{"documentIds": []string{locked}, "tags": []map[string]any{{"key": "k3", "value": "v"}}}, admin, 200,
			`{"documentIds":["` + locked + `"],"message":"Tagged 1 of 1 documents."}`, []string{locked}, nil},
		{"too many documents", map[string]any{"documentIds": many, "tags": []map[string]any{{"key": "k4", "value": "v"}}}, joe, 400,
			`{"errors":[{"key":"documentIds","error":"a request can tag at most 200 documents"}]}`, nil, []string{open}},
		{"too many for these tags", map[string]any{"documentIds": []string{open, open2, locked}, "tags": []map[string]any{{"key": "k5", "values": sixtyFour}}}, admin, 400,
			`{"errors":[{"key":"documentIds","error":"a request can give these tags to at most 1 documents"}]}`, nil, []string{open, open2, locked}},
		{"a document named twice", map[string]any{"documentIds": []string{open, open}, "tags": []map[string]any{{"key": "k6", "value": "v"}}}, joe, 400,
			`{"errors":[{"key":"documentIds","error":"document '` + open + `' is named more than once"}]}`, nil, []string{open}},
		{"no documents", map[string]any{"tags": []map[string]any{{"key": "k7", "value": "v"}}}, joe, 400,
			`{"errors":[{"key":"documentIds","error":"'documentIds' is required"}]}`, nil, nil},
		{"no tags", map[string]any{"documentIds": []string{open}}, joe, 400,
			`{"errors":[{"key":"tags","error":"'tags' is required"}]}`, nil, nil},
		{"a tag without a key", map[string]any{"documentIds": []string{open}, "tags": []map[string]any{{"value": "1"}}}, joe, 400,
			`{"errors":[{"key":"tags","error":"'key' is required"}]}`, nil, nil},
		{"a value too long", map[string]any{"documentIds": []string{open}, "tags": []map[string]any{{"key": "k10", "value": long + "x"}}}, joe, 400,
			`{"errors":[{"key":"tags","error":"'tags' value cannot exceed 1024 bytes"}]}`, nil, []string{open}},
		{"a system tag", map[string]any{"documentIds": []string{open}, "tags": []map[string]any{{"key": "CLAMAV_SCAN_STATUS", "value": "CLEAN"}}}, joe, 400,
			`{"errors":[{"key":"CLAMAV_SCAN_STATUS","error":"unallowed tag key"}]}`, nil, nil},
		{"a key given twice", map[string]any{"documentIds": []string{open}, "tags": []map[string]any{{"key": "k12", "value": "1"}, {"key": "k12", "value": "2"}}}, joe, 400,
			`{"message":"Tag key can only be included once in body; please use 'values' to assign multiple tag values to that key"}`, nil, []string{open}},
		{"not UTF-8", "{\"documentIds\":[\"" + open + "\"],\"tags\":[{\"key\":\"k13\",\"value\":\"\xff\"}]}", joe, 400,
			`{"errors":[{"error":"request body is not valid UTF-8"}]}`, nil, []string{open}},
		{"a reader may not", map[string]any{"documentIds": []string{open}, "tags": []map[string]any{{"key": "k14", "value": "v"}}}, s.Token("rita", "default_read"), 401,
			"", nil, []string{open}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(http.MethodPost, "/documents/tags/batch", tt.body, tt.tok)
			servertest.MustStatus(t, r, tt.status)
			if tt.resp != "" {
				servertest.MustBody(t, r, tt.resp)
			}
			key := fmt.Sprintf("k%d", i+1) // the step's tag key
			for _, id := range tt.tagged {
				servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+id+"/tags/"+key, nil, admin), http.StatusOK)
			}
			for _, id := range tt.bare {
				servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+id+"/tags/"+key, nil, admin), http.StatusNotFound)
			}
		})
	}
	// The tags read back as the per-document route writes them.
	tag := s.Do(http.MethodGet, "/documents/"+open2+"/tags/k2", nil, admin).JSON(t)
	if got := fmt.Sprint(quiretest.List(t, tag, "values")); got != "[x y]" || quiretest.Str(t, tag, "userId") != "joe" || quiretest.Str(t, tag, "type") != "USERDEFINED" {
		t.Fatalf("tag k2 of %s = %v", open2, tag)
	}
	// The change is on each document's activity trail.
	acts := s.Do(http.MethodGet, "/documents/"+open+"/userActivities", nil, admin)
	servertest.MustStatus(t, acts, http.StatusOK)
	if !strings.Contains(string(acts.Body), `"TagDocuments"`) {
		t.Fatalf("no tag change on the trail of %s: %s", open, acts.Body)
	}
}
