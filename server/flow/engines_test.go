package flow_test

import (
	"bytes"
	"encoding/json"
	"image/jpeg"
	"maps"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

// TestActions_OCR reads rendered text with tesseract from a PNG and from a
// scanned (image-only) PDF. With addPdfDetectedCharactersAsText the PDF is
// rewritten with a text layer, and a FULLTEXT after the OCR indexes the OCR
// text (FormKiQ #172). The sites read English alone: the scans are in
// English, and tesseract reads a page once per language (the default
// three were half of each reading's CPU; pipeline's TestOCR_Office reads
// with them).
func TestActions_OCR(t *testing.T) {
	quiretest.NeedProgram(t, "tesseract", "tesseract-ocr")
	quiretest.NeedProgram(t, "pdftoppm", "poppler-utils")
	quiretest.NeedProgram(t, "ocrmypdf", "ocrmypdf")
	pdftotext := quiretest.NeedProgram(t, "pdftotext", "poppler-utils")
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	img := quiretest.TextImage("Quarterly invoice", "Customer Globex Corporation", "Total 4200 dollars")
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			english := map[string]any{"processing": map[string]any{"languages": []string{"eng"}, "defaultActions": []string{}}}
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/"+site.Name+"/configuration", english, tok), http.StatusOK)
			png := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "scans/invoice.png", "contentType": "image/png", "isBase64": true,
				"content": servertest.B64(quiretest.PNG(img)), "actions": []map[string]any{{"type": "OCR", "parameters": map[string]any{"ocrParseTypes": "text"}}, {"type": "FULLTEXT"}}})
			pdf := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "scans/invoice.pdf", "contentType": "application/pdf", "isBase64": true,
				"content": servertest.B64(quiretest.ImagePDF(img)), "actions": []map[string]any{
					{"type": "OCR", "parameters": map[string]any{"ocrEngine": "tesseract", "ocrNumberOfPages": "-1", "addPdfDetectedCharactersAsText": "true"}},
					{"type": "FULLTEXT", "parameters": map[string]any{"characterMax": "-1"}}}})
			for _, id := range []string{png, pdf} {
				if st := servertest.WaitActions(t, s, tok, site.Query, id); !servertest.EqualStrings(st, []string{"COMPLETE", "COMPLETE"}) {
					t.Fatalf("%s: %v %v", id, st, servertest.Actions(t, s, tok, site.Query, id))
				}
				if md := quiretest.Obj(t, servertest.NthAction(t, s, tok, site.Query, id, 0)["metadata"]); md["languages"] != "eng" {
					t.Fatalf("%s read in %v, want the site's eng", id, md["languages"])
				}
				r := s.Do(http.MethodGet, "/documents/"+id+"/ocr"+site.Query, nil, tok)
				servertest.MustStatus(t, r, http.StatusOK)
				o := r.JSON(t)
				if data, _ := o["data"].(string); !strings.Contains(data, "Globex") || !strings.Contains(data, "Quarterly") || o["ocrStatus"] != "SUCCESSFUL" {
					t.Fatalf("%s ocr: %s", id, r.Body)
				}
				ft := s.Do(http.MethodGet, "/documents/"+id+"/fulltext"+site.Query, nil, tok).JSON(t)
				if c, _ := ft["content"].(string); !strings.Contains(c, "Globex") {
					t.Fatalf("%s fulltext did not use the OCR text: %v", id, ft["content"])
				}
			}
			// The searchable PDF is an OCR artifact of the scan, promoted
			// so that the document serves it; the scan stays.
			dr := s.Do(http.MethodGet, "/documents/"+pdf+site.Query, nil, tok)
			servertest.MustStatus(t, dr, http.StatusOK)
			art := quiretest.Str(t, dr.JSON(t), "promotedArtifactId")
			al := s.Do(http.MethodGet, "/documents/"+pdf+"/artifacts"+site.Query, nil, tok)
			if art == "" || !strings.Contains(string(al.Body), `"artifactCategory":"OCR"`) || !strings.Contains(string(al.Body), art) {
				t.Fatalf("no promoted OCR artifact: %s / %s", dr.Body, al.Body)
			}
			// The PDF now carries a text layer pdftotext can read.
			r := s.Do(http.MethodGet, "/documents/"+pdf+"/content"+site.Query, nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			cu, _ := r.JSON(t)["contentUrl"].(string)
			resp, err := http.Get(cu)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			buf.ReadFrom(resp.Body)
			resp.Body.Close()
			cmd := exec.Command(pdftotext, "-", "-")
			cmd.Stdin = &buf
			out, err := cmd.Output()
			if err != nil || !strings.Contains(string(out), "Globex") {
				t.Fatalf("rewritten PDF has no text layer: %v %q", err, out)
			}
			// Clearing the promotion serves the scan as it was uploaded.
			servertest.MustStatus(t, s.Do(http.MethodPut, "/documents/"+pdf+"/artifacts/promoteArtifact"+site.Query, map[string]any{}, tok), http.StatusOK)
			r = s.Do(http.MethodGet, "/documents/"+pdf+"/content"+site.Query, nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			orig, err := http.Get(quiretest.Str(t, r.JSON(t), "contentUrl"))
			if err != nil {
				t.Fatal(err)
			}
			var scan bytes.Buffer
			scan.ReadFrom(orig.Body)
			orig.Body.Close()
			if !bytes.Equal(scan.Bytes(), quiretest.ImagePDF(img)) {
				t.Fatalf("the original scan changed: %d bytes", scan.Len())
			}
			servertest.WaitIndexed(t, s)
			sr := s.Do(http.MethodPost, "/search"+site.Query, map[string]any{"query": map[string]any{"text": "Globex"}}, tok)
			if !strings.Contains(string(sr.Body), png) || !strings.Contains(string(sr.Body), pdf) {
				t.Fatalf("OCR text not searchable: %s", sr.Body)
			}
		})
	}
}

