package pdfwork

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"quire/pipeline/engine"
)

// Document generation (POST /documents/{id}/generate; API.md "Document
// generation"): a DOCX or ODT template's {{Key}} placeholders are filled
// from data, the result is kept as DOCX/ODT or rendered to PDF with
// LibreOffice, and PDFs may be appended with qpdf.

// Template kinds.
const (
	TemplateDOCX = "docx"
	TemplateODT  = "odt"
	// TemplatePDF is a PDF source document: package generation puts the
	// inserted PDFs and images before and after it (no placeholders).
	TemplatePDF = "pdf"
)

// GenerateError is a template or an input generation cannot use (a 400).
type GenerateError struct{ Msg string }

func (e *GenerateError) Error() string { return e.Msg }

// GenerateRequest is one generation.
type GenerateRequest struct {
	Template io.Reader         // the template's content
	Kind     string            // TemplateDOCX or TemplateODT
	Data     map[string]string // placeholder values
	PDF      bool              // render to PDF
	Inserts  []Insert          // PDFs and images added to the PDF, in order
}

// Insert is a PDF or an image (a page of its own) put before or after
// the generated PDF.
type Insert struct {
	R       io.Reader
	Image   bool // a PNG or JPEG, not a PDF
	Prepend bool
}

// Generated is a generation's output, in a temporary file that Close
// removes.
type Generated struct {
	*os.File
	dir         string
	ContentType string
	Ext         string
}

// Close closes and removes the output.
func (g *Generated) Close() error {
	err := g.File.Close()
	os.RemoveAll(g.dir)
	return err
}

// genSlots bounds concurrent generations (LibreOffice is heavy).
var genSlots = make(chan struct{}, 2)

// placeholder matches {{Key}} in document XML, also when a word processor
// split it across runs: tags may sit between and inside the braces.
var placeholder = regexp.MustCompile(`\{(?:<[^>]*>)*\{((?:<[^>]*>|[^{}<])*?)\}(?:<[^>]*>)*\}`)

var tagRE = regexp.MustCompile(`<[^>]*>`)

var keyRE = regexp.MustCompile(`^[A-Za-z0-9_.\-]{1,256}$`)

// fillXML replaces the placeholders of one XML part. A placeholder split
// across runs keeps the first run's formatting: the tags inside it go.
func fillXML(src string, data map[string]string) string {
	return placeholder.ReplaceAllStringFunc(src, func(m string) string {
		sub := placeholder.FindStringSubmatch(m)
		key := strings.TrimSpace(tagRE.ReplaceAllString(sub[1], ""))
		if !keyRE.MatchString(key) {
			return m
		}
		var b strings.Builder
		xml.EscapeText(&b, []byte(data[key]))
		return b.String()
	})
}

// filledParts are the parts of a template whose text is filled.
func filledPart(kind, name string) bool {
	if kind == TemplateODT {
		return name == "content.xml" || name == "styles.xml"
	}
	return strings.HasPrefix(name, "word/") && strings.HasSuffix(name, ".xml") &&
		(name == "word/document.xml" || strings.HasPrefix(name, "word/header") || strings.HasPrefix(name, "word/footer"))
}

// maxPartBytes bounds one XML part of a template read into memory;
// maxTemplateBytes the whole template unpacked.
const (
	maxPartBytes        = 32 << 20
	maxTemplateBytes    = 256 << 20
	maxImageInsertBytes = 20 << 20
)

