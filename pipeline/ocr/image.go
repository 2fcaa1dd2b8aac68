package ocr

import (
	"bufio"
	"errors"
	"fmt"
	"image"
	"image/color"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// Page images in Go (issue 46, OCR speed): what OCR does to a page image
// itself, without a program of its own, and only when a page needs it:
// turning a page that tesseract could not read upright (by the orientation
// tesseract's OSD found), straightening a skewed one, and estimating the
// skew of a page on which tesseract found too few lines to measure it.

// raster is a page image: 8-bit gray, or RGB (3 bytes a pixel).
type raster struct {
	w, h  int
	color bool
	pix   []byte
}

// maxFixPixels bounds the images OCR turns or straightens in memory (A4 at
// 600 dpi is 35 megapixels); a larger page is read as it is.
const maxFixPixels = 40_000_000

// maxFixColorPixels bounds the color images kept in color when turned or
// straightened (3 bytes a pixel); larger ones are made gray.
const maxFixColorPixels = 20_000_000

// readRaster decodes a page image (PNM as pdftoppm and pdfimages write
// them, or any format image.Decode knows) into gray, or RGB when color is
// asked for and the image has color.
func readRaster(fn string, wantColor bool) (*raster, error) {
	f, err := os.Open(fn)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 'P' && (head[1] == '5' || head[1] == '6') {
		return readPNM(br, wantColor)
	}
	cfg, _, err := image.DecodeConfig(br)
	if err != nil {
		return nil, fmt.Errorf("the page image cannot be read: %v", err)
	}
	if cfg.Width*cfg.Height > maxFixPixels || cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, fmt.Errorf("the page image is %d x %d pixels, more than OCR turns or straightens (%d megapixels)", cfg.Width, cfg.Height, maxFixPixels/1_000_000)
	}
	if _, err := f.Seek(0, 0); err != nil {
		return nil, err
	}
	br.Reset(f)
	img, _, err := image.Decode(br)
	if err != nil {
		return nil, fmt.Errorf("the page image cannot be read: %v", err)
	}
	return toRaster(img, wantColor && cfg.Width*cfg.Height <= maxFixColorPixels), nil
}

// toRaster converts a decoded image, with fast paths for the types the
// decoders return for scans.
func toRaster(img image.Image, wantColor bool) *raster {
	b := img.Bounds()
	r := &raster{w: b.Dx(), h: b.Dy()}
	switch m := img.(type) {
	case *image.Gray:
		r.pix = make([]byte, r.w*r.h)
		for y := 0; y < r.h; y++ {
			copy(r.pix[y*r.w:(y+1)*r.w], m.Pix[y*m.Stride:y*m.Stride+r.w])
		}
		return r
	case *image.YCbCr:
		if !wantColor || m.SubsampleRatio == image.YCbCrSubsampleRatio444 && isGrayYCbCr(m) {
			r.pix = make([]byte, r.w*r.h)
			for y := 0; y < r.h; y++ {
				copy(r.pix[y*r.w:(y+1)*r.w], m.Y[y*m.YStride:y*m.YStride+r.w])
			}
			return r
		}
	}
	r.color = wantColor && hasColor(img)
	if r.color {
		r.pix = make([]byte, 3*r.w*r.h)
	} else {
		r.pix = make([]byte, r.w*r.h)
	}
	i := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			// Transparent parts are white paper.
			cr, cg, cb := blendWhite(c.R, c.A), blendWhite(c.G, c.A), blendWhite(c.B, c.A)
			if r.color {
				r.pix[i], r.pix[i+1], r.pix[i+2] = cr, cg, cb
				i += 3
				continue
			}
			r.pix[i] = uint8((19595*uint32(cr) + 38470*uint32(cg) + 7471*uint32(cb) + 1<<15) >> 16)
			i++
		}
	}
	return r
}

// blendWhite puts a premultiplied channel over white.
func blendWhite(v, a uint8) uint8 { return v + 255 - a }

func isGrayYCbCr(m *image.YCbCr) bool {
	for i := 0; i < len(m.Cb); i += 97 {
		if d := int(m.Cb[i]) - 128; d > 3 || d < -3 {
			return false
		}
		if d := int(m.Cr[i]) - 128; d > 3 || d < -3 {
			return false
		}
	}
	return true
}