// TestActions_FulltextFormats extracts text from a PDF with a text layer
// (pdftotext) and from a Word document; an image without OCR is SKIPPED.
func TestActions_FulltextFormats(t *testing.T) {
	quiretest.NeedProgram(t, "pdftotext", "poppler-utils")
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			pdf := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "contract.pdf", "contentType": "application/pdf", "isBase64": true,
				"content": servertest.B64(quiretest.TextPDF("Service agreement with Umbrella Logistics", "Signed in Springfield")), "actions": []map[string]any{{"type": "FULLTEXT"}}})
			docx := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "memo.docx", "contentType": "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "isBase64": true,
				"content": servertest.B64(quiretest.DOCX("Memo about the Shelbyville warehouse", "Second paragraph")), "actions": []map[string]any{{"type": "FULLTEXT"}}})
			png := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "photo.png", "contentType": "image/png", "isBase64": true,
				"content": servertest.B64(quiretest.PNG(quiretest.TextImage("x"))), "actions": []map[string]any{{"type": "FULLTEXT"}}})
			for id, want := range map[string]string{pdf: "Umbrella Logistics", docx: "Shelbyville warehouse\nSecond"} {
				if st := servertest.WaitActions(t, s, tok, site.Query, id); !servertest.EqualStrings(st, []string{"COMPLETE"}) {
					t.Fatalf("%v %v", st, servertest.Actions(t, s, tok, site.Query, id))
				}
				if c, _ := s.Do(http.MethodGet, "/documents/"+id+"/fulltext"+site.Query, nil, tok).JSON(t)["content"].(string); !strings.Contains(c, want) {
					t.Fatalf("fulltext %q lacks %q", c, want)
				}
			}
			if st := servertest.WaitActions(t, s, tok, site.Query, png); !servertest.EqualStrings(st, []string{"SKIPPED"}) {
				t.Fatalf("png: %v", st)
			}
			servertest.WaitIndexed(t, s)
			sr := s.Do(http.MethodPost, "/search"+site.Query, map[string]any{"query": map[string]any{"text": "Shelbyville"}}, tok)
			if !strings.Contains(string(sr.Body), docx) {
				t.Fatalf("docx text not searchable: %s", sr.Body)
			}
		})
	}
}

