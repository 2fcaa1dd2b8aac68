package pipeline

import (
	"context"
	"io"

	"quire/pipeline/pdfwork"
)

// The PDF work the server asks of the pipeline while it serves a request
// (not actions): it runs with the pipeline's scratch directory and
// configured programs.

// ExaminePDF reads the PDF in r and reports what it holds.
func (p *Pipeline) ExaminePDF(ctx context.Context, r io.Reader) (*pdfwork.PDFReport, error) {
	return pdfwork.ExaminePDF(ctx, p.cfg.TempDir, r)
}

// SignedCopy appends the signature page to the PDF in src (qpdf) and
// returns the result. A src qpdf cannot read is a pdfwork.GenerateError.
func (p *Pipeline) SignedCopy(ctx context.Context, src io.Reader, page pdfwork.SignaturePage) (*pdfwork.Generated, error) {
	return pdfwork.SignedCopy(ctx, p.cfg.TempDir, src, page)
}

// Generate runs req and returns its output.
func (p *Pipeline) Generate(ctx context.Context, req pdfwork.GenerateRequest) (*pdfwork.Generated, error) {
	return pdfwork.Generate(ctx, p.cfg.TempDir, p.cfg.Engines.Soffice, req)
}
