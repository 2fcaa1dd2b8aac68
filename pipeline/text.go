package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"quire/pipeline/convert"
	"quire/pipeline/engine"
	"quire/storage"
)

// maxText bounds the text an action keeps (characterMax -1 included): the
// text is stored with the document and indexed in one piece.
const maxText = engine.MaxText

// defaultCharacterMax is FormKiQ's default for FULLTEXT.
const defaultCharacterMax = 2048

// runFulltext extracts the document's text and keeps it for search: the
// OCR text when an OCR action read this content (FormKiQ #172), else the
// text of plain text, PDF and Office (OOXML, ODF) content.
func runFulltext(ctx context.Context, j *Job) (*Outcome, error) {
	limit := defaultCharacterMax
	if v := j.Param("characterMax"); v != "" {
		n, err := strconv.Atoi(strings.Trim(v, `"`))
		if err != nil || n == 0 || n < -1 {
			return nil, fmt.Errorf("invalid characterMax '%s'", v)
		}
		limit = n
	}
	text, source, err := j.text(ctx)
	if err != nil {
		return nil, err
	}
	if source == "" {
		return &Outcome{Status: storage.ActionSkipped, Message: fmt.Sprintf("no text can be read from content of type '%s'; add an OCR action before FULLTEXT", j.Doc.ContentType)}, nil
	}
	text = truncateChars(text, limit)
	rec := storage.TextRecord{Kind: storage.TextFulltext, ContentSHA: j.Doc.ContentSHA256, Text: text, ContentType: "text/plain", Engine: source}
	// A text that is the start of the content (valid UTF-8 plain text)
	// or of the OCR text is not stored a second time: the record names
	// it (storage/textref.go) and reads give it back.
	switch {
	case source == "content" && j.textExact:
		rec.Text, rec.From, rec.Bytes = "", storage.TextFromContent, int64(len(text))
	case source == "ocr":
		rec.Text, rec.From, rec.Bytes = "", storage.TextOCR, int64(len(text))
	}
	return &Outcome{
		// The index reads plain text content itself, whole; other text
		// (PDF, Office, OCR) it takes from this record.
		Reindex:  source != "content",
		Texts:    []storage.TextRecord{rec},
		Metadata: map[string]string{"source": source, "characters": strconv.Itoa(utf8.RuneCountInString(text))},
	}, nil
}

// truncateChars keeps the first limit characters (-1: up to maxText bytes).
func truncateChars(s string, limit int) string {
	if limit > 0 {
		n := 0
		for i := range s {
			if n == limit {
				return s[:i]
			}
			n++
		}
	}
	if len(s) > maxText {
		s = s[:maxText]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return s
}

// text returns the document's text and where it came from ("" when the
// content type has none).
func (j *Job) text(ctx context.Context) (string, string, error) {
	// Only an OCR action or PUT /ocr (Doc.OCRText) stores OCR text:
	// without either the read (which waits for the synced commits under
	// way) is left out.
	if j.hasAction("OCR") || j.Doc.OCRText {
		if tr, err := j.p.db.Text(j.Site, j.Doc.DocumentID, storage.TextOCR); err != nil {
			return "", "", err
		} else if tr != nil {
			return tr.Text, "ocr", nil
		}
	}
	if !j.Doc.HasContent {
		return "", "", errors.New("the document has no content")
	}
	mt, _, _ := mime.ParseMediaType(j.Doc.ContentType)
	switch {
	case convert.IsPlainText(mt):
		rc, err := j.Open()
		if err != nil {
			return "", "", err
		}
		defer rc.Close()
		b, err := io.ReadAll(io.LimitReader(engine.ContextReader(ctx, rc), maxText))
		if err != nil {
			return "", "", err
		}
		// Valid UTF-8, the text is the content's first bytes.
		j.textExact = utf8.Valid(b)
		return strings.ToValidUTF8(string(b), ""), "content", nil
	case mt == "application/pdf":
		t, err := j.pdfText(ctx)
		return t, "pdftotext", err
	case convert.IsOffice(mt):
		t, err := j.officeText(ctx, mt)
		return t, "office", err
	}
	return "", "", nil
}

// pdfText runs pdftotext on the content.
func (j *Job) pdfText(ctx context.Context) (string, error) {
	prog, err := engine.Find(j.p.cfg.Engines.Pdftotext, "pdftotext", "poppler-utils")
	if err != nil {
		return "", err
	}
	dir, err := j.TempDir()
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	in, err := j.ContentFile(dir, "in.pdf")
	if err != nil {
		return "", err
	}
	return convert.PDFText(ctx, dir, prog, in)
}

// officeText reads the character data of an Office document's XML parts,
// one paragraph per line.
func (j *Job) officeText(ctx context.Context, mt string) (string, error) {
	dir, err := j.TempDir()
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	fn, err := j.ContentFile(dir, "in.zip")
	if err != nil {
		return "", err
	}
	return convert.OfficeText(ctx, fn, mt)
}

// hasAction reports whether the document has an action of type typ (in
// any status), or its actions are unknown.
func (j *Job) hasAction(typ string) bool {
	if j.Actions == nil {
		return true
	}
	for _, a := range j.Actions {
		if a.Type == typ {
			return true
		}
	}
	return false
}
