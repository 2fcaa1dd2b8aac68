package convert

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"quire/pipeline/engine"
)

// IsPlainText reports whether content of media type mt is text as it is.
func IsPlainText(mt string) bool {
	if strings.HasPrefix(mt, "text/") {
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/x-yaml", "application/yaml", "application/javascript":
		return true
	}
	return strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml")
}

// PDFText is the text of the PDF in (in dir, the engine's scratch
// directory) as pdftotext (prog) reads it, at most engine.MaxText bytes.
func PDFText(ctx context.Context, dir, prog, in string) (string, error) {
	out := filepath.Join(dir, "out.txt")
	if _, err := engine.Run(ctx, dir, prog, "-enc", "UTF-8", in, out); err != nil {
		return "", err
	}
	f, err := os.Open(out)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, engine.MaxText))
	return strings.ToValidUTF8(string(b), ""), err
}

// IsOffice reports whether OfficeText reads content of media type mt
// (OOXML and ODF documents, spreadsheets and presentations).
func IsOffice(mt string) bool { return officeTextParts(mt) != nil }

// officeTextParts returns the archive members holding the text of an
// Office document type, nil for other types.
func officeTextParts(mt string) func(name string) bool {
	switch mt {
	case "application/vnd.openxmlformats-officedocument.wordprocessingml.document":
		return func(n string) bool {
			return n == "word/document.xml" || strings.HasPrefix(n, "word/header") || strings.HasPrefix(n, "word/footer") || n == "word/footnotes.xml"
		}
	case "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet":
		return func(n string) bool {
			return n == "xl/sharedStrings.xml" || (strings.HasPrefix(n, "xl/worksheets/sheet") && strings.HasSuffix(n, ".xml"))
		}
	case "application/vnd.openxmlformats-officedocument.presentationml.presentation":
		return func(n string) bool {
			return strings.HasPrefix(n, "ppt/slides/slide") && strings.HasSuffix(n, ".xml")
		}
	case "application/vnd.oasis.opendocument.text", "application/vnd.oasis.opendocument.spreadsheet", "application/vnd.oasis.opendocument.presentation":
		return func(n string) bool { return n == "content.xml" }
	}
	return nil
}

// OfficeText reads the character data of the XML parts of the Office
// document fn (of media type mt), one paragraph per line.
func OfficeText(ctx context.Context, fn, mt string) (string, error) {
	zr, err := zip.OpenReader(fn)
	if err != nil {
		return "", fmt.Errorf("read %s: %v", mt, err)
	}
	defer zr.Close()
	want := officeTextParts(mt)
	var files []*zip.File
	for _, f := range zr.File {
		if want(f.Name) {
			files = append(files, f)
		}
	}
	// slide10 after slide9: order parts by the number in their name.
	sort.SliceStable(files, func(a, b int) bool { return partOrder(files[a].Name) < partOrder(files[b].Name) })
	var out bytes.Buffer
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		rc, err := f.Open()
		if err != nil {
			return "", err
		}
		err = xmlText(io.LimitReader(rc, 64<<20), &out)
		rc.Close()
		if err != nil {
			return "", fmt.Errorf("read %s: %v", f.Name, err)
		}
		if out.Len() > engine.MaxText {
			break
		}
	}
	return strings.TrimSpace(out.String()), nil
}

func partOrder(name string) string {
	base := strings.TrimSuffix(filepath.Base(name), ".xml")
	i := strings.LastIndexFunc(base, func(r rune) bool { return r < '0' || r > '9' })
	num := base[i+1:]
	return filepath.Dir(name) + "/" + base[:i+1] + fmt.Sprintf("%08s", num)
}

// xmlText writes the character data of an XML document; paragraphs, rows,
// cells and line breaks of OOXML and ODF become whitespace.
func xmlText(r io.Reader, w *bytes.Buffer) error {
	d := xml.NewDecoder(r)
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.CharData:
			w.Write(t)
		case xml.StartElement:
			switch t.Name.Local {
			case "tab", "c", "table-cell":
				w.WriteByte('\t')
			case "br", "line-break":
				w.WriteByte('\n')
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "p", "h", "row", "table-row", "si":
				w.WriteByte('\n')
			}
		}
	}
}

// OfficeToPDF converts the Office document in (in dir, the engine's scratch
// directory) to a PDF of the same name in dir with LibreOffice (soffice:
// headless, a private profile).
func OfficeToPDF(ctx context.Context, soffice, dir, in string) error {
	profile, err := engine.SofficeProfile(dir)
	if err != nil {
		return err
	}
	_, err = engine.Run(ctx, dir, soffice, profile, "--headless", "--norestore", "--convert-to", "pdf", "--outdir", dir, in)
	return err
}

// ExtFor is a file extension LibreOffice recognises for a content type.
func ExtFor(ctype string) string {
	switch {
	case strings.Contains(ctype, "wordprocessingml"):
		return ".docx"
	case strings.Contains(ctype, "spreadsheetml"):
		return ".xlsx"
	case strings.Contains(ctype, "presentationml"):
		return ".pptx"
	case strings.Contains(ctype, "opendocument.text"):
		return ".odt"
	case ctype == "application/msword":
		return ".doc"
	case strings.HasPrefix(ctype, "text/"):
		return ".txt"
	}
	return ""
}