// Generate runs req in a scratch directory under tempDir, rendering with
// the LibreOffice soffice names (configured; "": on PATH), and returns
// its output.
func Generate(ctx context.Context, tempDir, soffice string, req GenerateRequest) (*Generated, error) {
	select {
	case genSlots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-genSlots }()
	dir, err := os.MkdirTemp(tempDir, "generate-")
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(dir)
		}
	}()
	ext := "." + req.Kind
	in := filepath.Join(dir, "template"+ext)
	if err := writeFile(in, req.Template); err != nil {
		return nil, err
	}
	out := filepath.Join(dir, "document"+ext)
	g := &Generated{dir: dir, Ext: ext, ContentType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document"}
	if req.Kind == TemplatePDF {
		if !req.PDF || len(req.Inserts) == 0 {
			return nil, &GenerateError{Msg: "a PDF source document generates a PDF package with inserted documents"}
		}
		out = in // package generation: the source is the PDF the inserts go around
	} else if err := fillTemplate(in, out, req.Kind, req.Data); err != nil {
		return nil, err
	}
	if req.Kind == TemplateODT {
		g.ContentType = "application/vnd.oasis.opendocument.text"
	}
	if req.PDF && req.Kind == TemplatePDF {
		g.ContentType, g.Ext = "application/pdf", ".pdf"
	} else if req.PDF {
		prog, err := engine.Find(soffice, "soffice", "libreoffice-writer-nogui")
		if err != nil {
			return nil, err
		}
		profile, err := engine.SofficeProfile(dir)
		if err != nil {
			return nil, err
		}
		if _, err := engine.Run(ctx, dir, prog, profile, "--headless", "--norestore", "--convert-to", "pdf", "--outdir", dir, out); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, &GenerateError{Msg: "LibreOffice could not render the template to PDF"}
		}
		out = filepath.Join(dir, "document.pdf")
		if _, err := os.Stat(out); err != nil {
			return nil, &GenerateError{Msg: "LibreOffice could not render the template to PDF"}
		}
		g.ContentType, g.Ext = "application/pdf", ".pdf"
	}
	if req.PDF {
		if len(req.Inserts) > 0 {
			qpdf, err := engine.Find("", "qpdf", "qpdf")
			if err != nil {
				return nil, err
			}
			var before, after []string
			for i, in := range req.Inserts {
				fn := filepath.Join(dir, fmt.Sprintf("insert-%d.pdf", i))
				if in.Image {
					b, err := io.ReadAll(io.LimitReader(in.R, maxImageInsertBytes+1))
					if err != nil {
						return nil, err
					}
					if len(b) > maxImageInsertBytes {
						return nil, &GenerateError{Msg: fmt.Sprintf("an image to insert is over %d MiB", maxImageInsertBytes>>20)}
					}
					var page bytes.Buffer
					if err := imagePagePDF(&page, b); err != nil {
						return nil, err
					}
					in.R = &page
				}
				if err := writeFile(fn, in.R); err != nil {
					return nil, err
				}
				if in.Prepend {
					before = append(before, fn)
				} else {
					after = append(after, fn)
				}
			}
			args := append(append(append([]string{"--empty", "--pages"}, before...), out), after...)
			merged := filepath.Join(dir, "merged.pdf")
			if _, err := engine.Run(ctx, dir, qpdf, append(args, "--", merged)...); err != nil {
				if req.Kind == TemplatePDF {
					return nil, &GenerateError{Msg: "the source document or a document to insert is not a PDF qpdf can read"}
				}
				return nil, &GenerateError{Msg: "a document to append is not a PDF qpdf can read"}
			}
			out = merged
		}
	}
	f, err := os.Open(out)
	if err != nil {
		return nil, err
	}
	g.File, ok = f, true
	return g, nil
}

func writeFile(fn string, r io.Reader) error {
	f, err := os.Create(fn)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// fillTemplate copies the template at in to out with its text parts
// filled; a file that is not a ZIP of the kind's parts is refused.
func fillTemplate(in, out, kind string, data map[string]string) error {
	zr, err := zip.OpenReader(in)
	if err != nil {
		return &GenerateError{Msg: fmt.Sprintf("the template is not a %s file", strings.ToUpper(kind))}
	}
	defer zr.Close()
	main := "word/document.xml"
	if kind == TemplateODT {
		main = "content.xml"
	}
	var total uint64
	for _, e := range zr.File {
		total += e.UncompressedSize64
	}
	if total > maxTemplateBytes {
		return &GenerateError{Msg: fmt.Sprintf("the template unpacks to over %d MiB", maxTemplateBytes>>20)}
	}
	found := false
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	for _, e := range zr.File {
		found = found || e.Name == main
		hdr := e.FileHeader
		w, err := zw.CreateHeader(&hdr)
		if err != nil {
			return err
		}
		rc, err := e.Open()
		if err != nil {
			return &GenerateError{Msg: "the template is a broken ZIP file"}
		}
		if filledPart(kind, e.Name) {
			b, err := io.ReadAll(io.LimitReader(rc, maxPartBytes+1))
			rc.Close()
			if err != nil {
				return &GenerateError{Msg: "the template is a broken ZIP file"}
			}
			if len(b) > maxPartBytes {
				return &GenerateError{Msg: fmt.Sprintf("a part of the template is over %d MiB", maxPartBytes>>20)}
			}
			if _, err := io.WriteString(w, fillXML(string(b), data)); err != nil {
				return err
			}
			continue
		}
		_, err = io.Copy(w, rc)
		rc.Close()
		if err != nil {
			return &GenerateError{Msg: "the template is a broken ZIP file"}
		}
	}
	if !found {
		return &GenerateError{Msg: fmt.Sprintf("the template is not a %s file (no %s)", strings.ToUpper(kind), main)}
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}