// TestActions_Antivirus scans with a real clamd: a clean file and the
// EICAR test file get their verdicts as tags and malware scan results.
func TestActions_Antivirus(t *testing.T) {
	addr := quiretest.Clamd(t)
	bus := servertest.NewReceiver(t)
	s := servertest.PipelineServer(t, func(c *quiretest.Config) {
		c.Pipeline.Engines.Clamd = addr
		c.Pipeline.Engines.EventBuses = map[string]string{"security": bus.URL}
	})
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			sid, events := servertest.SiteID(site.Query), bus.Count()
			clean := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "clean.txt", "content": "nothing to see", "actions": []map[string]any{{"type": "ANTIVIRUS"}}})
			bad := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "eicar.com", "content": quiretest.EICAR, "actions": []map[string]any{{"type": "MALWARE_SCAN"}}})
			for id, want := range map[string][2]string{clean: {"CLEAN", "CLEAN"}, bad: {"INFECTED", "MALICIOUS"}} {
				if st := servertest.WaitActions(t, s, tok, site.Query, id); !servertest.EqualStrings(st, []string{"COMPLETE"}) {
					t.Fatalf("%v %v", st, servertest.Actions(t, s, tok, site.Query, id))
				}
				tag := s.Do(http.MethodGet, "/documents/"+id+"/tags/CLAMAV_SCAN_STATUS"+site.Query, nil, tok)
				servertest.MustStatus(t, tag, http.StatusOK)
				if v := tag.JSON(t)["value"]; v != want[0] {
					t.Fatalf("scan status tag %v, want %s", v, want[0])
				}
				r := s.Do(http.MethodGet, "/documents/"+id+"/malwareScan"+site.Query, nil, tok)
				servertest.MustStatus(t, r, http.StatusOK)
				res := quiretest.List(t, r.JSON(t), "malwareScanResults")
				if len(res) != 1 || quiretest.Obj(t, res[0])["scanStatus"] != want[1] || quiretest.Obj(t, res[0])["scanEngine"] != "CLAM_AV" {
					t.Fatalf("malware scan results %s", r.Body)
				}
			}
			// Each verdict goes to the event bus too, from the outbox the
			// outcome's transaction wrote: one event per scan of this site.
			checkScanEvents(t, bus, events, sid, map[string]string{clean: "CLEAN", bad: "MALICIOUS"})
			// PUT /malwareScan asks for another scan.
			before := bus.Count()
			servertest.MustBody(t, s.Do(http.MethodPut, "/documents/"+clean+"/malwareScan"+site.Query, map[string]any{}, tok), `{"message":"Malware scan request submitted"}`)
			if st := servertest.WaitActions(t, s, tok, site.Query, clean); !servertest.EqualStrings(st, []string{"COMPLETE", "COMPLETE"}) {
				t.Fatalf("second scan: %v", st)
			}
			checkScanEvents(t, bus, before, sid, map[string]string{clean: "CLEAN"})
			if n := len(quiretest.List(t, s.Do(http.MethodGet, "/documents/"+clean+"/malwareScan"+site.Query, nil, tok).JSON(t), "malwareScanResults")); n != 2 {
				t.Fatalf("%d scan results after two scans", n)
			}
			if m := quiretest.Str(t, quiretest.Item(t, s.Do(http.MethodGet, "/documents/"+bad+"/malwareScan"+site.Query, nil, tok).JSON(t), "malwareScanResults", 0), "scanMessage"); !strings.HasPrefix(m, "Eicar-Test-Signature") {
				t.Fatalf("signature %v", m)
			}
		})
	}
}

