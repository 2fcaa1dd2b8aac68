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
// (stored-bytes headers), when it has been made; asking makes it once,
// in the background. It returns m.
func (s *Env) WithThumbnail(r *Request, m map[string]any, d *storage.Document) map[string]any {
	if s.Deps.Pipeline == nil || d == nil {
		return m
	}
	if id := s.Deps.Pipeline.Thumbnail(r.Site, d); id != "" {
		m["thumbnailUrl"] = s.SignDownloadURL(s.LinkBase(r.Ctx), r.Site, id, true, false, thumbnailURLDuration)
	}
	return m
}
