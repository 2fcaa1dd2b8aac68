package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
)

// Default processing (issue 46): a site setting, processing.defaultActions
// in the site configuration, names the actions every new document gets
// when its request names none (OCR and FULLTEXT unless a site says
// otherwise). The rows that depend on it find out what the server under
// test does instead of assuming it: what GET /sites/{siteId}/configuration
// reads back after a PATCH, and which actions a document created without
// any actually gets. Before the setting is wired, PATCH answers 200 and
// drops the section, and a document created without actions gets none;
// a row that needs the setting then says it cannot be measured yet.

// siteProcessing reads a site's processing.defaultActions; set is false
// when the configuration has no such list.
func siteProcessing(ctx context.Context, srv *Server, site string) (actions []string, set bool, err error) {
	var c struct {
		Processing *struct {
			DefaultActions *[]string `json:"defaultActions"`
		} `json:"processing"`
	}
	if err := srv.DoJSON(ctx, http.MethodGet, "/sites/"+url.PathEscape(site)+"/configuration", nil, http.StatusOK, &c); err != nil {
		return nil, false, err
	}
	if c.Processing == nil || c.Processing.DefaultActions == nil {
		return nil, false, nil
	}
	return *c.Processing.DefaultActions, true, nil
}

var probeSeq atomic.Int64

// ProbeDefaults creates a document in site the way the measured rows
// create theirs but naming no actions (the body of doc, to which a path
// is added), and returns its id and the types of the actions the server
// gave it: what default processing does on this server for such a
// document.
func ProbeDefaults(ctx context.Context, srv *Server, site string, doc map[string]any) (string, []string, error) {
	body := map[string]any{}
	for k, v := range doc {
		body[k] = v
	}
	body["path"] = fmt.Sprintf("bench/probe/defaults-%d%s", probeSeq.Add(1), probeExt(doc))
	var c struct {
		DocumentID string `json:"documentId"`
	}
	if err := srv.DoJSON(ctx, http.MethodPost, "/documents?siteId="+url.QueryEscape(site), body, http.StatusCreated, &c); err != nil {
		return "", nil, fmt.Errorf("default processing probe: %w", err)
	}
	var out struct {
		Actions []struct {
			Type string `json:"type"`
		} `json:"actions"`
	}
	if err := srv.DoJSON(ctx, http.MethodGet, "/documents/"+url.PathEscape(c.DocumentID)+"/actions?siteId="+url.QueryEscape(site), nil, http.StatusOK, &out); err != nil {
		return "", nil, fmt.Errorf("default processing probe: %w", err)
	}
	types := make([]string, len(out.Actions))
	for i, a := range out.Actions {
		types[i] = a.Type
	}
	return c.DocumentID, types, nil
}

// probeExt is the probe document's file extension for its content type.
func probeExt(doc map[string]any) string {
	if ct, _ := doc["contentType"].(string); ct == "application/pdf" {
		return ".pdf"
	}
	return ".txt"
}

// ProcessingState is what a server does with a site's default processing
// after the bench asked for want.
type ProcessingState struct {
	want     []string // what the bench set
	stored   bool     // GET reads want back
	readBack string   // what GET read back, for the report
	Applied  []string // the actions a document created without any got
}

// Measurable says whether rows that need want in force can run, and if
// not, why.
func (p ProcessingState) Measurable() (bool, string) {
	switch {
	case len(p.want) == 0 && len(p.Applied) > 0:
		return false, fmt.Sprintf("processing.defaultActions [] did not turn default processing off: a document created without actions still got %s (configuration reads back %s)", strings.Join(p.Applied, ", "), p.readBack)
	case len(p.want) == 0:
		return true, ""
	case !p.stored:
		return false, fmt.Sprintf("PATCH /sites/{siteId}/configuration answered 200 but did not keep the processing section (GET reads back %s)", p.readBack)
	case len(p.Applied) == 0:
		return false, "processing.defaultActions is stored, but a document created without actions got none (POST /documents does not apply it yet)"
	}
	return true, ""
}

// SetProcessing asks for want as site's default actions (PATCH the site
// configuration), reads back what the server kept, and probes what a
// document created like doc without actions gets.
func SetProcessing(ctx context.Context, srv *Server, site string, want []string, doc map[string]any) (ProcessingState, error) {
	st := ProcessingState{want: want}
	if want == nil {
		want = []string{}
	}
	body := map[string]any{"processing": map[string]any{"defaultActions": want}}
	if err := srv.DoJSON(ctx, http.MethodPatch, "/sites/"+url.PathEscape(site)+"/configuration", body, http.StatusOK, nil); err != nil {
		return st, fmt.Errorf("set processing.defaultActions: %w", err)
	}
	got, set, err := siteProcessing(ctx, srv, site)
	if err != nil {
		return st, err
	}
	st.stored = set && slices.Equal(got, want)
	st.readBack = "no processing.defaultActions"
	if set {
		b, _ := json.Marshal(got)
		st.readBack = string(b)
	}
	if _, st.Applied, err = ProbeDefaults(ctx, srv, site, doc); err != nil {
		return st, err
	}
	return st, nil
}
