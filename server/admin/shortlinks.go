package admin

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"quire/server/documents"
	"quire/server/internal/api"
	"quire/storage"
)

// Short links (SERVICE-SPEC.md §4.5; API.md "Short links").

// shortlinkClickValid is how long the download URL a document link
// redirects to stays valid: long enough to start the download.
const shortlinkClickValid = 5 * time.Minute

// HandleAddShortlink serves POST /shortlinks {targetUrl, slug}.
func (s *Handlers) HandleAddShortlink(r *api.Request) error {
	var in struct {
		TargetURL *string `json:"targetUrl"`
		Slug      *string `json:"slug"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	var errs []storage.ValidationItem
	if in.TargetURL == nil || strings.TrimSpace(*in.TargetURL) == "" {
		errs = append(errs, storage.ValidationItem{Key: "targetUrl", Msg: "'targetUrl' is required"})
	}
	if in.Slug == nil || *in.Slug == "" {
		errs = append(errs, storage.ValidationItem{Key: "slug", Msg: "'slug' is required"})
	} else if !storage.ValidSlug(*in.Slug) {
		errs = append(errs, storage.ValidationItem{Key: "slug", Msg: "invalid 'slug': 1 to 64 letters, digits, '-' or '_'"})
	}
	if err := api.CheckErrors(errs); err != nil {
		return err
	}
	link := storage.Shortlink{Slug: *in.Slug}
	target := strings.TrimSpace(*in.TargetURL)
	if doc, ok := s.documentTarget(s.LinkBase(r.Ctx), target); ok {
		d, err := s.DB.GetDocument(r.Site, doc)
		if err != nil {
			return err
		}
		if err := s.RequireDocPath(r, d.Path, storage.FolderRead); err != nil {
			return err
		}
		link.DocumentID = doc
	} else if len(target) > storage.MaxURLBytes || !documents.ValidDeepLink(target) {
		return api.Invalid("targetUrl", "invalid 'targetUrl': an http or https URL, or /documents/<documentId>")
	} else {
		link.TargetURL = target
	}
	if _, err := s.Apply(r, storage.OpAddShortlink, storage.AddShortlink{Link: link}); err != nil {
		return err
	}
	return r.Status(http.StatusCreated).JSON(map[string]any{"url": s.Content.ShortURL(s.LinkBase(r.Ctx), link.Slug)})
}

// documentTarget recognises a target naming a document of this server:
// /documents/<id>, or the same under the server's public URL.
func (s *Handlers) documentTarget(reqBase, target string) (string, bool) {
	p := target
	for _, base := range []string{s.Deps.PublicURL, reqBase} {
		if base = strings.TrimSuffix(base, "/"); base != "" && strings.HasPrefix(p, base+"/") {
			p = strings.TrimPrefix(p, base)
			break
		}
	}
	rest, ok := strings.CutPrefix(p, "/documents/")
	if !ok {
		return "", false
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	rest = strings.TrimSuffix(rest, "/")
	return rest, api.IsUUIDv4(rest)
}

// HandleDeleteShortlink serves DELETE /shortlinks/{slug} (Quire's): the
// link stops working at once. A link to a document needs the right that
// made it, READ on the document's folder (API.md "Short links"): a writer
// of the site cannot break the links of a folder closed to them.
func (s *Handlers) HandleDeleteShortlink(r *api.Request) error {
	slug := api.PathParam(r, "slug")
	l, err := s.DB.GetShortlink(r.Site, slug)
	if err != nil {
		return err
	}
	if l.DocumentID != "" {
		if err := s.RequireDocOf(r, l.DocumentID, storage.FolderRead); err != nil {
			return err
		}
	}
	if _, err := s.Apply(r, storage.OpDeleteShortlink, storage.DeleteShortlink{Slug: slug, Checked: true, DocumentID: l.DocumentID}); err != nil {
		return err
	}
	return r.JSON(api.MessageBody{Message: fmt.Sprintf("Shortlink '%s' deleted", slug)})
}

// HandleResolveShortlink serves GET /s/{slug}: no token; a temporary
// redirect to the target, for a document a download URL made now.
func (s *Handlers) HandleResolveShortlink(c *fiber.Ctx) error {
	slug := strings.Clone(c.Params("slug"))
	l, err := s.DB.ResolveShortlink(slug, s.Now())
	if err != nil {
		return err
	}
	target := l.TargetURL
	if l.DocumentID != "" {
		target = s.SignDownloadURL(s.LinkBase(c), l.Site, l.DocumentID, false, false, shortlinkClickValid)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderLocation, target)
	return c.SendStatus(http.StatusFound)
}
