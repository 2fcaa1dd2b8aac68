package pipeline

import (
	"quire/pipeline/engine"
	"quire/pipeline/ocr"
)

// IsRetryable tells the external tests whether an error is retried.
var IsRetryable = engine.IsRetryable

// HoldBackground keeps the pipeline's background work (the OCR PDF/A)
// from starting until release is called.
func HoldBackground(p *Pipeline) (release func()) {
	for range cap(p.bgSlots) {
		p.bgSlots <- struct{}{}
	}
	return func() {
		for range cap(p.bgSlots) {
			<-p.bgSlots
		}
	}
}

// Successor is a new pipeline on p's store with p's configuration, as a
// restarted process (or a new cluster leader) builds it; not started.
func Successor(p *Pipeline) *Pipeline { return New(p.db, p.apply, p.cfg) }

// NoSRGBProfile makes the PDF/A rendition find no sRGB profile, so that
// ocrmypdf makes it (the fallback), until the test ends.
func NoSRGBProfile(t interface{ Cleanup(func()) }) {
	old := ocr.SRGBProfiles
	ocr.SRGBProfiles = nil
	t.Cleanup(func() { ocr.SRGBProfiles = old })
}
