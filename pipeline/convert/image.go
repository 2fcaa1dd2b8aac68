// Package convert reads and converts content for the pipeline's engines,
// without the store: the text of PDFs (pdftotext) and Office files (their
// XML, read in Go), image sizes checked from their headers before anything
// decodes them, images scaled for RESIZE and for thumbnails, and Office
// files made PDF by LibreOffice. What a result becomes (a text record, a
// rendition, a thumbnail artifact) the pipeline decides.
package convert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	_ "golang.org/x/image/bmp" // read BMP headers (OCR)
	"golang.org/x/image/draw"
	_ "golang.org/x/image/tiff" // read TIFF headers (OCR), decode TIFF thumbnails
	_ "golang.org/x/image/webp" // decode WebP sources

	"quire/pipeline/engine"
)

// MaxResizePixels bounds the images RESIZE decodes and the images it makes
// (a bitmap is held in memory whole: 50 MP is 200 MB).
const MaxResizePixels = 50_000_000

// MaxResizeSide bounds each side of a RESIZE result.
const MaxResizeSide = 20000

// CheckImageSize refuses an image whose header declares more than max
// pixels, before anything decodes it: a small file can declare a huge
// image (a decompression bomb).
func CheckImageSize(cfg image.Config, max int) error {
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return fmt.Errorf("image of %dx%d pixels has no pixels", cfg.Width, cfg.Height)
	}
	if int64(cfg.Width)*int64(cfg.Height) > int64(max) {
		return fmt.Errorf("image of %dx%d pixels is too large (at most %d megapixels)", cfg.Width, cfg.Height, max/1_000_000)
	}
	return nil
}

// CheckImageFile checks the size an image file declares, when Go reads
// its format's header (PNG, JPEG, GIF, WebP, TIFF, BMP); other formats
// are left to the engine.
func CheckImageFile(fn string, max int) error {
	f, err := os.Open(fn)
	if err != nil {
		return err
	}
	defer f.Close()
	cfg, _, err := image.DecodeConfig(f)
	if err != nil {
		return nil
	}
	return CheckImageSize(cfg, max)
}

// ErrNotResizable is content Resize does not read: not a PNG, JPEG, GIF
// or WebP image.
var ErrNotResizable = errors.New("unsupported format")

// Resized is an image Resize made.
type Resized struct {
	Data             []byte
	ContentType, Ext string
	Width, Height    int
}

// Resize scales the image in rc to width × height ("auto" keeps the
// aspect ratio; RESIZE's parameters as given) and encodes it as
// outputType ("": the source's format; webp is written as PNG).
func Resize(ctx context.Context, rc io.Reader, width, height, outputType string) (*Resized, error) {
	head := make([]byte, 64<<10)
	n, _ := io.ReadFull(rc, head)
	head = head[:n]
	cfg, format, err := image.DecodeConfig(bytes.NewReader(head))
	if format != "png" && format != "jpeg" && format != "gif" && format != "webp" {
		err = errors.New("unsupported format")
	}
	if err != nil {
		return nil, ErrNotResizable
	}
	if err := CheckImageSize(cfg, MaxResizePixels); err != nil {
		return nil, fmt.Errorf("cannot resize: %w", err)
	}
	src, _, err := image.Decode(io.MultiReader(bytes.NewReader(head), engine.ContextReader(ctx, rc)))
	if err != nil {
		return nil, fmt.Errorf("decode %s image: %v", format, err)
	}
	w, h, err := TargetSize(width, height, cfg.Width, cfg.Height)
	if err != nil {
		return nil, err
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, src.Bounds(), draw.Over, nil)
	out := strings.TrimPrefix(strings.ToLower(outputType), ".")
	if out == "" {
		out = format
	}
	var buf bytes.Buffer
	ctype, ext := "", ""
	switch out {
	case "png", "webp":
		err, ctype, ext = png.Encode(&buf, dst), "image/png", ".png"
	case "jpeg", "jpg":
		err, ctype, ext = jpeg.Encode(&buf, dst, &jpeg.Options{Quality: 90}), "image/jpeg", ".jpg"
	case "gif":
		err, ctype, ext = gif.Encode(&buf, dst, nil), "image/gif", ".gif"
	default:
		return nil, fmt.Errorf("invalid outputType '%s'", out)
	}
	if err != nil {
		return nil, err
	}
	return &Resized{Data: buf.Bytes(), ContentType: ctype, Ext: ext, Width: w, Height: h}, nil
}

// TargetSize resolves width and height parameters against the source.
func TargetSize(ws, hs string, sw, sh int) (int, int, error) {
	parse := func(s string) (int, error) {
		s = strings.Trim(s, `"`)
		if s == "auto" {
			return 0, nil
		}
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 || n > MaxResizeSide {
			return 0, fmt.Errorf("invalid size '%s' (at most %d pixels)", s, MaxResizeSide)
		}
		return n, nil
	}
	w, err := parse(ws)
	if err != nil {
		return 0, 0, err
	}
	h, err := parse(hs)
	if err != nil {
		return 0, 0, err
	}
	switch {
	case w == 0 && h == 0:
		return 0, 0, errors.New("'width' and 'height' cannot both be 'auto'")
	case w == 0:
		w = int(max(1, min(int64(sw)*int64(h)/int64(sh), MaxResizeSide+1)))
	case h == 0:
		h = int(max(1, min(int64(sh)*int64(w)/int64(sw), MaxResizeSide+1)))
	}
	if w > MaxResizeSide || h > MaxResizeSide || int64(w)*int64(h) > MaxResizePixels {
		return 0, 0, fmt.Errorf("a %dx%d result is too large (at most %d pixels a side and %d megapixels)", w, h, MaxResizeSide, MaxResizePixels/1_000_000)
	}
	return w, h, nil
}

// ThumbnailSize bounds a thumbnail's width and height, in pixels.
const ThumbnailSize = 256

// maxThumbnailPixels bounds an image decoded whole for a thumbnail.
const maxThumbnailPixels = 50_000_000

// Thumbnail decodes an image (its pixels bounded before it is decoded)
// and encodes it as a PNG that fits ThumbnailSize×ThumbnailSize, keeping
// its proportions.
func Thumbnail(r io.Reader) ([]byte, error) {
	var head bytes.Buffer
	cfg, _, err := image.DecodeConfig(io.TeeReader(r, &head))
	if err != nil {
		return nil, fmt.Errorf("read image: %w", err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > maxThumbnailPixels {
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

// PDFThumbnail is the thumbnail of the first page of the PDF in (in dir,
// the engine's scratch directory), rendered by pdftoppm (prog).
func PDFThumbnail(ctx context.Context, dir, prog, in string) ([]byte, error) {
	if _, err := engine.Run(ctx, dir, prog, "-f", "1", "-l", "1", "-png", "-scale-to", fmt.Sprint(ThumbnailSize), "-singlefile", in, filepath.Join(dir, "page")); err != nil {
		return nil, err
	}
	out, err := os.Open(filepath.Join(dir, "page.png"))
	if err != nil {
		return nil, err
	}
	defer out.Close()
	return Thumbnail(io.LimitReader(out, 16<<20))
}