// checkScanEvents waits until the bus's requests after the first from
// hold exactly one malware scan event (by id: delivery is at least once)
// of site per document of want, with the scan status want gives it.
// The bus takes the other document events too; they are skipped.
func checkScanEvents(t *testing.T, bus *servertest.Receiver, from int, site string, want map[string]string) {
	t.Helper()
	var got map[string]string
	deadline := time.Now().Add(30 * time.Second)
	for {
		got = map[string]string{}
		seen := map[string]string{}
		for _, b := range bus.BodiesFrom(from) {
			var ev struct {
				ID, Type, Source, Subject string
				Data                      struct{ ScanStatus string }
			}
			if err := json.Unmarshal(b, &ev); err != nil || ev.Source != "quire/"+site {
				t.Fatalf("event %s (%v), want one of site %s", b, err, site)
			}
			if ev.Type != "quire.document.malwareScan" {
				continue
			}
			if id, dup := seen[ev.Subject]; dup && id != ev.ID {
				t.Fatalf("two scan events for %s", ev.Subject)
			}
			seen[ev.Subject] = ev.ID
			got[ev.Subject] = ev.Data.ScanStatus
		}
		if maps.Equal(got, want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !maps.Equal(got, want) {
		t.Fatalf("scan events of site %s: %v, want %v", site, got, want)
	}
}

// TestActions_Notification e-mails through a real SMTP server configured
// per site; the notification is listed on the document.
func TestActions_Notification(t *testing.T) {
	mail := quiretest.NewMailServer(t)
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			sid := servertest.SiteID(site.Query)
			cfg := "/sites/" + sid + "/configuration"
			sent := len(mail.Messages())
			servertest.RunSteps(t, s, tok, "", []servertest.Step{
				{Name: "bad port", Method: "PATCH", Path: cfg, Body: map[string]any{"notification": map[string]any{"email": "dms@example.com", "provider": "SMTP", "smtp": map[string]any{"host": "127.0.0.1", "port": 0}}}, Want: 400, Resp: `{"errors":[{"key":"notification.smtp.port","error":"invalid 'port'"}]}`},
				{Name: "save", Method: "PATCH", Path: cfg, Body: map[string]any{"notification": map[string]any{"email": sid + "-dms@example.com", "provider": "SMTP",
					"smtp": map[string]any{"host": mail.Host, "port": mail.Port, "username": "u", "password": "secret-password"}}}, Want: 200, Resp: `{"message":"Config saved"}`},
				{Name: "masked", Method: "GET", Path: cfg, Body: nil, Want: 200, Resp: `~"password":"****word"`},
				{Name: "test mail", Method: "POST", Path: cfg + "/notification/test", Body: map[string]any{"to": "it@example.com"}, Want: 202, Resp: `{"message":"Test notification sent"}`},
				{Name: "test mail needs to", Method: "POST", Path: cfg + "/notification/test", Body: map[string]any{}, Want: 400, Resp: `{"errors":[{"key":"to","error":"'to' is required"}]}`},
			})
			// The test mail is sent before the 202: exactly one message, from
			// the site's address to the one given.
			msgs := mail.Messages()
			if len(msgs) != sent+1 {
				t.Fatalf("%d messages after the test mail, want 1: %+v", len(msgs)-sent, msgs[sent:])
			}
			if m := msgs[sent]; m.From != sid+"-dms@example.com" || !servertest.EqualStrings(m.To, []string{"it@example.com"}) ||
				!strings.Contains(m.Data, "Subject: Quire test notification") || !strings.Contains(m.Data, "for site "+sid+".") {
				t.Fatalf("test mail %+v", m)
			}
			before := len(msgs)
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "n.txt", "content": "x", "actions": []map[string]any{{"type": "NOTIFICATION", "parameters": map[string]any{
				"notificationType": "email", "notificationSubject": "Invoice ready", "notificationToCc": "boss@example.com",
				"notificationToBcc": "audit@example.com", "notificationText": "Please review", "notificationHtml": "<p>Please <b>review</b></p>"}}}})
			if st := servertest.WaitActions(t, s, tok, site.Query, id); !servertest.EqualStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("%v %v", st, servertest.Actions(t, s, tok, site.Query, id))
			}
			msgs = mail.Messages()
			if len(msgs) != before+1 {
				t.Fatalf("got %d messages, want %d", len(msgs), before+1)
			}
			m := msgs[len(msgs)-1]
			if m.From != sid+"-dms@example.com" || !servertest.EqualStrings(m.To, []string{"boss@example.com", "audit@example.com"}) ||
				!strings.Contains(m.Data, "Subject: Invoice ready") || !strings.Contains(m.Data, "Cc: boss@example.com") ||
				strings.Contains(m.Data, "audit@example.com") || !strings.Contains(m.Data, "multipart/alternative") || !strings.Contains(m.Data, "Please review") {
				t.Fatalf("message %+v", m)
			}
			if l := mail.Logins(); len(l) == 0 || l[len(l)-1] != "u:secret-password" {
				t.Fatalf("SMTP logins %v", l)
			}
			r := s.Do(http.MethodGet, "/documents/"+id+"/notifications"+site.Query, nil, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			if !strings.Contains(string(r.Body), `"cc":["boss@example.com"]`) || !strings.Contains(string(r.Body), `"notificationType":"EMAIL"`) {
				t.Fatalf("notifications %s", r.Body)
			}
		})
	}
}

