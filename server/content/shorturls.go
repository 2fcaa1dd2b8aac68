package content

import (
	"crypto/rand"
	"strings"
	"time"

	"quire/server/internal/api"
	"quire/storage"
)

// ShortURL is the public address of a slug.
func (s *Handlers) ShortURL(base, slug string) string {
	return strings.TrimSuffix(base, "/") + "/s/" + slug
}

// shortDocumentURL makes a short link to a document for GET
// /documents/{id}/url?format=short: random slug, valid as long as the URL
// would have been.
func (s *Handlers) shortDocumentURL(r *api.Request, doc, deepLink string, valid time.Duration) (string, error) {
	if valid <= 0 {
		valid = api.DefaultURLDuration
	}
	exp := r.Now.Add(valid)
	link := storage.Shortlink{Slug: randomSlug(), ExpiresAt: &exp}
	if deepLink != "" {
		link.TargetURL = deepLink
	} else {
		link.DocumentID = doc
	}
	if _, err := s.Apply(r, storage.OpAddShortlink, storage.AddShortlink{Link: link}); err != nil {
		return "", err
	}
	return s.ShortURL(s.LinkBase(r.Ctx), link.Slug), nil
}

// randomSlug is 16 random letters and digits (about 95 bits).
func randomSlug() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 16)
	rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
