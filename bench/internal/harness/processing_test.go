package harness

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"quire/node"
	"quire/storage"
)

// TestProcessing_ReadersAgreeWithServer reads a real node through the
// bench's readers of default processing: what a site's configuration
// holds (stored through storage, as PATCH will once it keeps the
// section) and which actions a document has. The rows decide from these
// whether default processing can be measured; a reader that silently read
// nothing would report "not measurable yet" forever, or measure the
// sustained rows without processing under the processing label.
func TestProcessing_ReadersAgreeWithServer(t *testing.T) {
	p, err := StartInproc(t.TempDir(), node.ClusterConfig{})
	if err != nil {
		t.Fatalf("start a node: %v", err)
	}
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	if got, set, err := siteProcessing(ctx, p.Server, "default"); err != nil || set {
		t.Errorf("siteProcessing of a new site = %v, %v, %v; want no list", got, set, err)
	}
	for _, want := range [][]string{{"FULLTEXT"}, {}} {
		c, err := p.Node.DB.SiteConfig("default")
		if err != nil {
			t.Fatal(err)
		}
		w := slices.Clone(want)
		c.Processing = &storage.ProcessingConfig{DefaultActions: &w}
		if _, err := p.Node.DB.Apply(ctx, storage.MustCommand(storage.OpSetSiteConfig, "default", "bench", time.Now(), *c)); err != nil {
			t.Fatal(err)
		}
		got, set, err := siteProcessing(ctx, p.Server, "default")
		if err != nil || !set || !slices.Equal(got, want) {
			t.Errorf("siteProcessing after storing %v = %v, %v, %v", want, got, set, err)
		}
	}

	var c struct {
		DocumentID string `json:"documentId"`
	}
	if err := p.Server.DoJSON(ctx, http.MethodPost, "/documents", map[string]any{"path": "a.txt", "contentType": "text/plain", "content": "a",
		"actions": []map[string]any{{"type": "CHECKSUM", "parameters": map[string]any{"checksumType": "SHA256"}}, {"type": "FULLTEXT"}}}, http.StatusCreated, &c); err != nil {
		t.Fatal(err)
	}
	acts, err := DocumentActions(ctx, p.Server, c.DocumentID)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, a := range acts {
		types = append(types, a.Type)
		if a.Status == "" {
			t.Errorf("action %s read without a status", a.Type)
		}
	}
	if !slices.Equal(types, []string{"CHECKSUM", "FULLTEXT"}) {
		t.Errorf("documentActions read %v, want CHECKSUM, FULLTEXT", types)
	}
	// The probe reads the same way (its document names no actions: what
	// it gets is the server's default processing, none or some).
	id, probed, err := ProbeDefaults(ctx, p.Server, "default", map[string]any{"contentType": "text/plain", "content": "probe"})
	if err != nil {
		t.Fatal(err)
	}
	again, err := DocumentActions(ctx, p.Server, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != len(probed) {
		t.Errorf("probeDefaults read %v, the document has %d actions", probed, len(again))
	}
}

// TestProcessing_Measurable: a variant is measured only when the server
// does what it asks.
func TestProcessing_Measurable(t *testing.T) {
	on := []string{"OCR", "FULLTEXT"}
	for _, tt := range []struct {
		name string
		st   ProcessingState
		ok   bool
		why  string
	}{
		{"off, nothing applied", ProcessingState{want: []string{}}, true, ""},
		{"off, yet applied", ProcessingState{want: []string{}, Applied: on, readBack: "no processing.defaultActions"}, false, "did not turn default processing off"},
		{"on, dropped by PATCH", ProcessingState{want: on, readBack: "no processing.defaultActions"}, false, "did not keep the processing section"},
		{"on, stored, not applied", ProcessingState{want: on, stored: true}, false, "does not apply it"},
		{"on, stored and applied", ProcessingState{want: on, stored: true, Applied: on}, true, ""},
		{"on, applied without OCR for text", ProcessingState{want: on, stored: true, Applied: []string{"FULLTEXT"}}, true, ""},
	} {
		ok, why := tt.st.Measurable()
		if ok != tt.ok || !strings.Contains(why, tt.why) {
			t.Errorf("%s: measurable() = %v, %q; want %v, %q", tt.name, ok, why, tt.ok, tt.why)
		}
	}
}