// TestActions_LLM runs DOCUMENTTAGGING, LLMPROMPT, DATA_CLASSIFICATION and
// METADATA_EXTRACTION against an OpenAI-compatible server configured for
// the site, with prompt entities carrying ModelId and LlmMaxToken and a
// modelId override on the action.
func TestActions_LLM(t *testing.T) {
	llm := servertest.NewLLMServer(t)
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			sid := servertest.SiteID(site.Query)
			text := "Invoice INV-77 for Globex, year 2026, total 4200"
			noLLM := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "pre.txt", "contentType": "text/plain", "content": text,
				"actions": []map[string]any{{"type": "DOCUMENTTAGGING", "parameters": map[string]any{"engine": "chatgpt", "tags": "customer"}}}})
			if st := servertest.WaitActions(t, s, tok, site.Query, noLLM); !servertest.EqualStrings(st, []string{"FAILED"}) {
				t.Fatalf("without an endpoint: %v", st)
			}
			if m := quiretest.Str(t, servertest.NthAction(t, s, tok, site.Query, noLLM, 0), "message"); !strings.Contains(m, "no LLM endpoint configured") {
				t.Fatalf("message %q", m)
			}
			servertest.MustStatus(t, s.Do(http.MethodPatch, "/sites/"+sid+"/configuration", map[string]any{"llm": map[string]any{"url": llm.URL + "/v1", "apiKey": "k-" + sid, "modelId": "llama3"}}, tok), http.StatusOK)
			entity := func(name string, attrs []map[string]any) {
				r := s.Do(http.MethodPost, "/entities/LlmPrompt?namespace=PRESET"+strings.Replace(site.Query, "?", "&", 1), map[string]any{"entity": map[string]any{"name": name, "attributes": attrs}}, tok)
				servertest.MustStatus(t, r, http.StatusCreated)
			}
			entity("invoiceFields", []map[string]any{{"key": "UserPrompt", "stringValue": "Read the invoice."}, {"key": "LlmResponseFieldKeys", "stringValues": []string{"invoiceNumber", "total"}},
				{"key": "ModelId", "stringValue": "mistral"}, {"key": "LlmMaxToken", "numberValue": 256}})
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "inv.txt", "contentType": "text/plain", "content": text, "actions": []map[string]any{
				{"type": "DOCUMENTTAGGING", "parameters": map[string]any{"engine": "chatgpt", "tags": "customer,year,missing"}},
				{"type": "LLMPROMPT", "parameters": map[string]any{"llmPromptEntityName": "invoiceFields"}},
				{"type": "DATA_CLASSIFICATION", "parameters": map[string]any{"llmPromptEntityName": "invoiceFields"}},
				{"type": "METADATA_EXTRACTION", "parameters": map[string]any{"llmPromptEntityName": "invoiceFields", "modelId": "qwen"}},
			}})
			if st := servertest.WaitActions(t, s, tok, site.Query, id); !servertest.EqualStrings(st, []string{"COMPLETE", "COMPLETE", "COMPLETE", "COMPLETE"}) {
				t.Fatalf("%v %v", st, servertest.Actions(t, s, tok, site.Query, id))
			}
			req, auth := llm.Last()
			if req["model"] != "qwen" || req["max_tokens"] != float64(256) || auth != "Bearer k-"+sid {
				t.Fatalf("last LLM request model %v max_tokens %v auth %q", req["model"], req["max_tokens"], auth)
			}
			tag := s.Do(http.MethodGet, "/documents/"+id+"/tags/customer"+site.Query, nil, tok)
			servertest.MustStatus(t, tag, http.StatusOK)
			if tag.JSON(t)["value"] != "Globex" {
				t.Fatalf("customer tag %s", tag.Body)
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+id+"/tags/missing"+site.Query, nil, tok), http.StatusNotFound)
			servertest.RunSteps(t, s, tok, site.Query, []servertest.Step{
				{Name: "ai prompts", Method: "GET", Path: "/documents/" + id + "/ai/prompts", Body: nil, Want: 200, Resp: `~"attributes":[{"key":"invoiceNumber","stringValues":["INV-77"]},{"key":"total","stringValues":["4200"]}]`},
				{Name: "ai prompt by name", Method: "GET", Path: "/documents/" + id + "/ai/prompts/invoiceFields", Body: nil, Want: 200, Resp: `~"resultType":"KEY_VALUE"`},
				{Name: "data classification", Method: "GET", Path: "/documents/" + id + "/dataClassification", Body: nil, Want: 200, Resp: `~"attributes":[{"key":"invoiceNumber","value":"INV-77"},{"key":"total","value":"4200"}]`},
				{Name: "metadata extraction", Method: "GET", Path: "/documents/" + id + "/metadataExtractionResults/invoiceFields", Body: nil, Want: 200, Resp: `~"llmPromptEntityName":"invoiceFields"`},
				{Name: "unknown entity", Method: "POST", Path: "/documents/" + id + "/actions", Body: map[string]any{"actions": []map[string]any{{"type": "LLMPROMPT", "parameters": map[string]any{"llmPromptEntityName": "nope"}}}}, Want: 400, Resp: `{"errors":[{"key":"parameters.llmPromptEntityName","error":"entity 'nope' not found"}]}`},
				{Name: "key masked", Method: "GET", Path: "/sites/" + sid + "/configuration", Body: nil, Want: 200, Resp: `~"apiKey":"****` + sid[len(sid)-4:] + `"`},
			})
		})
	}
}

