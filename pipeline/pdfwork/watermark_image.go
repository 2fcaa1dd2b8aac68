package pdfwork

import (
	"image"
	"image/draw"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

var (
	goBold     *opentype.Font
	goBoldErr  error
	goBoldOnce sync.Once
)

func watermarkFont() (*opentype.Font, error) {
	goBoldOnce.Do(func() { goBold, goBoldErr = opentype.Parse(gobold.TTF) })
	return goBold, goBoldErr
}

// stampImage decodes the PNG or JPEG image in, draws marks on it (Go Bold,
// mid-grey at each mark's opacity) and writes it to out in its format.
func stampImage(in, out, kind string, marks []Mark) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	cfg, format, err := image.DecodeConfig(f)
	if err != nil || (format != kind) {
		return &WatermarkError{Msg: "the image cannot be read to be watermarked (its content is not the " + kind + " its type says)"}
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > MaxWatermarkPixels {
		return &WatermarkError{Msg: "the image is over 25 megapixels and cannot be watermarked"}
	}
	if _, err := f.Seek(0, 0); err != nil {
		return err
	}
	src, _, err := image.Decode(f)
	if err != nil {
		return &WatermarkError{Msg: "the image cannot be read to be watermarked"}
	}
	b := src.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(dst, dst.Bounds(), src, b.Min, draw.Src)
	src = nil
	ft, err := watermarkFont()
	if err != nil {
		return err
	}
	for _, m := range marks {
		if err := drawMark(dst, ft, m); err != nil {
			return err
		}
	}
	o, err := os.OpenFile(out, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if kind == "png" {
		err = png.Encode(o, dst)
	} else {
		err = jpeg.Encode(o, dst, &jpeg.Options{Quality: 90})
	}
	if cerr := o.Close(); err == nil {
		err = cerr
	}
	return err
}

// drawMark draws m's text on dst: the text is rendered unrotated to an
// alpha mask, and each pixel of its rotated box samples the mask.
func drawMark(dst *image.RGBA, ft *opentype.Font, m Mark) error {
	W, H := float64(dst.Bounds().Dx()), float64(dst.Bounds().Dy())
	// Metrics at 100 px give the text's proportions for placement.
	ref, err := opentype.NewFace(ft, &opentype.FaceOptions{Size: 100, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return err
	}
	w1 := float64(font.MeasureString(ref, m.Text)) / 64 / 100
	met := ref.Metrics()
	asc, desc := float64(met.Ascent)/64/100, float64(met.Descent)/64/100
	ref.Close()
	ox, oy, size := m.placement(W, H, w1, asc, desc)
	if size < 1 {
		return nil // nothing visible fits
	}
	face, err := opentype.NewFace(ft, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingNone})
	if err != nil {
		return err
	}
	defer face.Close()
	mw, ma, md := int(math.Ceil(w1*size))+2, int(math.Ceil(asc*size)), int(math.Ceil(desc*size))
	mh := ma + md
	if mw <= 0 || mh <= 0 || int64(mw)*int64(mh) > 4*MaxWatermarkPixels {
		return &WatermarkError{Msg: "the watermark is too large for the image"}
	}
	mask := image.NewAlpha(image.Rect(0, 0, mw, mh))
	d := font.Drawer{Dst: mask, Src: image.Opaque, Face: face, Dot: fixed.P(1, ma)}
	d.DrawString(m.Text)
	th := m.Rotation * math.Pi / 180
	c, s := math.Cos(th), math.Sin(th)
	// The mask's pixel (u, v) (v down from the top) is at text coordinates
	// (u-1, ma-v) (y up, baseline 0); text coordinates map to image
	// coordinates (y up) by rotation and (ox, oy), then y flips.
	minx, miny, maxx, maxy := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, p := range [][2]float64{{-1, -float64(md)}, {float64(mw - 1), -float64(md)}, {-1, float64(ma)}, {float64(mw - 1), float64(ma)}} {
		x, y := ox+p[0]*c-p[1]*s, oy+p[0]*s+p[1]*c
		minx, maxx = math.Min(minx, x), math.Max(maxx, x)
		miny, maxy = math.Min(miny, y), math.Max(maxy, y)
	}
	x0, x1 := max(0, int(math.Floor(minx))), min(int(W), int(math.Ceil(maxx)))
	y0, y1 := max(0, int(math.Floor(H-maxy))), min(int(H), int(math.Ceil(H-miny)))
	const grey = 128
	for py := y0; py < y1; py++ {
		for px := x0; px < x1; px++ {
			// image point (y up) → text coordinates (inverse rotation)
			X, Y := float64(px)+0.5-ox, (H-float64(py)-0.5)-oy
			tx, ty := X*c+Y*s, -X*s+Y*c
			u, v := int(math.Floor(tx+1)), int(math.Floor(float64(ma)-ty))
			if u < 0 || v < 0 || u >= mw || v >= mh {
				continue
			}
			a := float64(mask.AlphaAt(u, v).A) / 255 * m.Opacity
			if a <= 0 {
				continue
			}
			i := dst.PixOffset(px, py)
			p := dst.Pix[i : i+4 : i+4]
			for k := range 3 {
				p[k] = uint8(math.Round(grey*a + float64(p[k])*(1-a)))
			}
			p[3] = uint8(math.Round(255*a + float64(p[3])*(1-a)))
		}
	}
	return nil
}
