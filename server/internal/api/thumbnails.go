package api

import (
	"time"

	"quire/storage"
)

// A listing's thumbnailUrl is valid for at least thumbnailURLDuration:
// until the end of the thumbnailURLWindow in which that ends, so the
// listings of one window name the same URL, which a browser keeps
// (a thumbnail's content never changes: new content gets a new
// thumbnail, another artifact; GET /downloads lets it be cached until
// the URL expires).
const (
	thumbnailURLDuration = time.Hour
	thumbnailURLWindow   = 30 * time.Minute
)

// thumbnailURLExpiry is when a thumbnailUrl minted at now expires.
func thumbnailURLExpiry(now time.Time) time.Time {
	return now.Add(thumbnailURLDuration).Truncate(thumbnailURLWindow).Add(thumbnailURLWindow)
}

// WithThumbnail adds to m, a listing's entry of document d, Quire's
// thumbnailUrl (issue 47): a signed URL of d's first-page thumbnail, an
// artifact of category THUMBNAIL served through the signed downloads
// (stored-bytes headers), when the pipeline has made it (it does when
// the document gets new content: storage/thumbnails.go). A listing only
// names what exists; it never renders. It returns m.
func (s *Env) WithThumbnail(r *Request, m map[string]any, d *storage.Document) map[string]any {
	if d != nil && d.ThumbnailID != "" && d.ArtifactOf == "" {
		m["thumbnailUrl"] = s.signDownloadURLUntil(s.LinkBase(r.Ctx), r.Site, d.ThumbnailID, true, false, thumbnailURLExpiry(s.Now()))
	}
	return m
}
