package pipeline

import (
	"context"
	"fmt"
	"strings"
	"time"

	"quire/pipeline/clamd"
	"quire/pipeline/engine"
	"quire/pipeline/llmchat"
	"quire/pipeline/mailer"
)

// EngineStatus is what Check found out about one engine.
type EngineStatus struct {
	Name string
	// Actions are the action types that need the engine.
	Actions string
	OK      bool
	// Configured is false for an engine nobody set up (SMTP, LLM): not
	// an error, the actions that need it fail with a message.
	Configured bool
	Detail     string
}

// Check probes every engine: programs are found and asked for their
// version, clamd is pinged, the mail server's greeting and the LLM
// endpoint's model list are read (quire doctor).
func (e Engines) Check(ctx context.Context) []EngineStatus {
	var out []EngineStatus
	prog := func(name, configured, pkg, actions string, args ...string) {
		st := EngineStatus{Name: name, Actions: actions, Configured: true}
		p, err := engine.Find(configured, name, pkg)
		if err != nil {
			st.Detail = err.Error()
			out = append(out, st)
			return
		}
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		buf := engine.NewLimitedBuffer(64 << 10)
		err = engine.Stream(c, "", buf, buf, p, args...)
		first, _, _ := strings.Cut(strings.TrimSpace(string(buf.Bytes())), "\n")
		if err != nil {
			st.Detail = fmt.Sprintf("%s does not run: %v %s", p, err, first)
		} else {
			st.OK, st.Detail = true, p+": "+first
		}
		if name == "tesseract" && st.OK {
			langs := engine.NewLimitedBuffer(64 << 10)
			engine.Stream(c, "", langs, langs, p, "--list-langs")
			if !strings.Contains(string(langs.Bytes()), "\neng") {
				st.OK, st.Detail = false, "tesseract has no English language data: install tesseract-ocr-eng"
			}
		}
		out = append(out, st)
	}
	prog("tesseract", e.Tesseract, "tesseract-ocr", "OCR", "--version")
	prog("pdftotext", e.Pdftotext, "poppler-utils", "FULLTEXT of PDFs", "-v")
	prog("pdftoppm", e.Pdftoppm, "poppler-utils", "OCR of PDFs", "-v")
	prog("pdfimages", "", "poppler-utils", "OCR of scanned PDFs", "-v")
	prog("qpdf", "", "qpdf", "OCR searchable PDFs", "--version")
	prog("gs", "", "ghostscript", "OCR searchable PDF/A", "--version")
	prog("img2pdf", "", "img2pdf", "OCR of multi-page TIFFs", "--version")
	prog("ocrmypdf", e.Ocrmypdf, "ocrmypdf", "OCR searchable PDF/A without an sRGB profile to embed", "--version")
	prog("soffice", e.Soffice, "libreoffice-writer-nogui", "FULLTEXT of Office files, PDFEXPORT", "--version")
	out = append(out, e.checkClamd(ctx), e.checkSMTP(ctx), e.checkLLM(ctx))
	return out
}

func (e Engines) checkClamd(ctx context.Context) EngineStatus {
	st := EngineStatus{Name: "clamd", Actions: "ANTIVIRUS, MALWARE_SCAN", Configured: true}
	st.OK, st.Detail = clamd.Check(ctx, e.Clamd)
	return st
}

func (e Engines) checkSMTP(ctx context.Context) EngineStatus {
	st := EngineStatus{Name: "smtp", Actions: "NOTIFICATION (sites can set their own server)"}
	if e.SMTP.Host == "" {
		st.Detail = "no default mail server (smtp.host); sites may configure their own"
		return st
	}
	st.Configured = true
	st.OK, st.Detail = mailer.Check(ctx, e.SMTP)
	return st
}

func (e Engines) checkLLM(ctx context.Context) EngineStatus {
	st := EngineStatus{Name: "llm", Actions: "LLM actions (sites can set their own endpoint)"}
	if e.LLM.URL == "" {
		st.Detail = "no default endpoint (llm.url); sites may configure their own"
		return st
	}
	st.Configured = true
	st.OK, st.Detail = llmchat.Check(ctx, e.LLM)
	return st
}