// TestActions_Renditions: RESIZE scales an image and PDFEXPORT converts a
// Word document with LibreOffice; each result is a RENDITION artifact of
// the original, or with RESIZE's path a new document related to it.
func TestActions_Renditions(t *testing.T) {
	quiretest.NeedProgram(t, "soffice", "libreoffice-writer-nogui")
	pdftotext := quiretest.NeedProgram(t, "pdftotext", "poppler-utils")
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			img := quiretest.TextImage("Rendition test")
			sw, sh := img.Bounds().Dx(), img.Bounds().Dy()
			pic := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "photos/sign.png", "contentType": "image/png", "isBase64": true, "content": servertest.B64(quiretest.PNG(img)),
				"actions": []map[string]any{{"type": "RESIZE", "parameters": map[string]any{"width": "100", "height": "auto", "outputType": "jpeg"}}}})
			named := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "photos/named.png", "contentType": "image/png", "isBase64": true, "content": servertest.B64(quiretest.PNG(img)),
				"actions": []map[string]any{{"type": "RESIZE", "parameters": map[string]any{"width": "100", "height": "auto", "outputType": "jpeg", "path": "thumbs/"}}}})
			doc := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "letters/offer.docx", "contentType": "application/vnd.openxmlformats-officedocument.wordprocessingml.document", "isBase64": true,
				"content": servertest.B64(quiretest.DOCX("Offer for the Capital City depot")), "actions": []map[string]any{{"type": "PDFEXPORT"}}})
			output := func(id, key string) string {
				if st := servertest.WaitActions(t, s, tok, site.Query, id); !servertest.EqualStrings(st, []string{"COMPLETE"}) {
					t.Fatalf("%v %v", st, servertest.Actions(t, s, tok, site.Query, id))
				}
				md, _ := servertest.NthAction(t, s, tok, site.Query, id, 0)["metadata"].(map[string]any)
				nid, _ := md[key].(string)
				if nid == "" {
					t.Fatalf("no %s in %v", key, md)
				}
				return nid
			}
			wantH := sh * 100 / sw
			// Without a path the rendition is an artifact of its source.
			art := output(pic, "artifactId")
			aq := servertest.Query(site.Query, "artifactId="+art)
			d := s.Do(http.MethodGet, "/documents/"+pic+aq, nil, tok).JSON(t)
			if d["artifactCategory"] != "RENDITION" || d["contentType"] != "image/jpeg" || d["width"] != "100" {
				t.Fatalf("resized artifact %v", d)
			}
			got, err := jpeg.Decode(bytes.NewReader(servertest.Download(t, s, tok, aq, pic)))
			if err != nil || got.Bounds().Dx() != 100 || got.Bounds().Dy() != wantH {
				t.Fatalf("resized image: %v %v", err, got.Bounds())
			}
			// With a path it is a document related to its source, as FormKiQ's.
			small := output(named, "documentId")
			d = s.Do(http.MethodGet, "/documents/"+small+site.Query, nil, tok).JSON(t)
			if d["path"] != "thumbs/named-100x"+strconv.Itoa(wantH)+".jpg" || d["contentType"] != "image/jpeg" {
				t.Fatalf("resized document %v", d)
			}
			rel := s.Do(http.MethodGet, "/documents/"+named+"/attributes"+site.Query, nil, tok)
			if !strings.Contains(string(rel.Body), small) || !strings.Contains(string(rel.Body), "RENDITION") {
				t.Fatalf("original lacks the RENDITION relationship: %s", rel.Body)
			}

			pdf := output(doc, "artifactId")
			pq := servertest.Query(site.Query, "artifactId="+pdf)
			d = s.Do(http.MethodGet, "/documents/"+doc+pq, nil, tok).JSON(t)
			if d["contentType"] != "application/pdf" || d["artifactCategory"] != "RENDITION" {
				t.Fatalf("exported artifact %v", d)
			}
			cmd := exec.Command(pdftotext, "-", "-")
			cmd.Stdin = bytes.NewReader(servertest.Download(t, s, tok, pq, doc))
			out, err := cmd.Output()
			if err != nil || !strings.Contains(string(out), "Capital City depot") {
				t.Fatalf("exported PDF text: %v %q", err, out)
			}
		})
	}
}

