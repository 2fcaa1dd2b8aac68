package documents

import (
	"archive/zip"
	"bufio"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/klauspost/compress/flate"

	"quire/auth"
	"quire/guard"
	"quire/server/content"
	"quire/server/internal/api"
	"quire/storage"
)

// POST /documents/compress (FormKiQ's DocumentsCompress; API.md
// "Compress"): the archive's files are fixed and their content held when
// the request is made, and the ZIP is written while it is downloaded, so
// it is never held whole in memory or on disk and is ready at once.

// HandleCompressDocuments serves POST /documents/compress {documentIds} or
// {documents:[{documentId, artifactId}]} → 201 {downloadUrl}.
func (s *Handlers) HandleCompressDocuments(r *api.Request) error {
	var in struct {
		DocumentIDs []string `json:"documentIds"`
		Documents   []struct {
			DocumentID string `json:"documentId"`
			ArtifactID string `json:"artifactId"`
		} `json:"documents"`
	}
	if err := r.ReadBody(&in, s.Deps.MaxBodyBytes); err != nil {
		return err
	}
	var items []storage.ArchiveItem
	for _, id := range in.DocumentIDs {
		items = append(items, storage.ArchiveItem{DocumentID: id})
	}
	for _, d := range in.Documents {
		if d.DocumentID == "" {
			return api.Invalid("documents.documentId", "'documentId' is required")
		}
		items = append(items, storage.ArchiveItem{DocumentID: d.DocumentID, ArtifactID: d.ArtifactID})
	}
	if len(items) == 0 {
		return api.Invalid("documentIds", "'documentIds' or 'documents' is required")
	}
	if len(items) > storage.MaxArchiveDocuments {
		return api.Invalid("documentIds", fmt.Sprintf("an archive holds at most %d documents", storage.MaxArchiveDocuments))
	}
	bypass, err := content.WatermarkBypass(r)
	if err != nil {
		return err
	}
	// Folder permissions: every document must be readable by the caller.
	for _, it := range items {
		d, err := s.DB.GetDocument(r.Site, it.DocumentID)
		if err != nil {
			return err
		}
		if err := s.RequireDocPath(r, d.Path, storage.FolderRead); err != nil {
			return err
		}
		// A watermarked document whose content cannot be stamped is
		// refused now, not cut from the ZIP later (its artifacts are
		// checked when the archive is written).
		if d.HasContent && it.ArtifactID == "" {
			if err := s.Content.CheckStampable(r.Site, d.DocumentID, d.ContentType, bypass); err != nil {
				return err
			}
		}
	}
	dur, err := api.UrlDuration(r)
	if err != nil {
		return err
	}
	id := r.NewID()
	expires := r.Now.Add(dur)
	if _, err := s.Apply(r, storage.OpAddArchive, storage.AddArchive{ID: id, Items: items, Expires: expires, BypassWatermark: bypass}); err != nil {
		return err
	}
	exp := strconv.FormatInt(expires.Unix(), 10)
	sig := auth.SignURL(s.Deps.Auth.URLKey(), http.MethodGet, "archive", r.Site, id, exp)
	q := url.Values{"expires": {exp}, "signature": {sig}}
	u := fmt.Sprintf("%s/archives/%s/%s?%s", s.LinkBase(r.Ctx), url.PathEscape(r.Site), id, q.Encode())
	return r.Status(http.StatusCreated).JSON(map[string]any{"downloadUrl": u})
}

// storedTypes are content types already compressed: stored, not deflated
// again.
var storedTypes = []string{"application/pdf", "application/zip", "image/", "video/", "audio/",
	"application/vnd.openxmlformats", "application/gzip", "application/x-7z", "application/x-rar"}

func alreadyCompressed(ct string) bool {
	t, _, _ := mime.ParseMediaType(ct)
	for _, p := range storedTypes {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// HandleGetArchive serves GET /archives/{siteId}/{archiveId}: the ZIP,
// streamed (ZIP64 beyond 4 GiB), with the signature as the credential.
func (s *Handlers) HandleGetArchive(c *fiber.Ctx) error {
	site, id := api.SiteParam(c), strings.Clone(c.Params("archiveId"))
	exp := strings.Clone(c.Query("expires"))
	if !s.Deps.Auth.VerifyURL(c.Query("signature"), http.MethodGet, "archive", site, id, exp) {
		return api.ErrStatus(http.StatusForbidden, "invalid signature")
	}
	if err := api.CheckURLExpiry(s.Now(), exp); err != nil {
		return err
	}
	a, err := s.DB.GetArchive(site, id, s.Now())
	if err != nil {
		return err
	}
	api.ServeStored(c, api.StoredFile{ContentType: "application/zip", Name: "documents.zip"})
	if c.Method() == http.MethodHead {
		return nil // no stream after a HEAD answer
	}
	conn := c.Context().Conn()
	if !s.Backups.Begin(conn) {
		return api.ErrStatus(http.StatusServiceUnavailable, api.ErrShuttingDown.Error())
	}
	rid := api.RequestID(c)
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		defer s.Backups.Done(conn)
		err := guard.Run(s.Log, guard.HTTP, func() error {
			if err := s.writeArchive(api.StopWriter{W: w, Stop: s.Backups.Stop}, a); err != nil {
				return err
			}
			return w.Flush()
		}, "requestId", rid)
		if err != nil {
			s.Log.Warn("archive download cut short", "requestId", rid, "archive", id, "err", err)
		}
	})
	return nil
}

// writeArchive writes a's files as a ZIP to w, one stored content at a time.
func (s *Handlers) writeArchive(w io.Writer, a *storage.Archive) error {
	zw := zip.NewWriter(w)
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestSpeed)
	})
	for _, e := range a.Entries {
		// Names are made safe when the archive is made; again here for
		// archives made before that.
		h := &zip.FileHeader{Name: storage.ArchiveEntryName(e.Name, "document"), Method: zip.Deflate, Modified: e.Modified.UTC()}
		if alreadyCompressed(e.ContentType) {
			h.Method = zip.Store
		}
		h.SetMode(0o644)
		fw, err := zw.CreateHeader(h)
		if err != nil {
			return err
		}
		rd, err := s.DB.OpenManifest(e.ContentSHA)
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name, err)
		}
		var src io.ReadCloser = rd
		if len(e.Watermarks) > 0 {
			// Stamped as the archive was asked for; an entry that cannot
			// be stamped ends the archive (never written unstamped).
			marks, err := content.ParseMarks(e.Watermarks)
			if err != nil {
				rd.Close()
				return fmt.Errorf("%s: %w", e.Name, err)
			}
			st, err := content.Stamp(context.Background(), rd, e.ContentType, marks)
			if err != nil {
				return fmt.Errorf("%s: %w", e.Name, err)
			}
			src = st
		}
		_, err = io.Copy(fw, src)
		src.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", e.Name, err)
		}
	}
	return zw.Close()
}

// SweepArchives removes archives past their time (leader only).
func (s *Handlers) SweepArchives() {
	s.Content.SweepExpired("archive", s.DB.ExpiredArchives, storage.OpDeleteArchive, func(id string) any {
		return storage.DeleteArchive{ID: id, Expired: true}
	})
}
