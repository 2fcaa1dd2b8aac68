// Package ocr holds the benchmark's OCR rows (-ocr-only): scanned pages
// generated in the run (scan.go) read by the pipeline's OCR action beside
// tesseract and ocrmypdf run directly, and the time from the upload of a
// scan until a word on its last page finds it.
package ocr

import (
	"context"

	"quire/bench/internal/harness"
)

// session is the run the rows of this package add to.
type session struct{ *harness.Session }

// Run runs the OCR rows on a server of their own.
func Run(ctx context.Context, s *harness.Session) error {
	return (&session{s}).ocrBench(ctx)
}
