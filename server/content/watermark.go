package content

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"quire/auth"
	"quire/pipeline/engine"
	"quire/pipeline/pdfwork"
	"quire/server/internal/api"
)

// watermarkTimeout bounds the stamping of one download.
const watermarkTimeout = 5 * time.Minute

// WatermarkBypass reads the bypassWatermark query parameter: true only
// for a caller with GOVERN on the site (or an Admin).
func WatermarkBypass(r *api.Request) (bool, error) {
	switch v := strings.ToLower(r.Query("bypassWatermark")); v {
	case "", "false":
		return false, nil
	case "true":
	default:
		return false, api.Invalid("bypassWatermark", "invalid 'bypassWatermark': use true or false")
	}
	if err := r.Principal.Require(r.Site, auth.PermGovern); err != nil {
		return false, err
	}
	return true, nil
}

// ParseMarks turns stored watermark definitions into marks.
func ParseMarks(raw []json.RawMessage) ([]pdfwork.Mark, error) {
	marks := make([]pdfwork.Mark, 0, len(raw))
	for _, w := range raw {
		m, probs := pdfwork.ParseMark(w)
		if len(probs) > 0 {
			return nil, fmt.Errorf("stored watermark definition is invalid: %s", probs[0].Msg)
		}
		marks = append(marks, m)
	}
	return marks, nil
}

// DocMarks returns the marks doc's content is served with (none: as
// stored).
func (s *Handlers) DocMarks(site, doc string) ([]pdfwork.Mark, error) {
	raw, err := s.DB.DocumentWatermarks(site, doc)
	if err != nil || len(raw) == 0 {
		return nil, err
	}
	return ParseMarks(raw)
}

// RequireGovernIfMarked refuses a caller without GOVERN a use of document
// doc's stored content that hands out a copy nobody stamps (a signature
// envelope, a generated document): a watermarked document's stored bytes
// are its governors' (API.md "Watermarks").
func (s *Handlers) RequireGovernIfMarked(r *api.Request, doc string) error {
	if r.Principal.Can(r.Site, auth.PermGovern) {
		return nil
	}
	marks, err := s.DocMarks(r.Site, doc)
	if err != nil || len(marks) == 0 {
		return err
	}
	return api.ErrStatus(http.StatusUnauthorized, fmt.Sprintf("document %s carries a watermark: only GOVERN may use its content unstamped (signature envelopes, document generation)", doc))
}

// CheckStampable refuses, before a URL is handed out, content that is to
// be stamped and cannot be: it is never served unstamped instead.
func (s *Handlers) CheckStampable(site, doc, ctype string, bypass bool) error {
	if bypass {
		return nil
	}
	marks, err := s.DocMarks(site, doc)
	if err != nil || len(marks) == 0 {
		return err
	}
	if !pdfwork.CanWatermark(ctype) {
		return api.ErrStatus(http.StatusBadRequest, fmt.Sprintf("document %s carries a watermark and its content of type '%s' cannot be watermarked (PDF, PNG and JPEG can); 'bypassWatermark' (GOVERN) serves it as stored", doc, ctype))
	}
	return nil
}

// Stamp returns rd's content stamped with marks; rd is closed.
func Stamp(ctx context.Context, rd io.ReadCloser, ctype string, marks []pdfwork.Mark) (*pdfwork.Stamped, error) {
	defer rd.Close()
	ctx, cancel := context.WithTimeout(ctx, watermarkTimeout)
	defer cancel()
	st, err := pdfwork.Watermark(ctx, "", rd, ctype, marks)
	var we *pdfwork.WatermarkError
	if errors.As(err, &we) {
		return nil, api.ErrStatus(http.StatusBadRequest, "the document carries a watermark: "+we.Msg)
	}
	var mp *engine.MissingProgramError
	if errors.As(err, &mp) {
		return nil, api.ErrStatus(http.StatusServiceUnavailable, "the document carries a watermark and this server cannot stamp it: "+mp.Error())
	}
	return st, err
}
