package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"quire/pipeline/convert"
	"quire/pipeline/engine"
	"quire/storage"
)

// runResize scales an image to width × height ("auto" keeps the aspect
// ratio) and stores the result as a new document, a RENDITION of this one.
func runResize(ctx context.Context, j *Job) (*Outcome, error) {
	rc, err := j.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	img, err := convert.Resize(ctx, rc, j.Param("width"), j.Param("height"), j.Param("outputType"))
	if errors.Is(err, convert.ErrNotResizable) {
		return &Outcome{Status: storage.ActionSkipped, Message: fmt.Sprintf("RESIZE reads PNG, JPEG, GIF and WebP images, not '%s'", j.Doc.ContentType)}, nil
	}
	if err != nil {
		return nil, err
	}
	w, h := img.Width, img.Height
	base := strings.TrimSuffix(path.Base(j.Doc.Path), path.Ext(j.Doc.Path))
	name := fmt.Sprintf("%s-%dx%d%s", base, w, h, img.Ext)
	return j.rendition(ctx, bytes.NewReader(img.Data), img.ContentType, j.renditionPath(name), map[string]string{"width": strconv.Itoa(w), "height": strconv.Itoa(h)})
}

// renditionPath places a rendition: under the action's path parameter
// (a folder when it ends with "/"), else next to the document.
func (j *Job) renditionPath(name string) string {
	if p := strings.TrimLeft(j.Param("path"), "/"); p != "" {
		if strings.HasSuffix(p, "/") {
			return p + name
		}
		return p
	}
	dir := path.Dir(j.Doc.Path)
	if dir == "." || j.Doc.Path == "" {
		return name
	}
	return dir + "/" + name
}

// rendition stores r as an artifact of this document (category
// RENDITION; SERVICE-SPEC.md §1: the pipeline's outputs are artifacts of
// their source). With the action's `path` parameter it is instead a new
// document at that path whose PRIMARY is this one (the inverse RENDITION
// relationship), as FormKiQ's RESIZE with a path makes.
func (j *Job) rendition(ctx context.Context, r io.Reader, ctype, p string, meta map[string]string) (*Outcome, error) {
	m, tail, err := storage.WriteContent(ctx, j.p.apply, r, 0, nil)
	if err != nil {
		return nil, fmt.Errorf("store rendition: %w", err)
	}
	id := uuid.NewString()
	d := storage.Document{DocumentID: id, ContentType: ctype, UserID: j.Action.UserID}
	if meta["width"] != "" {
		d.Width, d.Height = meta["width"], meta["height"]
	}
	md := map[string]string{}
	for k, v := range meta {
		md[k] = v
	}
	var c *storage.Command
	if j.Param("path") == "" {
		// An artifact's rendition is an artifact of its document too
		// (artifacts have no artifacts).
		parent := j.Doc.DocumentID
		if j.Doc.ArtifactOf != "" {
			parent = j.Doc.ArtifactOf
		}
		d.ArtifactCategory = "RENDITION"
		c, err = j.command(storage.OpAddArtifact, storage.AddArtifact{DocumentID: parent,
			Artifact: storage.NewDocument{Document: d, Content: &m, Chunks: tail}})
		md["artifactId"] = id
	} else {
		d.Path = p
		attrs := []storage.AttributeInput{{DocumentID: j.Doc.DocumentID, Relationship: "PRIMARY", InverseRelationship: "RENDITION"}}
		// A document made from a watermarked one carries its watermarks:
		// it is served stamped as the source is (API.md "Watermarks").
		keys, kerr := j.p.db.DocumentWatermarkKeys(j.Site, j.Doc.DocumentID)
		if kerr != nil {
			return nil, engine.Retryable(kerr)
		}
		for _, k := range keys {
			attrs = append(attrs, storage.AttributeInput{Key: k})
		}
		nd := storage.NewDocument{Document: d, Content: &m, Chunks: tail, Attributes: attrs}
		c, err = j.command(storage.OpAddDocuments, storage.AddDocuments{Docs: []storage.NewDocument{nd}})
		md["documentId"], md["path"] = id, p
	}
	if err != nil {
		return nil, err
	}
	return &Outcome{Then: []*storage.Command{c}, Metadata: md}, nil
}

// runPDFExport converts an Office document to PDF with LibreOffice
// (headless) and stores the PDF as a RENDITION artifact of this document
// (with the `path` parameter: a new document, see rendition).
func runPDFExport(ctx context.Context, j *Job) (*Outcome, error) {
	prog, err := engine.Find(j.p.cfg.Engines.Soffice, "soffice", "libreoffice-writer-nogui")
	if err != nil {
		return nil, err
	}
	dir, err := j.TempDir()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ext := path.Ext(j.Doc.Path)
	if ext == "" {
		ext = convert.ExtFor(j.Doc.ContentType)
	}
	in, err := j.ContentFile(dir, "document"+ext)
	if err != nil {
		return nil, err
	}
	if err := convert.OfficeToPDF(ctx, prog, dir, in); err != nil {
		return nil, err
	}
	f, err := os.Open(filepath.Join(dir, "document.pdf"))
	if err != nil {
		return nil, fmt.Errorf("LibreOffice did not convert '%s' (%s) to PDF", path.Base(j.Doc.Path), j.Doc.ContentType)
	}
	defer f.Close()
	base := strings.TrimSuffix(path.Base(j.Doc.Path), path.Ext(j.Doc.Path))
	if base == "" || base == "." {
		base = j.Doc.DocumentID
	}
	return j.rendition(ctx, f, "application/pdf", j.renditionPath(base+".pdf"), nil)
}
