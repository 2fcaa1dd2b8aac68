package content

import (
	"fmt"
	"strings"

	"quire/server/internal/api"
	"quire/storage"
)

// maxInlineResponse is the largest text content GET /content returns in
// the JSON body; larger content gets a contentUrl.
const maxInlineResponse = 6 * 1000 * 1000

// HandleGetDocumentContent serves GET /documents/{documentId}/content.
func (s *Handlers) HandleGetDocumentContent(r *api.Request) error {
	if v, err := s.requestedVersion(r); v != nil || err != nil {
		if err != nil {
			return err
		}
		return s.versionContent(r, v) // versions.go
	}
	d, err := s.servedDocument(r)
	if err != nil {
		return err
	}
	id := d.DocumentID
	if d.DeepLinkPath != "" && !d.HasContent {
		return r.JSON(map[string]any{"contentUrl": d.DeepLinkPath, "contentType": d.ContentType})
	}
	if !d.HasContent {
		return &storage.NotFoundError{Msg: fmt.Sprintf("Document %s not found.", id)}
	}
	bypass, err := WatermarkBypass(r)
	if err != nil {
		return err
	}
	if err := s.CheckStampable(r.Site, id, d.ContentType, bypass); err != nil {
		return err
	}
	if isTextType(d.ContentType) && d.ContentLength < maxInlineResponse {
		rd, _, err := s.DB.OpenContent(r.Site, id)
		if err != nil {
			return err
		}
		defer rd.Close()
		b, err := storage.ReadAllSmall(rd, maxInlineResponse)
		if err != nil {
			return err
		}
		return r.JSON(map[string]any{"content": string(b), "contentType": d.ContentType, "isBase64": false})
	}
	return r.JSON(map[string]any{"contentUrl": s.SignDownloadURL(s.LinkBase(r.Ctx), r.Site, id, false, bypass, 0), "contentType": d.ContentType})
}

func isTextType(t string) bool {
	t = strings.ToLower(strings.TrimSpace(strings.SplitN(t, ";", 2)[0]))
	return strings.HasPrefix(t, "text/") || t == "application/json" || t == "application/xml" ||
		strings.HasSuffix(t, "+json") || strings.HasSuffix(t, "+xml") || t == "application/x-yaml"
}