// hasColor samples an image for pixels that are not gray.
func hasColor(img image.Image) bool {
	switch img.(type) {
	case *image.Gray, *image.Gray16:
		return false
	}
	b := img.Bounds()
	step := max(1, b.Dx()/64)
	for y := b.Min.Y; y < b.Max.Y; y += step {
		for x := b.Min.X; x < b.Max.X; x += step {
			r, g, bl, _ := img.At(x, y).RGBA()
			if absDiff(r, g) > 0x800 || absDiff(g, bl) > 0x800 {
				return true
			}
		}
	}
	return false
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// readPNM reads a binary PGM (P5) or PPM (P6) of 8-bit samples.
func readPNM(br *bufio.Reader, wantColor bool) (*raster, error) {
	magic, err := pnmToken(br)
	if err != nil {
		return nil, err
	}
	var v [3]int
	for i := range v {
		tok, err := pnmToken(br)
		if err != nil {
			return nil, err
		}
		if v[i], err = strconv.Atoi(tok); err != nil || v[i] <= 0 {
			return nil, fmt.Errorf("bad PNM header %q", tok)
		}
	}
	w, h := v[0], v[1]
	if v[2] != 255 {
		return nil, fmt.Errorf("PNM with %d levels", v[2])
	}
	if w*h > maxFixPixels {
		return nil, fmt.Errorf("the page image is %d x %d pixels, more than OCR turns or straightens (%d megapixels)", w, h, maxFixPixels/1_000_000)
	}
	ch := 1
	if magic == "P6" {
		ch = 3
	}
	pix := make([]byte, w*h*ch)
	if _, err := io.ReadFull(br, pix); err != nil {
		return nil, fmt.Errorf("short PNM: %v", err)
	}
	r := &raster{w: w, h: h, pix: pix}
	if ch == 3 {
		r.color = true
		if !wantColor || w*h > maxFixColorPixels {
			r = r.gray()
		}
	}
	return r, nil
}

// pnmToken reads one header token (skipping blanks and # comments) and the
// one blank after it.
func pnmToken(br *bufio.Reader) (string, error) {
	var b strings.Builder
	for {
		c, err := br.ReadByte()
		if err != nil {
			return "", err
		}
		switch {
		case c == '#' && b.Len() == 0:
			if _, err := br.ReadString('\n'); err != nil {
				return "", err
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if b.Len() > 0 {
				return b.String(), nil
			}
		default:
			if b.Len() > 16 {
				return "", errors.New("bad PNM header")
			}
			b.WriteByte(c)
		}
	}
}

// gray returns the raster in gray.
func (r *raster) gray() *raster {
	if !r.color {
		return r
	}
	g := &raster{w: r.w, h: r.h, pix: make([]byte, r.w*r.h)}
	for i := range g.pix {
		p := r.pix[3*i : 3*i+3]
		g.pix[i] = uint8((19595*uint32(p[0]) + 38470*uint32(p[1]) + 7471*uint32(p[2]) + 1<<15) >> 16)
	}
	return g
}

func (r *raster) channels() int {
	if r.color {
		return 3
	}
	return 1
}

// writePNM writes the raster as binary PGM or PPM, which tesseract reads
// without decoding work.
func (r *raster) writePNM(fn string) error {
	f, err := os.Create(fn)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	magic := "P5"
	if r.color {
		magic = "P6"
	}
	fmt.Fprintf(w, "%s\n%d %d\n255\n", magic, r.w, r.h)
	if _, err := w.Write(r.pix); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// rotate turns the raster clockwise by deg (90, 180 or 270), as a PDF
// page's /Rotate turns it on screen.
func (r *raster) rotate(deg int) *raster {
	ch := r.channels()
	out := &raster{w: r.w, h: r.h, color: r.color, pix: make([]byte, len(r.pix))}
	if deg == 90 || deg == 270 {
		out.w, out.h = r.h, r.w
	}
	for y := 0; y < out.h; y++ {
		for x := 0; x < out.w; x++ {
			var sx, sy int
			switch deg {
			case 90:
				sx, sy = y, r.h-1-x
			case 180:
				sx, sy = r.w-1-x, r.h-1-y
			case 270:
				sx, sy = r.w-1-y, x
			default:
				sx, sy = x, y
			}
			copy(out.pix[(y*out.w+x)*ch:(y*out.w+x+1)*ch], r.pix[(sy*r.w+sx)*ch:(sy*r.w+sx+1)*ch])
		}
	}
	return out
}

// deskew straightens a page whose text lines descend to the right by deg
// degrees (image coordinates, y down): it turns the image about its centre
// (bilinear), keeping its size, with white where nothing was.
func (r *raster) deskew(deg float64) *raster {
	ch := r.channels()
	out := &raster{w: r.w, h: r.h, color: r.color, pix: make([]byte, len(r.pix))}
	sin, cos := math.Sincos(deg * math.Pi / 180)
	cx, cy := float64(r.w-1)/2, float64(r.h-1)/2
	for y := 0; y < r.h; y++ {
		dy := float64(y) - cy
		for x := 0; x < r.w; x++ {
			dx := float64(x) - cx
			// The source of (x, y): the point the skew moved there.
			sx := cos*dx - sin*dy + cx
			sy := sin*dx + cos*dy + cy
			o := (y*r.w + x) * ch
			x0, y0 := int(math.Floor(sx)), int(math.Floor(sy))
			if x0 < 0 || y0 < 0 || x0+1 >= r.w || y0+1 >= r.h {
				for c := 0; c < ch; c++ {
					out.pix[o+c] = 255
				}
				continue
			}
			fx, fy := sx-float64(x0), sy-float64(y0)
			i00 := (y0*r.w + x0) * ch
			i10, i01, i11 := i00+ch, i00+r.w*ch, i00+r.w*ch+ch
			for c := 0; c < ch; c++ {
				top := float64(r.pix[i00+c])*(1-fx) + float64(r.pix[i10+c])*fx
				bot := float64(r.pix[i01+c])*(1-fx) + float64(r.pix[i11+c])*fx
				out.pix[o+c] = uint8(top*(1-fy) + bot*fy + 0.5)
			}
		}
	}
	return out
}

// estimateSkew finds the angle (degrees, within ±maxSkew) at which the dark
// pixels of a text page line up in rows best (the projection profile
// method, on a reduced copy), and whether the page has lines clear enough
// to tell. Positive: lines descend to the right.
func estimateSkew(r *raster) (float64, bool) {
	g := r.gray()
	f := max(1, g.w/700)
	sw, sh := g.w/f, g.h/f
	if sw < 50 || sh < 50 {
		return 0, false
	}
	small := make([]uint8, sw*sh)
	var hist [256]int
	for y := 0; y < sh; y++ {
		for x := 0; x < sw; x++ {
			sum := 0
			for yy := 0; yy < f; yy++ {
				row := (y*f + yy) * g.w
				for xx := 0; xx < f; xx++ {
					sum += int(g.pix[row+x*f+xx])
				}
			}
			v := uint8(sum / (f * f))
			small[y*sw+x] = v
			hist[v]++
		}
	}
	t := otsu(hist[:], sw*sh)
	var xs, ys []float64
	for y := 0; y < sh; y++ {
		for x := 0; x < sw; x++ {
			if small[y*sw+x] < t {
				xs = append(xs, float64(x))
				ys = append(ys, float64(y))
			}
		}
	}
	// Too little ink for lines, or so much that it is a picture.
	if len(xs) < 200 || len(xs) > sw*sh/3 {
		return 0, false
	}
	n := int(math.Hypot(float64(sw), float64(sh))) + 2
	bins := make([]int, 2*n)
	score := func(deg float64) float64 {
		sin, cos := math.Sincos(deg * math.Pi / 180)
		clear(bins)
		for i := range xs {
			bins[int(ys[i]*cos-xs[i]*sin)+n]++
		}
		s := 0.0
		for i := 1; i < len(bins); i++ {
			d := float64(bins[i] - bins[i-1])
			s += d * d
		}
		return s
	}
	best, bestScore := 0.0, -1.0
	var all []float64
	for a := -maxSkew; a <= maxSkew+1e-9; a += 0.5 {
		s := score(a)
		all = append(all, s)
		if s > bestScore {
			best, bestScore = a, s
		}
	}
	for a := best - 0.5; a <= best+0.5+1e-9; a += 0.05 {
		if s := score(a); s > bestScore {
			best, bestScore = a, s
		}
	}
	// Text lines give one clear peak: the best angle must stand well above
	// the typical one.
	mean := 0.0
	for _, s := range all {
		mean += s
	}
	mean /= float64(len(all))
	if bestScore < 1.5*mean {
		return 0, false
	}
	return math.Round(best*100) / 100, true
}

// maxSkew is the largest skew (degrees) OCR straightens.
const maxSkew = 15.0

// otsu is the threshold that best splits a histogram in two classes.
func otsu(hist []int, total int) uint8 {
	sum := 0.0
	for i, c := range hist {
		sum += float64(i * c)
	}
	var sumB, wB float64
	best, bestVar := 0, -1.0
	for i, c := range hist {
		wB += float64(c)
		if wB == 0 {
			continue
		}
		wF := float64(total) - wB
		if wF == 0 {
			break
		}
		sumB += float64(i * c)
		mB, mF := sumB/wB, (sum-sumB)/wF
		if v := wB * wF * (mB - mF) * (mB - mF); v > bestVar {
			best, bestVar = i, v
		}
	}
	return uint8(best + 1)
}
