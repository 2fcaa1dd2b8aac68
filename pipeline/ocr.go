package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"os"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"quire/pipeline/engine"
	"quire/pipeline/ocr"
	"quire/storage"
)

// runOCR reads the text of a scan, an image or a PDF, with tesseract in
// the site's languages (processing.languages), one pass per page, pages
// in parallel (package ocr: pages.go): a page that reads badly is turned upright
// (tesseract's OSD) and straightened (ocr/image.go) and read again, pages
// that already carry text keep it, and each page gets
// pipeline.ocr_page_timeout. The text, pages separated by form feeds, is
// the result. A searchable PDF/A of the pages (ocr/pdfa.go) is kept as an
// OCR artifact of the document: built after the action is recorded, so
// FULLTEXT and search do not wait for it; with
// addPdfDetectedCharactersAsText it is built within the action and
// promoted, so the document serves it. A PDF with text on every page is
// not recognized again: its own text is the result.
func runOCR(ctx context.Context, j *Job) (*Outcome, error) {
	if e := strings.ToUpper(j.Param("ocrEngine")); e != "" && e != "TESSERACT" {
		return nil, fmt.Errorf("ocrEngine '%s' is not available on this server; use 'TESSERACT'", j.Param("ocrEngine"))
	}
	pages := -1
	if v := strings.Trim(j.Param("ocrNumberOfPages"), `"`); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n == 0 || n < -1 {
			return nil, fmt.Errorf("invalid ocrNumberOfPages '%s'", v)
		}
		pages = n
	}
	mt, _, _ := mime.ParseMediaType(j.Doc.ContentType)
	if !ocr.Reads(mt) {
		return &Outcome{Status: storage.ActionSkipped, Message: fmt.Sprintf("OCR reads images and PDFs, not '%s'", j.Doc.ContentType)}, nil
	}
	conf, err := j.p.db.SiteConfig(j.Site)
	if err != nil {
		return nil, engine.Retryable(err)
	}
	langs, err := j.p.SiteOCRLanguages(ctx, conf)
	if err != nil {
		return nil, err
	}
	// An action's own ocrLanguages (checked against tesseract's when it
	// was added; the reading says which is gone if one was removed
	// since) replace the site's for this scan.
	if own, ok := OCRLanguagesParam(j.paramMap()); ok && len(own) > 0 {
		langs = own
	} else if !ok {
		return nil, fmt.Errorf("invalid ocrLanguages '%s'", j.Param("ocrLanguages"))
	}
	promote := strings.EqualFold(j.Param("addPdfDetectedCharactersAsText"), "true")
	csvOut := strings.EqualFold(j.Param("ocrOutputType"), "CSV")
	var tables, forms bool
	for _, t := range splitList(j.Param("ocrParseTypes")) {
		tables = tables || strings.EqualFold(t, "TABLES")
		forms = forms || strings.EqualFold(t, "FORMS")
	}
	rd, err := j.p.ocr.Read(ctx, ocr.Request{
		TempDir: j.p.cfg.TempDir, ContentType: mt, Content: j.ContentFile, Languages: langs, Pages: pages,
		// A searchable PDF is kept of a whole document, by a document
		// that may have artifacts (or promotes it as its new content).
		PDF: j.Doc.ArtifactOf == "" || promote, Promote: promote,
		TSV: csvOut || tables || forms, Background: j.pendingArtifact != "",
	})
	if err != nil {
		return nil, err
	}
	// The scratch dir goes with the rendition when it is built after the
	// action; otherwise it goes now.
	owned := false
	defer func() {
		if !owned {
			os.RemoveAll(rd.Dir)
		}
	}()
	if rd.TextLayer {
		// A PDF whose every page has text needs no OCR: its text is
		// the result (what FULLTEXT would read), nothing is rewritten.
		return &Outcome{
			Texts:    []storage.TextRecord{{Kind: storage.TextOCR, ContentSHA: j.Doc.ContentSHA256, Text: truncateChars(rd.Text, -1), ContentType: "text/plain", Engine: "tesseract"}},
			Metadata: map[string]string{"pages": strconv.Itoa(strings.Count(rd.Text, "\f")), "textLayer": "true"},
			Message:  "every page has a text layer: its text is used, nothing was recognized",
		}, nil
	}
	out := &Outcome{
		Texts:    []storage.TextRecord{{Kind: storage.TextOCR, ContentSHA: j.Doc.ContentSHA256, Text: truncateChars(rd.Text, -1), ContentType: "text/plain", Engine: "tesseract"}},
		Metadata: map[string]string{"pages": strconv.Itoa(rd.Pages), "languages": strings.Join(langs, "+")},
	}
	if len(rd.TimedOut) > 0 {
		out.Message = fmt.Sprintf("page %s not recognized within the per-page limit of %s (pipeline.ocr_page_timeout); retry the action to try again",
			strings.Join(rd.TimedOut, ", "), j.p.cfg.OCRPageTimeout)
		out.Metadata["pagesTimedOut"] = strings.Join(rd.TimedOut, ",")
	}
	if len(rd.Fixed) > 0 {
		out.Metadata["pagesFixed"] = strings.Join(rd.Fixed, "; ")
	}
	if csvOut || tables || forms {
		if err := j.ocrLayout(ctx, rd.Lines(), csvOut, tables, forms, out); err != nil {
			return nil, err
		}
	}
	if !rd.MakesPDF() {
		return out, nil
	}
	if promote || j.Doc.ArtifactOf != "" {
		pdf, err := rd.SearchablePDF(ctx, false)
		if err != nil {
			return nil, err
		}
		if err := j.keepSearchablePDF(ctx, pdf, promote, "", out); err != nil {
			return nil, err
		}
		return out, nil
	}
	// The rendition follows the action: its artifact id is known now,
	// and the outcome records it as pending (renditions.go), so that it
	// is made even if this process stops before it is kept.
	id := j.pendingArtifact
	if id == "" {
		id = uuid.NewString()
	}
	out.Metadata["artifactId"] = id
	out.rendition = &storage.PendingRendition{ArtifactID: id, ContentSHA256: j.Doc.ContentSHA256}
	owned = true
	out.discard = func() { os.RemoveAll(rd.Dir) }
	out.background = func(bctx context.Context) {
		defer os.RemoveAll(rd.Dir)
		if err := j.keepRendition(bctx, rd, id); err != nil && bctx.Err() == nil {
			j.p.log.Warn("OCR searchable PDF not kept", "site", j.Site, "document", j.Doc.DocumentID, "err", err)
			// The action says so (artifactStatus FAILED): the first
			// make is given up at once, a rebuild after a start is
			// counted (renditions.go). A stop is no failure: the
			// rendition stays pending for the next start.
			j.p.failRendition(bctx, j.Site, j.Action.UserID, storage.FailRendition{DocumentID: j.Doc.DocumentID, ArtifactID: id,
				Message: "the searchable PDF could not be made: " + errorMessage(err), GiveUp: j.pendingArtifact == ""})
		}
	}
	return out, nil
}

