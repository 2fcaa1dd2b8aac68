package signatures_test

import (
	"archive/zip"
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"quire/quiretest"
	"quire/server/internal/servertest"
)

const docxType = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

// TestGenerate_FromTemplate fills a Word template (placeholders split
// across runs included) from the template's attributes and a JSON data
// source, renders it to PDF with LibreOffice, appends a PDF, keeps DOCX
// output as an artifact and replaces it; bad inputs are 400s. Both sites.
func TestGenerate_FromTemplate(t *testing.T) {
	quiretest.NeedProgram(t, "soffice", "libreoffice-writer-nogui")
	quiretest.NeedProgram(t, "qpdf", "qpdf")
	s := quiretest.NewServer(t, quiretest.DefaultProcessing)
	tok := s.Admin()
	for _, site := range servertest.Sites {
		t.Run(site.Name, func(t *testing.T) {
			servertest.DefineAttr(t, s, tok, site.Query, "CustomerName", "STRING", nil)
			tmpl := quiretest.DOCXRuns(
				[]string{"Dear {{Cust", "omerName}},"},
				[]string{"Invoice total {{", "amount", "}} EUR"},
				[]string{"Missing: [{{Nope}}]"},
				[]string{"Note: {{note}} / {{customer.city}}"},
			)
			id := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "tmpl/invoice.docx", "contentType": docxType, "isBase64": true, "content": servertest.B64(tmpl),
				"attributes": []map[string]any{{"key": "CustomerName", "stringValue": "Globex Corp"}}})
			data := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "tmpl/data.json", "contentType": "application/json",
				"content": `{"data":{"amount":42.5,"note":"a<b & c","customer":{"city":"Springfield"}}}`})
			appendix := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "tmpl/terms.pdf", "contentType": "application/pdf", "isBase64": true,
				"content": servertest.B64(quiretest.TextPDF("Terms and conditions"))})
			logo := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "tmpl/cover.jpg", "contentType": "image/jpeg", "isBase64": true,
				"content": servertest.B64(servertest.JpegOf(t, quiretest.TextImage("COVER")))})
			gen := "/documents/" + id + "/generate" + site.Query

			r := s.Do(http.MethodPost, gen, map[string]any{"outputType": "PDF", "path": "out/invoice.pdf",
				"datasources":     []map[string]any{{"documentId": data}},
				"insertDocuments": []map[string]any{{"documentId": appendix, "position": "APPEND"}, {"documentId": logo, "position": "PREPEND"}}}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			out := quiretest.Str(t, r.JSON(t), "documentId")
			pdf := servertest.FetchURLContent(t, s, tok, out, site.Query)
			text := strings.Join(strings.Fields(servertest.PdfText(t, pdf)), " ")
			for _, want := range []string{"Dear Globex Corp,", "Invoice total 42.5 EUR", "Missing: []", "Note: a<b & c / Springfield", "Terms and conditions"} {
				if !strings.Contains(text, want) {
					t.Errorf("generated PDF lacks %q: %q", want, text)
				}
			}
			if p := servertest.PdfPages(t, pdf); p != "3" {
				t.Errorf("pages %s, want 3 (a cover image, the template and the appended PDF)", p)
			}
			if !strings.HasPrefix(text, "Dear") && strings.Index(text, "Dear") > strings.Index(text, "Terms") {
				t.Errorf("order: the appended PDF comes before the template: %q", text)
			}
			if d := s.Do(http.MethodGet, "/documents/"+out+site.Query, nil, tok); quiretest.Str(t, d.JSON(t), "path") != "out/invoice.pdf" {
				t.Errorf("generated document: %s", d.Body)
			}
			// A generated document gets the site's default processing
			// (API.md "Default processing"), and so does new content
			// generated into an existing document (saveAsDocumentId).
			if st := servertest.WaitActions(t, s, tok, site.Query, out); !servertest.EqualStrings(st, []string{"COMPLETE", "COMPLETE"}) {
				t.Errorf("generated document's actions %v, want OCR and FULLTEXT COMPLETE", servertest.Actions(t, s, tok, site.Query, out))
			}
			r = s.Do(http.MethodPost, gen, map[string]any{"outputType": "PDF", "saveAsDocumentId": out, "datasources": []map[string]any{{"documentId": data}}}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			if st := servertest.WaitActions(t, s, tok, site.Query, out); len(st) != 4 || servertest.NthAction(t, s, tok, site.Query, out, 3)["type"] != "FULLTEXT" {
				t.Errorf("generated new content's actions %v, want a second OCR and FULLTEXT", servertest.Actions(t, s, tok, site.Query, out))
			}

			// DOCX output, kept as an artifact of the template, then replaced.
			r = s.Do(http.MethodPost, gen, map[string]any{"saveAsArtifact": true, "artifactCategory": "DRAFT", "datasources": []map[string]any{{"documentId": data}}}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			art := quiretest.Str(t, r.JSON(t), "artifactId")
			if quiretest.Str(t, r.JSON(t), "documentId") != id || art == "" {
				t.Fatalf("artifact answer %s", r.Body)
			}
			checkDOCX := func(want string) {
				t.Helper()
				b := servertest.FetchURLContent(t, s, tok, id, servertest.Query(site.Query, "artifactId="+art))
				zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
				if err != nil {
					t.Fatalf("generated DOCX: %v", err)
				}
				for _, f := range zr.File {
					if f.Name == "word/document.xml" {
						rc, _ := f.Open()
						x, _ := io.ReadAll(rc)
						rc.Close()
						if !strings.Contains(string(x), want) || strings.Contains(string(x), "{{") {
							t.Errorf("document.xml lacks %q or keeps a placeholder: %s", want, x)
						}
						return
					}
				}
				t.Error("generated DOCX has no word/document.xml")
			}
			checkDOCX("a&lt;b &amp; c")
			servertest.MustStatus(t, s.Do(http.MethodPut, "/documents/"+id+"/attributes/CustomerName"+site.Query, map[string]any{"attribute": map[string]any{"stringValue": "Initech"}}, tok), http.StatusOK)
			r = s.Do(http.MethodPost, gen, map[string]any{"saveAsArtifactId": art}, tok)
			servertest.MustStatus(t, r, http.StatusCreated)
			if quiretest.Str(t, r.JSON(t), "artifactId") != art {
				t.Errorf("replacing answered %s", r.Body)
			}
			checkDOCX("Initech")

			png := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "tmpl/logo.png", "contentType": "image/png", "isBase64": true, "content": servertest.B64(quiretest.PNG(quiretest.TextImage("x")))})
			broken := servertest.AddDoc(t, s, tok, site.Query, map[string]any{"path": "tmpl/broken.docx", "contentType": docxType, "content": "PK not a zip"})
			for _, tt := range []struct {
				name, path string
				body       any
				want       string
			}{
				{"image template", "/documents/" + png + "/generate", map[string]any{}, "unsupported template type 'image/png'"},
				{"broken template", "/documents/" + broken + "/generate", map[string]any{}, "the template is not a DOCX file"},
				{"bad output type", gen, map[string]any{"outputType": "XLS"}, "invalid 'outputType'"},
				{"append to DOCX", gen, map[string]any{"insertDocuments": []map[string]any{{"documentId": appendix, "position": "APPEND"}}}, "needs outputType PDF"},
				{"append a text", gen, map[string]any{"outputType": "PDF", "insertDocuments": []map[string]any{{"documentId": data, "position": "APPEND"}}}, "is not a PDF, PNG or JPEG"},
				{"bad position", gen, map[string]any{"outputType": "PDF", "insertDocuments": []map[string]any{{"documentId": appendix, "position": "MIDDLE"}}}, "invalid 'position'"},
				{"data not JSON", gen, map[string]any{"datasources": []map[string]any{{"documentId": appendix}}}, "is not JSON"},
				{"no data root", gen, map[string]any{"datasources": []map[string]any{{"documentId": data, "dataRoot": "nope"}}}, "has no object at 'nope'"},
			} {
				p := tt.path
				if !strings.Contains(p, "?") {
					p += site.Query
				}
				r := s.Do(http.MethodPost, p, tt.body, tok)
				if r.Status != http.StatusBadRequest || !strings.Contains(string(r.Body), tt.want) || !strings.Contains(string(r.Body), `"errors"`) {
					t.Errorf("%s: %d %s, want 400 with %q", tt.name, r.Status, r.Body, tt.want)
				}
			}
		})
	}
}