// TestActions_IDP fills typed attributes from a mapping: a fuzzy label
// with a validation regex, a number after a label, document metadata and a
// fixed value, and classifies the document by a content condition.
func TestActions_IDP(t *testing.T) {
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			sid := servertest.SiteID(site.Query)
			servertest.DefineAttr(t, s, tok, site.Query, "invoiceNumber", "STRING", nil)
			servertest.DefineAttr(t, s, tok, site.Query, "invoiceTotal", "NUMBER", nil)
			servertest.DefineAttr(t, s, tok, site.Query, "sourcePath", "STRING", nil)
			servertest.DefineAttr(t, s, tok, site.Query, "department", "STRING", nil)
			r := s.Do(http.MethodPost, "/sites/"+sid+"/classifications", map[string]any{"classification": map[string]any{"name": "Invoice", "attributes": map[string]any{"optional": []map[string]any{{"attributeKey": "invoiceTotal"}}}}}, tok)
			servertest.MustStatus(t, r, http.StatusOK)
			cid := quiretest.Str(t, r.JSON(t), "classificationId")
			r = s.Do(http.MethodPost, "/mappings"+site.Query, map[string]any{"mapping": map[string]any{"name": "invoices", "attributes": []map[string]any{
				{"attributeKey": "invoiceNumber", "sourceType": "CONTENT", "labelTexts": []string{"Invoice No"}, "labelMatchingType": "FUZZY", "validationRegex": "INV-[0-9]+"},
				{"attributeKey": "invoiceTotal", "sourceType": "CONTENT", "labelTexts": []string{"Total"}, "labelMatchingType": "CONTAINS"},
				{"attributeKey": "sourcePath", "sourceType": "METADATA", "metadataField": "PATH", "labelTexts": []string{"path"}, "labelMatchingType": "EXACT"},
				{"attributeKey": "department", "sourceType": "MANUAL", "defaultValue": "accounts"},
			}, "classifications": []map[string]any{{"classificationId": cid, "conditions": []map[string]any{{"sourceType": "CONTENT", "matchingType": "CONTAINS", "text": "invoice"}}}}}}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			mid := quiretest.Str(t, r.JSON(t), "mappingId")
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "inbox/acme.txt", "contentType": "text/plain",
				"content": "ACME Corp INVOICE\nInvoice  N o.: INV-4711 (please quote)\nTotal due: 1,250.50\n",
				"actions": []map[string]any{{"type": "IDP", "parameters": map[string]any{"mappingId": mid}}}})
			if st := servertest.WaitActions(t, s, tok, site.Query, id); !servertest.EqualStrings(st, []string{"COMPLETE"}) {
				t.Fatalf("%v %v", st, servertest.Actions(t, s, tok, site.Query, id))
			}
			want := map[string]string{"invoiceNumber": `"stringValue":"INV-4711"`, "invoiceTotal": `"numberValue":1250.5`,
				"sourcePath": `"stringValue":"inbox/acme.txt"`, "department": `"stringValue":"accounts"`, "Classification": `"stringValue":"` + cid + `"`}
			for key, frag := range want {
				r := s.Do(http.MethodGet, "/documents/"+id+"/attributes/"+key+site.Query, nil, tok)
				servertest.MustStatus(t, r, http.StatusOK)
				if !strings.Contains(string(r.Body), frag) {
					t.Fatalf("%s: %s lacks %s", key, r.Body, frag)
				}
			}
		})
	}
}

