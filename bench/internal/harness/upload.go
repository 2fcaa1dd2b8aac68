package harness

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"
)

// CopyBuf is the buffer size of local copies: dd's bs=1M.
const CopyBuf = 1 << 20

// UploadSeed returns a fresh seed for the upload stream.
func UploadSeed() [32]byte {
	var s [32]byte
	rand.Read(s[:])
	return s
}

// RandomStream returns size pseudo-random bytes drawn from seed as they are
// read (ChaCha8 runs at GB/s, so it does not slow the upload), never held
// in memory. The same seed gives the same stream.
func RandomStream(seed [32]byte, size int64) io.Reader {
	return io.LimitReader(mrand.NewChaCha8(seed), size)
}

// Mbps returns n bytes over d in MB/s (MB = 10^6 bytes, as dd reports).
func Mbps(n int64, d time.Duration) float64 { return float64(n) / 1e6 / d.Seconds() }

// transferTimeout bounds a transfer of size bytes: two minutes plus 1 MB/s.
func transferTimeout(size int64) time.Duration {
	return 2*time.Minute + time.Duration(size/1e6)*time.Second
}

// WriteSource writes the upload stream to path and returns its SHA-256.
// The file is synced so its write-back does not slow the baseline.
func WriteSource(path string, size int64, seed [32]byte) ([]byte, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyBuffer(io.MultiWriter(f, h), RandomStream(seed, size), make([]byte, CopyBuf)); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	return h.Sum(nil), f.Close()
}

// DiskResult is a baseline write of the upload's bytes to the local disk.
type DiskResult struct {
	Tool    string // how the bytes were written
	Elapsed time.Duration
	Rate    float64 // MB/s
}

// DiskBaseline copies src to dst durably with dd, or from Go with a write
// and an fsync where dd is missing, and times it.
func DiskBaseline(ctx context.Context, src, dst string, size int64) (DiskResult, error) {
	tool, copyFile := "Go write+fsync", func() error { return goCopy(src, dst) }
	if dd, err := exec.LookPath("dd"); err == nil {
		tool, copyFile = "dd bs=1M conv=fsync", func() error { return ddCopy(ctx, dd, src, dst) }
	}
	t0 := time.Now()
	if err := copyFile(); err != nil {
		return DiskResult{}, err
	}
	d := time.Since(t0)
	fi, err := os.Stat(dst)
	if err != nil {
		return DiskResult{}, err
	}
	if fi.Size() != size {
		return DiskResult{}, fmt.Errorf("%s wrote %d bytes of %d", tool, fi.Size(), size)
	}
	return DiskResult{Tool: tool, Elapsed: d, Rate: Mbps(size, d)}, nil
}

// ddCopy runs dd if=src of=dst bs=1M conv=fsync.
func ddCopy(ctx context.Context, dd, src, dst string) error {
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, dd, "if="+src, "of="+dst, "bs=1M", "conv=fsync")
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("dd: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// goCopy copies src to dst in 1 MiB writes and fsyncs dst.
func goCopy(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	defer out.Close()
	if _, err := io.CopyBuffer(out, in, make([]byte, CopyBuf)); err != nil {
		return err
	}
	if err := out.Sync(); err != nil {
		return err
	}
	return out.Close()
}

// TransferResult is one timed upload or download through Quire.
type TransferResult struct {
	DocumentID string
	Elapsed    time.Duration
	Rate       float64 // MB/s
}

// UploadResponse is the answer to POST /documents/upload.
type UploadResponse struct {
	DocumentID string `json:"documentId"`
	URL        string `json:"url"`
}

// QuireUpload creates a document with POST /documents/upload and streams
// size pseudo-random bytes from seed to its upload URL, timing the PUT
// from the first byte sent to the 200.
func QuireUpload(ctx context.Context, srv *Server, size int64, seed [32]byte) (TransferResult, error) {
	var up UploadResponse
	if err := srv.DoJSON(ctx, http.MethodPost, "/documents/upload", map[string]string{"path": "bench/upload.bin"}, http.StatusCreated, &up); err != nil {
		return TransferResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, transferTimeout(size))
	defer cancel()
	t0 := time.Now()
	resp, err := srv.Request(ctx, http.MethodPut, up.URL, RandomStream(seed, size), size, "application/octet-stream")
	if err != nil {
		return TransferResult{}, err
	}
	defer resp.Body.Close()
	if err := CheckStatus(resp, http.StatusOK); err != nil {
		return TransferResult{}, fmt.Errorf("PUT upload url: %w", err)
	}
	d := time.Since(t0)
	_, err = io.Copy(io.Discard, resp.Body)
	return TransferResult{DocumentID: up.DocumentID, Elapsed: d, Rate: Mbps(size, d)}, err
}

// PutUpload sends data to an upload URL and expects its 200.
func PutUpload(ctx context.Context, srv *Server, url string, data []byte, ctype string) error {
	resp, err := srv.Request(ctx, http.MethodPut, url, bytes.NewReader(data), int64(len(data)), ctype)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := CheckStatus(resp, http.StatusOK); err != nil {
		return fmt.Errorf("PUT upload url: %w", err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// VerifyUpload checks that the document reports size bytes and that its
// content, downloaded through GET /documents/{id}/url, hashes to want.
// It returns the timing of the download.
func VerifyUpload(ctx context.Context, srv *Server, id string, size int64, want []byte) (TransferResult, error) {
	var doc struct {
		ContentLength int64 `json:"contentLength"`
	}
	if err := srv.DoJSON(ctx, http.MethodGet, "/documents/"+id, nil, http.StatusOK, &doc); err != nil {
		return TransferResult{}, err
	}
	if doc.ContentLength != size {
		return TransferResult{}, fmt.Errorf("contentLength is %d, uploaded %d", doc.ContentLength, size)
	}
	var dl UploadResponse
	if err := srv.DoJSON(ctx, http.MethodGet, "/documents/"+id+"/url", nil, http.StatusOK, &dl); err != nil {
		return TransferResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, transferTimeout(size))
	defer cancel()
	t0 := time.Now()
	resp, err := srv.Request(ctx, http.MethodGet, dl.URL, nil, 0, "")
	if err != nil {
		return TransferResult{}, err
	}
	defer resp.Body.Close()
	if err := CheckStatus(resp, http.StatusOK); err != nil {
		return TransferResult{}, fmt.Errorf("GET download url: %w", err)
	}
	h := sha256.New()
	n, err := io.CopyBuffer(h, resp.Body, make([]byte, CopyBuf))
	d := time.Since(t0)
	switch {
	case err != nil:
		return TransferResult{}, fmt.Errorf("download: %w", err)
	case n != size:
		return TransferResult{}, fmt.Errorf("downloaded %d bytes, uploaded %d", n, size)
	case !bytes.Equal(h.Sum(nil), want):
		return TransferResult{}, fmt.Errorf("downloaded SHA-256 %x differs from the uploaded %x", h.Sum(nil), want)
	}
	return TransferResult{DocumentID: id, Elapsed: d, Rate: Mbps(size, d)}, nil
}
