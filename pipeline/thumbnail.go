package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // decoders for image.Decode
	_ "image/jpeg"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/image/draw"
	_ "golang.org/x/image/tiff"

	"quire/guard"
	"quire/storage"
)

// First-page thumbnails (issue 47). A document's thumbnail is an artifact
// of artifactCategory THUMBNAIL: a PNG of at most ThumbnailSize pixels a
// side of the first page (a PDF, through pdftoppm), of the image (PNG,
// JPEG, GIF, TIFF, decoded here), or of an office file's PDF rendition
// (an artifact of category RENDITION, which CONVERT makes). It is made
// once per content (metadata thumbnailOf names the content's SHA-256),
// in the background where the pipeline runs, the first time a listing
// asks for it (Thumbnail), and kept through storage commands like every
// artifact; a listing names it (thumbnailUrl) from then on.

// ThumbnailCategory is the artifactCategory of a thumbnail.
const ThumbnailCategory = "THUMBNAIL"

// ThumbnailSize bounds a thumbnail's width and height, in pixels.
const ThumbnailSize = 256

const (
	// thumbnailOf is the metadata key naming the content a thumbnail shows.
	thumbnailOf = "thumbnailOf"
	// thumbnailMaxBytes: larger content gets no thumbnail (it would be
	// copied to the scratch dir first).
	thumbnailMaxBytes = 256 << 20
	// thumbnailMaxPixels bounds an image decoded whole.
	thumbnailMaxPixels = 50_000_000
	// thumbnailMaxPending bounds the thumbnails asked for and not yet made.
	thumbnailMaxPending = 256
	// thumbnailTimeout bounds one thumbnail's work.
	thumbnailTimeout = time.Minute
)

// thumbnails is the pipeline's state of thumbnails being made.
type thumbnails struct {
	mu      sync.Mutex
	pending map[storage.DocRef]bool
	slots   chan struct{} // thumbnails made at once
}

// thumbnailable reports whether a thumbnail can be made of content type
// ct itself.
func thumbnailable(ct string) bool {
	switch ct {
	case "application/pdf", "image/png", "image/jpeg", "image/gif", "image/tiff":
		return true
	}
	return false
}

// Thumbnail returns the record id of the thumbnail artifact of d's
// current content, or "" when there is none yet; then, where the pipeline
// runs, one is made in the background (once: asking again meanwhile adds
// nothing). A document of a kind with no thumbnail gets none.
func (p *Pipeline) Thumbnail(site string, d *storage.Document) string {
	if d == nil || !d.HasContent || d.ArtifactOf != "" || d.ContentLength > thumbnailMaxBytes {
		return ""
	}
	src, _ := p.thumbnailSource(site, d)
	if src == nil {
		return ""
	}
	if id := p.findThumbnail(site, d); id != "" {
		return id
	}
	p.askThumbnail(storage.DocRef{Site: site, ID: d.DocumentID})
	return ""
}

// thumbnailSource is what a thumbnail of d shows: d itself, or its PDF
// rendition (nil: nothing to show).
func (p *Pipeline) thumbnailSource(site string, d *storage.Document) (*storage.Document, error) {
	if thumbnailable(d.ContentType) {
		return d, nil
	}
	page, err := p.db.ListArtifacts(site, d.DocumentID, "RENDITION", "", 10)
	if err != nil {
		return nil, err
	}
	for _, a := range page.Artifacts {
		if a.ContentType == "application/pdf" && a.HasContent {
			return a, nil
		}
	}
	return nil, nil
}

// findThumbnail returns the id of d's thumbnail of its current content.
func (p *Pipeline) findThumbnail(site string, d *storage.Document) string {
	page, err := p.db.ListArtifacts(site, d.DocumentID, ThumbnailCategory, "", 20)
	if err != nil {
		return ""
	}
	for i := len(page.Artifacts) - 1; i >= 0; i-- {
		a := page.Artifacts[i]
		for _, m := range a.Metadata {
			if m.Key == thumbnailOf && m.Value == d.ContentSHA256 && a.HasContent {
				return a.DocumentID
			}
		}
	}
	return ""
}

