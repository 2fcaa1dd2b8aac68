package main

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

// copyBuf is the buffer size of local copies: dd's bs=1M.
const copyBuf = 1 << 20

// uploadSeed returns a fresh seed for the upload stream.
func uploadSeed() [32]byte {
	var s [32]byte
	rand.Read(s[:])
	return s
}

// randomStream returns size pseudo-random bytes drawn from seed as they are
// read (ChaCha8 runs at GB/s, so it does not slow the upload), never held
// in memory. The same seed gives the same stream.
func randomStream(seed [32]byte, size int64) io.Reader {
	return io.LimitReader(mrand.NewChaCha8(seed), size)
}

// mbps returns n bytes over d in MB/s (MB = 10^6 bytes, as dd reports).
func mbps(n int64, d time.Duration) float64 { return float64(n) / 1e6 / d.Seconds() }

// transferTimeout bounds a transfer of size bytes: two minutes plus 1 MB/s.
func transferTimeout(size int64) time.Duration {
	return 2*time.Minute + time.Duration(size/1e6)*time.Second
}

// writeSource writes the upload stream to path and returns its SHA-256.
// The file is synced so its write-back does not slow the baseline.
func writeSource(path string, size int64, seed [32]byte) ([]byte, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.CopyBuffer(io.MultiWriter(f, h), randomStream(seed, size), make([]byte, copyBuf)); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil {
		return nil, err
	}
	return h.Sum(nil), f.Close()
}

// diskResult is a baseline write of the upload's bytes to the local disk.
type diskResult struct {
	tool    string // how the bytes were written
	elapsed time.Duration
	rate    float64 // MB/s
}

// diskBaseline copies src to dst durably with dd, or from Go with a write
// and an fsync where dd is missing, and times it.
func diskBaseline(ctx context.Context, src, dst string, size int64) (diskResult, error) {
	tool, copyFile := "Go write+fsync", func() error { return goCopy(src, dst) }
	if dd, err := exec.LookPath("dd"); err == nil {
		tool, copyFile = "dd bs=1M conv=fsync", func() error { return ddCopy(ctx, dd, src, dst) }
	}
	t0 := time.Now()
	if err := copyFile(); err != nil {
		return diskResult{}, err
	}
	d := time.Since(t0)
	fi, err := os.Stat(dst)
	if err != nil {
		return diskResult{}, err
	}
	if fi.Size() != size {
		return diskResult{}, fmt.Errorf("%s wrote %d bytes of %d", tool, fi.Size(), size)
	}
	return diskResult{tool: tool, elapsed: d, rate: mbps(size, d)}, nil
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
	if _, err := io.CopyBuffer(out, in, make([]byte, copyBuf)); err != nil {
		return err
	}
	if err := out.Sync(); err != nil {
		return err
	}
	return out.Close()
}

// transferResult is one timed upload or download through Quire.
type transferResult struct {
	documentID string
	elapsed    time.Duration
	rate       float64 // MB/s
}

// uploadResponse is the answer to POST /documents/upload.
type uploadResponse struct {
	DocumentID string `json:"documentId"`
	URL        string `json:"url"`
}

// quireUpload creates a document with POST /documents/upload and streams
// size pseudo-random bytes from seed to its upload URL, timing the PUT
// from the first byte sent to the 200.
func quireUpload(ctx context.Context, srv *server, size int64, seed [32]byte) (transferResult, error) {
	var up uploadResponse
	if err := srv.doJSON(ctx, http.MethodPost, "/documents/upload", map[string]string{"path": "bench/upload.bin"}, http.StatusCreated, &up); err != nil {
		return transferResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, transferTimeout(size))
	defer cancel()
	t0 := time.Now()
	resp, err := srv.request(ctx, http.MethodPut, up.URL, randomStream(seed, size), size, "application/octet-stream")
	if err != nil {
		return transferResult{}, err
	}
	defer resp.Body.Close()
	if err := checkStatus(resp, http.StatusOK); err != nil {
		return transferResult{}, fmt.Errorf("PUT upload url: %w", err)
	}
	d := time.Since(t0)
	_, err = io.Copy(io.Discard, resp.Body)
	return transferResult{documentID: up.DocumentID, elapsed: d, rate: mbps(size, d)}, err
}

// putUpload sends data to an upload URL and expects its 200.
func putUpload(ctx context.Context, srv *server, url string, data []byte, ctype string) error {
	resp, err := srv.request(ctx, http.MethodPut, url, bytes.NewReader(data), int64(len(data)), ctype)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := checkStatus(resp, http.StatusOK); err != nil {
		return fmt.Errorf("PUT upload url: %w", err)
	}
	_, err = io.Copy(io.Discard, resp.Body)
	return err
}

// verifyUpload checks that the document reports size bytes and that its
// content, downloaded through GET /documents/{id}/url, hashes to want.
// It returns the timing of the download.
func verifyUpload(ctx context.Context, srv *server, id string, size int64, want []byte) (transferResult, error) {
	var doc struct {
		ContentLength int64 `json:"contentLength"`
	}
	if err := srv.doJSON(ctx, http.MethodGet, "/documents/"+id, nil, http.StatusOK, &doc); err != nil {
		return transferResult{}, err
	}
	if doc.ContentLength != size {
		return transferResult{}, fmt.Errorf("contentLength is %d, uploaded %d", doc.ContentLength, size)
	}
	var dl uploadResponse
	if err := srv.doJSON(ctx, http.MethodGet, "/documents/"+id+"/url", nil, http.StatusOK, &dl); err != nil {
		return transferResult{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, transferTimeout(size))
	defer cancel()
	t0 := time.Now()
	resp, err := srv.request(ctx, http.MethodGet, dl.URL, nil, 0, "")
	if err != nil {
		return transferResult{}, err
	}
	defer resp.Body.Close()
	if err := checkStatus(resp, http.StatusOK); err != nil {
		return transferResult{}, fmt.Errorf("GET download url: %w", err)
	}
	h := sha256.New()
	n, err := io.CopyBuffer(h, resp.Body, make([]byte, copyBuf))
	d := time.Since(t0)
	switch {
	case err != nil:
		return transferResult{}, fmt.Errorf("download: %w", err)
	case n != size:
		return transferResult{}, fmt.Errorf("downloaded %d bytes, uploaded %d", n, size)
	case !bytes.Equal(h.Sum(nil), want):
		return transferResult{}, fmt.Errorf("downloaded SHA-256 %x differs from the uploaded %x", h.Sum(nil), want)
	}
	return transferResult{documentID: id, elapsed: d, rate: mbps(size, d)}, nil
}
