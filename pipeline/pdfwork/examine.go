package pdfwork

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"quire/pipeline/engine"
)

// PDF examination (GET /objects/examine/{id}/pdf): what a PDF holds, read
// by poppler's pdfinfo (pages, document info, encryption) and qpdf --json
// (form fields and their values, signature fields). Both run as engines:
// their own process group, killed at the deadline, so a hostile PDF costs
// at most examineTimeout and never the server.

// examineTimeout bounds one examination.
const examineTimeout = 30 * time.Second

// PDFReport is what a PDF holds.
type PDFReport struct {
	Pages      int               `json:"pages"`
	PDFVersion string            `json:"pdfVersion,omitempty"`
	Info       map[string]string `json:"info"`
	Encrypted  bool              `json:"encrypted"`
	Signed     bool              `json:"signed"`
	Signatures int               `json:"signatures"`
	Fields     []PDFField        `json:"fields"`
}

// PDFField is a form field and its value (FormKiQ's PdfDocumentField).
type PDFField struct {
	Field string `json:"field"`
	Value string `json:"value"`
	Type  string `json:"type,omitempty"` // text, checkbox, radio, choice, signature, button
}

// ExamineError is a PDF that cannot be examined: not a PDF, encrypted
// with a password, broken, or too slow to read (a 400 to the client).
type ExamineError struct{ Msg string }

func (e *ExamineError) Error() string { return e.Msg }

// pdfinfoInfoKeys are the document info entries pdfinfo prints.
var pdfinfoInfoKeys = []string{"Title", "Subject", "Keywords", "Author", "Creator", "Producer", "CreationDate", "ModDate"}

// ExaminePDF reads the PDF in r, in a scratch directory under tempDir,
// and reports what it holds.
func ExaminePDF(ctx context.Context, tempDir string, r io.Reader) (*PDFReport, error) {
	pdfinfo, err := engine.Find("", "pdfinfo", "poppler-utils")
	if err != nil {
		return nil, err
	}
	qpdf, err := engine.Find("", "qpdf", "qpdf")
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp(tempDir, "examine-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	fn := filepath.Join(dir, "in.pdf")
	f, err := os.Create(fn)
	if err != nil {
		return nil, err
	}
	head := make([]byte, 1024)
	n, _ := io.ReadFull(r, head)
	if !strings.Contains(string(head[:n]), "%PDF-") {
		f.Close()
		return nil, &ExamineError{Msg: "the file is not a PDF"}
	}
	if _, err := f.Write(head[:n]); err == nil {
		_, err = io.Copy(f, r)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, examineTimeout)
	defer cancel()
	timedOut := func(err error) error {
		if ctx.Err() != nil {
			return &ExamineError{Msg: fmt.Sprintf("the PDF could not be examined within %s", examineTimeout)}
		}
		return err
	}
	out, err := engine.Run(ctx, dir, pdfinfo, "-isodates", fn)
	if err != nil {
		if e := timedOut(err); e != err {
			return nil, e
		}
		if strings.Contains(err.Error(), "Incorrect password") {
			return nil, &ExamineError{Msg: "the PDF is encrypted with a password"}
		}
		return nil, &ExamineError{Msg: "the PDF cannot be read: " + lastLine(err.Error())}
	}
	rep := &PDFReport{Info: map[string]string{}, Fields: []PDFField{}}
	for _, l := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k = strings.TrimSpace(k); {
		case k == "Pages":
			fmt.Sscan(v, &rep.Pages)
		case k == "Encrypted":
			rep.Encrypted = strings.HasPrefix(v, "yes")
		case k == "PDF version":
			rep.PDFVersion = v
		default:
			for _, ik := range pdfinfoInfoKeys {
				if k == ik && v != "" {
					rep.Info[k] = v
				}
			}
		}
	}
	js, err := engine.Run(ctx, dir, qpdf, "--json=2", "--json-key=acroform", fn)
	if err != nil && !strings.Contains(err.Error(), "exit status 3") { // 3: warnings, the JSON is there
		if e := timedOut(err); e != err {
			return nil, e
		}
		return nil, &ExamineError{Msg: "the PDF's form cannot be read: " + lastLine(err.Error())}
	}
	var q struct {
		AcroForm struct {
			Fields []struct {
				FullName   string          `json:"fullname"`
				FieldType  string          `json:"fieldtype"`
				Value      json.RawMessage `json:"value"`
				IsCheckbox bool            `json:"ischeckbox"`
				IsRadio    bool            `json:"isradiobutton"`
				IsChoice   bool            `json:"ischoice"`
			} `json:"fields"`
		} `json:"acroform"`
	}
	if err := json.Unmarshal(js, &q); err != nil {
		return nil, &ExamineError{Msg: "the PDF's form cannot be read"}
	}
	for _, fl := range q.AcroForm.Fields {
		f := PDFField{Field: fl.FullName, Value: qpdfValue(fl.Value)}
		switch {
		case fl.FieldType == "/Sig":
			f.Type, f.Value = "signature", ""
			rep.Signatures++
			if len(fl.Value) > 0 && string(fl.Value) != "null" {
				f.Value = "signed"
				rep.Signed = true
			}
		case fl.IsCheckbox:
			f.Type = "checkbox"
		case fl.IsRadio:
			f.Type = "radio"
		case fl.IsChoice:
			f.Type = "choice"
		case fl.FieldType == "/Tx":
			f.Type = "text"
		case fl.FieldType == "/Btn":
			f.Type = "button"
		}
		rep.Fields = append(rep.Fields, f)
	}
	return rep, nil
}

// qpdfValue turns a value of qpdf's JSON v2 into text: "u:…" strings,
// "b:<hex>" byte strings, "/Name" names, numbers and booleans.
func qpdfValue(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		if len(raw) == 0 || string(raw) == "null" {
			return ""
		}
		return string(raw) // number or boolean
	}
	switch {
	case strings.HasPrefix(s, "u:"):
		return s[2:]
	case strings.HasPrefix(s, "b:"):
		if b, err := hex.DecodeString(s[2:]); err == nil {
			if utf8.Valid(b) {
				return string(b)
			}
			return "0x" + s[2:] // bytes that are no text, as hex
		}
	case strings.HasPrefix(s, "/"):
		return s[1:]
	}
	return s
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
