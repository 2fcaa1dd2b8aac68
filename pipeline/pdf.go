package pipeline

import (
	"context"
	"io"
)

// The PDF work the server asks of the pipeline while it serves a request
// (not actions): it runs with the pipeline's scratch directory and
// configured programs.

// ExaminePDF reads the PDF in r and reports what it holds.
func (p *Pipeline) ExaminePDF(ctx context.Context, r io.Reader) (*PDFReport, error) {
	return examinePDF(ctx, p.cfg.TempDir, r)
}

// SignedCopy appends the signature page to the PDF in src (qpdf) and
// returns the result. A src qpdf cannot read is a pdfwork.GenerateError.
func (p *Pipeline) SignedCopy(ctx context.Context, src io.Reader, page SignaturePage) (*Generated, error) {
	return signedCopy(ctx, p.cfg.TempDir, src, page)
}

// Generate runs req and returns its output.
func (p *Pipeline) Generate(ctx context.Context, req GenerateRequest) (*Generated, error) {
	return generate(ctx, p.cfg.TempDir, p.cfg.Engines.Soffice, req)
}
