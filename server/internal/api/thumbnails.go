package api

import (
	"time"

	"quire/storage"
)

// thumbnailURLDuration is how long a listing's thumbnailUrl is valid.
const thumbnailURLDuration = time.Hour

// WithThumbnail adds to m, a listing's entry of document d, Quire's
// thumbnailUrl (issue 47): a signed URL of d's first-page thumbnail, an
// artifact of category THUMBNAIL served through the signed downloads
// (stored-bytes headers), when the pipeline has made it (it does when
// the document gets new content: storage/thumbnails.go). A listing only
// names what exists; it never renders. It returns m.
func (s *Env) WithThumbnail(r *Request, m map[string]any, d *storage.Document) map[string]any {
	if d != nil && d.ThumbnailID != "" && d.ArtifactOf == "" {
		m["thumbnailUrl"] = s.SignDownloadURL(s.LinkBase(r.Ctx), r.Site, d.ThumbnailID, true, false, thumbnailURLDuration)
	}
	return m
}