// TestGenerate_FolderPermissions: generation reads its data sources and
// inserted documents with READ on their folders and writes its output
// (saveAsDocumentId, path, an artifact) with WRITE on the target's folder;
// refused, nothing is written (issue 29, finding 2).
func TestGenerate_FolderPermissions(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	bob := s.Token("bob", "default", "hr_team")
	tmplDOCX := quiretest.DOCXRuns([]string{"Hello {{name}}"})
	tmpl := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "pub/t.docx", "contentType": docxType, "isBase64": true, "content": servertest.B64(tmplDOCX)})
	secretData := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "closed/data.json", "contentType": "application/json", "content": `{"data":{"name":"SECRET"}}`})
	secretPDF := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "closed/x.pdf", "contentType": "application/pdf", "isBase64": true, "content": servertest.B64(quiretest.TextPDF("secret"))})
	roTarget := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "ro/target.docx", "contentType": docxType, "isBase64": true, "content": servertest.B64(tmplDOCX)})
	roTmpl := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "ro/t.docx", "contentType": docxType, "isBase64": true, "content": servertest.B64(tmplDOCX)})
	openData := servertest.AddDoc(t, s, admin, "", map[string]any{"path": "pub/data.json", "contentType": "application/json", "content": `{"data":{"name":"Ann"}}`})
	servertest.SetFolderRoles(t, s, admin, "", "closed", map[string][]string{"other": {"READ", "WRITE"}})
	servertest.SetFolderRoles(t, s, admin, "", "ro", map[string][]string{"hr_team": {"READ"}})
	before := servertest.FetchURLContent(t, s, admin, roTarget, "")

	gen := "/documents/" + tmpl + "/generate"
	for _, c := range []struct {
		name string
		path string
		body map[string]any
		want int
	}{
		{"data source in a closed folder", gen, map[string]any{"path": "pub/o1.docx", "datasources": []map[string]any{{"documentId": secretData}}}, 401},
		{"inserted document in a closed folder", gen, map[string]any{"outputType": "PDF", "path": "pub/o2.pdf", "insertDocuments": []map[string]any{{"documentId": secretPDF, "position": "APPEND"}}}, 401},
		{"overwrite a read-only folder's document", gen, map[string]any{"saveAsDocumentId": roTarget}, 401},
		{"plant in a read-only folder", gen, map[string]any{"path": "ro/planted.docx"}, 401},
		{"plant in a closed folder", gen, map[string]any{"path": "closed/planted.docx"}, 401},
		{"new saveAsDocumentId in a closed folder", gen, map[string]any{"saveAsDocumentId": "8a1e1b8e-1111-4c2a-9e3b-111111111111", "path": "closed/p.docx"}, 401},
		{"artifact of a read-only folder's template", "/documents/" + roTmpl + "/generate", map[string]any{"saveAsArtifact": true}, 401},
		{"allowed: open folders", gen, map[string]any{"path": "pub/ok.docx", "datasources": []map[string]any{{"documentId": openData}}}, 201},
	} {
		r := s.Do(http.MethodPost, c.path, c.body, bob)
		if r.Status != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, r.Status, r.Body, c.want)
		}
	}
	if after := servertest.FetchURLContent(t, s, admin, roTarget, ""); !bytes.Equal(before, after) {
		t.Error("the read-only folder's document was overwritten")
	}
	for _, folder := range []string{"ro", "closed"} {
		r := s.Do(http.MethodGet, "/folders?path="+folder, nil, admin)
		servertest.MustStatus(t, r, http.StatusOK)
		if n := len(quiretest.List(t, r.JSON(t), "documents")); n != 2 {
			t.Errorf("folder %s holds %d documents, want 2 (nothing planted)", folder, n)
		}
	}
	if r := s.Do(http.MethodGet, "/documents/8a1e1b8e-1111-4c2a-9e3b-111111111111", nil, admin); r.Status != http.StatusNotFound {
		t.Errorf("saveAsDocumentId was created: %d", r.Status)
	}
	if r := s.Do(http.MethodGet, "/documents/"+roTmpl+"/artifacts", nil, admin); r.Status == http.StatusOK && len(quiretest.List(t, r.JSON(t), "documents")) != 0 {
		t.Errorf("an artifact was added: %s", r.Body)
	}
}