// keepRendition builds the searchable PDF/A after the OCR action and adds
// it as the OCR artifact id, unless the document has new content since.
func (j *Job) keepRendition(ctx context.Context, rd *ocr.Reading, id string) error {
	pdf, err := rd.SearchablePDF(ctx, true)
	if err != nil {
		return err
	}
	doc, err := j.p.db.GetDocument(j.Site, j.Doc.DocumentID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil // deleted meanwhile
	}
	if err != nil {
		return err
	}
	if doc.ContentSHA256 != j.Doc.ContentSHA256 {
		return nil // a new version came meanwhile: its own OCR keeps its own
	}
	out := &Outcome{Metadata: map[string]string{}}
	if err := j.keepSearchablePDF(ctx, pdf, false, id, out); err != nil {
		return err
	}
	for _, c := range out.Then {
		if _, err := j.p.apply.Apply(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// ocrLayout adds what ocrOutputType CSV and ocrParseTypes TABLES and
// FORMS ask for to out, from the lines of the pages tesseract read.
func (j *Job) ocrLayout(ctx context.Context, lines ocr.Lines, csvOut, tables, forms bool, out *Outcome) error {
	if tables {
		t := lines.Tables()
		if t == nil {
			t = []ocr.Table{}
		}
		v, _ := json.Marshal(t)
		out.Results = append(out.Results, storage.ActionResult{Kind: "ocr", Name: "tables", Value: v})
		out.Metadata["tables"] = strconv.Itoa(len(t))
	}
	if forms {
		kv := lines.KeyValues()
		v, _ := json.Marshal(kv)
		out.Results = append(out.Results, storage.ActionResult{Kind: "ocr", Name: "keyValues", Value: v})
		out.Metadata["keyValues"] = strconv.Itoa(len(kv))
	}
	if csvOut && j.Doc.ArtifactOf == "" {
		m, tail, err := storage.WriteContent(ctx, j.p.apply, bytes.NewReader(lines.CSV()), 0, nil)
		if err != nil {
			return fmt.Errorf("store OCR CSV: %w", err)
		}
		id := uuid.NewString()
		art := storage.Document{DocumentID: id, ContentType: "text/csv", UserID: j.Action.UserID, ArtifactCategory: OCRArtifactCategory}
		add, err := j.command(storage.OpAddArtifact, storage.AddArtifact{DocumentID: j.Doc.DocumentID,
			Artifact: storage.NewDocument{Document: art, Content: &m, Chunks: tail}})
		if err != nil {
			return err
		}
		out.Then = append(out.Then, add)
		out.Metadata["csvArtifactId"] = id
	}
	return nil
}

// keepSearchablePDF stores the searchable PDF/A OCR made as an OCR
// artifact of the document. Promoted (addPdfDetectedCharactersAsText), the
// document's content, url and fulltext serve it, as FormKiQ's rewrite
// does, while the scan stays the document's own content. An artifact,
// which has no artifacts of its own, gets the PDF as new content when
// promoting was asked for (its earlier content stays a version), and keeps
// none otherwise. id is the artifact's id ("": a new one).
func (j *Job) keepSearchablePDF(ctx context.Context, fn string, promote bool, id string, out *Outcome) error {
	if j.Doc.ArtifactOf != "" && !promote {
		return nil
	}
	f, err := os.Open(fn)
	if err != nil {
		return err
	}
	defer f.Close()
	m, tail, err := storage.WriteContent(ctx, j.p.apply, f, 0, nil)
	if err != nil {
		return fmt.Errorf("store searchable PDF: %w", err)
	}
	if len(m.Chunks) == 0 {
		return errors.New("OCR wrote an empty PDF")
	}
	out.Metadata["searchablePdf"] = "true"
	if j.Doc.ArtifactOf != "" {
		c, err := j.command(storage.OpUpdateDocument, storage.UpdateDocument{DocumentID: j.Doc.DocumentID, Content: &m, Chunks: tail})
		if err != nil {
			return err
		}
		out.Then = append(out.Then, c)
		// The text belongs to the rewritten content from now on.
		for i := range out.Texts {
			out.Texts[i].ContentSHA = m.SHA256
		}
		return nil
	}
	if id == "" {
		id = uuid.NewString()
	}
	art := storage.Document{DocumentID: id, ContentType: "application/pdf", UserID: j.Action.UserID, ArtifactCategory: OCRArtifactCategory}
	add, err := j.command(storage.OpAddArtifact, storage.AddArtifact{DocumentID: j.Doc.DocumentID,
		Artifact: storage.NewDocument{Document: art, Content: &m, Chunks: tail}})
	if err != nil {
		return err
	}
	out.Then = append(out.Then, add)
	out.Metadata["artifactId"] = id
	out.Metadata["artifactStatus"] = storage.ArtifactComplete // added with the outcome
	if promote {
		p, err := j.command(storage.OpPromoteArtifact, storage.ArtifactRef{DocumentID: j.Doc.DocumentID, ArtifactID: id})
		if err != nil {
			return err
		}
		out.Then = append(out.Then, p)
	}
	return nil
}

// OCRArtifactCategory is the artifactCategory of a searchable PDF the OCR
// action made.
const OCRArtifactCategory = "OCR"