// askThumbnail makes ref's thumbnail in the background, unless it is
// being made, too many are waiting, or the pipeline does not run here.
func (p *Pipeline) askThumbnail(ref storage.DocRef) {
	t := &p.thumbs
	t.mu.Lock()
	if t.pending == nil {
		t.pending, t.slots = map[storage.DocRef]bool{}, make(chan struct{}, 1)
	}
	if t.pending[ref] || len(t.pending) >= thumbnailMaxPending {
		t.mu.Unlock()
		return
	}
	// Only while the pipeline runs: Stop closes stopping under mu and
	// then waits for bg, so nothing is added to bg after it.
	p.mu.Lock()
	running := p.started
	if running {
		select {
		case <-p.stopping:
			running = false
		default:
		}
	}
	if !running {
		p.mu.Unlock()
		t.mu.Unlock()
		return
	}
	ctx := p.ctx
	p.bg.Add(1)
	p.mu.Unlock()
	t.pending[ref] = true
	t.mu.Unlock()
	go func() {
		defer p.bg.Done()
		defer func() { t.mu.Lock(); delete(t.pending, ref); t.mu.Unlock() }()
		select {
		case t.slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
		defer func() { <-t.slots }()
		guard.Do(p.log, guard.Pipeline, func() {
			if err := p.makeThumbnail(ctx, ref); err != nil && ctx.Err() == nil {
				p.log.Warn("thumbnail not made", "site", ref.Site, "document", ref.ID, "err", err)
			}
		})
	}()
}

// makeThumbnail renders ref's thumbnail and keeps it as an artifact
// (OpAddArtifact), unless the document has one of its content already.
func (p *Pipeline) makeThumbnail(ctx context.Context, ref storage.DocRef) error {
	ctx, cancel := context.WithTimeout(ctx, thumbnailTimeout)
	defer cancel()
	d, err := p.db.GetDocument(ref.Site, ref.ID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if p.findThumbnail(ref.Site, d) != "" {
		return nil
	}
	src, err := p.thumbnailSource(ref.Site, d)
	if err != nil || src == nil {
		return err
	}
	dir, err := os.MkdirTemp(p.cfg.TempDir, "thumbnail-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	img, err := p.renderThumbnail(ctx, ref.Site, src, dir)
	if err != nil {
		return err
	}
	m, tail, err := storage.WriteContent(ctx, p.apply, bytes.NewReader(img), 0, nil)
	if err != nil {
		return fmt.Errorf("store thumbnail: %w", err)
	}
	art := storage.Document{DocumentID: uuid.NewString(), ContentType: "image/png", UserID: d.UserID, ArtifactCategory: ThumbnailCategory,
		Metadata: []storage.Metadata{{Key: thumbnailOf, Value: d.ContentSHA256}}}
	cmd, err := storage.NewCommand(storage.OpAddArtifact, ref.Site, d.UserID, p.cfg.Now().UTC(),
		storage.AddArtifact{DocumentID: d.DocumentID, Artifact: storage.NewDocument{Document: art, Content: &m, Chunks: tail}})
	if err != nil {
		return err
	}
	_, err = p.apply.Apply(ctx, cmd)
	return err
}

// renderThumbnail returns the PNG thumbnail of src's content.
func (p *Pipeline) renderThumbnail(ctx context.Context, site string, src *storage.Document, dir string) ([]byte, error) {
	rd, _, err := p.db.OpenContent(site, src.DocumentID)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	if src.ContentType != "application/pdf" {
		return scaleImage(io.LimitReader(rd, thumbnailMaxBytes))
	}
	in := filepath.Join(dir, "in.pdf")
	f, err := os.Create(in)
	if err != nil {
		return nil, err
	}
	_, err = io.Copy(f, io.LimitReader(rd, thumbnailMaxBytes))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	prog, err := program(p.cfg.Engines.Pdftoppm, "pdftoppm", "poppler-utils")
	if err != nil {
		return nil, err
	}
	if _, err := runProgram(ctx, dir, prog, "-f", "1", "-l", "1", "-png", "-scale-to", fmt.Sprint(ThumbnailSize), "-singlefile", in, filepath.Join(dir, "page")); err != nil {
		return nil, err
	}
	out, err := os.Open(filepath.Join(dir, "page.png"))
	if err != nil {
		return nil, err
	}
	defer out.Close()
	return scaleImage(io.LimitReader(out, 16<<20))
}

// scaleImage decodes an image (its pixels bounded before it is decoded)
// and encodes it as a PNG that fits ThumbnailSize×ThumbnailSize, keeping
// its proportions.
func scaleImage(r io.Reader) ([]byte, error) {
	var head bytes.Buffer
	cfg, _, err := image.DecodeConfig(io.TeeReader(r, &head))
	if err != nil {
		return nil, fmt.Errorf("read image: %w", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > thumbnailMaxPixels {
		return nil, fmt.Errorf("image of %d×%d pixels: too large for a thumbnail", cfg.Width, cfg.Height)
	}
	src, _, err := image.Decode(io.MultiReader(&head, r))
	if err != nil {
		return nil, fmt.Errorf("decode image: %w", err)
	}
	w, h := cfg.Width, cfg.Height
	if w > ThumbnailSize || h > ThumbnailSize {
		if w >= h {
			w, h = ThumbnailSize, max(1, h*ThumbnailSize/w)
		} else {
			w, h = max(1, w*ThumbnailSize/h), ThumbnailSize
		}
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Over, nil)
	var out bytes.Buffer
	if err := png.Encode(&out, dst); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