// TestActions_OnArtifacts runs actions on an artifact (artifactId on the
// action routes): OCR reads the artifact's content and its result is the
// artifact's; a RESIZE of the artifact is an artifact of its document;
// the document's own actions and OCR stay apart.
func TestActions_OnArtifacts(t *testing.T) {
	quiretest.NeedProgram(t, "tesseract", "tesseract-ocr")
	s := servertest.PipelineServer(t)
	tok := s.Admin()
	img := quiretest.TextImage("Delivery note", "Acme Warehouse")
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			doc := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "notes/original.txt", "content": "original", "actions": []any{}})
			r := s.Do(http.MethodPost, "/documents"+site.Query, map[string]any{"documentId": doc, "artifacts": true, "contentType": "image/png",
				"isBase64": true, "content": servertest.B64(quiretest.PNG(img))}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			art := quiretest.Str(t, r.JSON(t), "artifactId")
			onArt := servertest.Query(site.Query, "artifactId="+art)
			servertest.MustStatus(t, s.Do(http.MethodPost, "/documents/"+doc+"/actions"+onArt, map[string]any{"actions": []map[string]any{
				{"type": "OCR", "parameters": map[string]any{"ocrParseTypes": "text"}},
				{"type": "RESIZE", "parameters": map[string]any{"width": "50", "height": "auto"}}}}, tok), http.StatusOK)
			if st := servertest.WaitActions(t, s, tok, onArt, doc); !servertest.EqualStrings(st, []string{"COMPLETE", "COMPLETE"}) {
				t.Fatalf("artifact actions: %v", st)
			}
			o := s.Do(http.MethodGet, "/documents/"+doc+"/ocr"+onArt, nil, tok)
			servertest.MustStatus(t, o, http.StatusOK)
			if data := quiretest.Str(t, o.JSON(t), "data"); !strings.Contains(data, "Acme") {
				t.Errorf("artifact OCR: %s", o.Body)
			}
			if own := s.Do(http.MethodGet, "/documents/"+doc+"/actions"+site.Query, nil, tok); strings.Contains(string(own.Body), "OCR") {
				t.Errorf("the document's own actions list the artifact's: %s", own.Body)
			}
			if own := s.Do(http.MethodGet, "/documents/"+doc+"/ocr"+site.Query, nil, tok); own.Status != http.StatusNotFound {
				t.Errorf("the document's own OCR: %d %s, want 404", own.Status, own.Body)
			}
			l := s.Do(http.MethodGet, "/documents/"+doc+"/artifacts"+site.Query, nil, tok)
			servertest.MustStatus(t, l, http.StatusOK)
			if n := len(quiretest.List(t, l.JSON(t), "documents")); n != 2 || !strings.Contains(string(l.Body), `"artifactCategory":"RENDITION"`) {
				t.Errorf("artifacts after the artifact's RESIZE (want it and its rendition): %s", l.Body)
			}
		})
	}
}
