package storage

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/dgraph-io/badger/v4"
)

// Text references (issue 46: plain text stored twice). FULLTEXT's text of
// a plain-text document is the start of its content, and of a scan the
// start of its OCR text: storing it again doubled what such a document
// takes (up to 8 MiB more each). The FULLTEXT record then names where its
// text is instead (TextRecord.From, .Bytes) and holds none; every read of
// a text record (DB.Text, the index's indexText) gives the text back
// through resolveText, so readers see what they saw before. Before the
// OCR text a reference points at is replaced or deleted, the reference
// is filled in (detachFulltext), so the FULLTEXT text never changes under
// it.

// TextFromContent is TextRecord.From for text that is the start of the
// document's content (ContentSHA).
const TextFromContent = "content"

// maxTextRefBytes bounds a reference's Bytes (the pipeline's own bound on
// an extracted text is 8 MiB).
const maxTextRefBytes = 64 << 20

// checkTextRef refuses a record whose reference cannot be read back.
func checkTextRef(tr *TextRecord) error {
	switch {
	case tr.From == "" && tr.Bytes == 0:
		return nil
	case tr.From != TextFromContent && tr.From != TextOCR || tr.Kind != TextFulltext:
		return fmt.Errorf("text record: a %q text cannot refer to %q", tr.Kind, tr.From)
	case tr.Text != "" || tr.Bytes < 0 || tr.Bytes > maxTextRefBytes:
		return fmt.Errorf("text record: a reference holds no text and at most %d bytes", maxTextRefBytes)
	}
	return nil
}

// resolveText fills in the text of a reference record tr of document doc
// (a no-op for a record that holds its text). Text gone since (chunks of
// an old content swept, an OCR text of other content) resolves to "".
func resolveText(t *tx, site, doc string, tr *TextRecord) error {
	from, n := tr.From, tr.Bytes
	tr.From, tr.Bytes = "", 0
	switch from {
	case "":
		return nil
	case TextFromContent:
		b, err := contentPrefix(t, tr.ContentSHA, n)
		if err != nil {
			return err
		}
		tr.Text = string(b)
	case TextOCR:
		var o TextRecord
		if err := t.getJSON(textKey(site, doc, TextOCR), &o); errors.Is(err, ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		if o.ContentSHA != tr.ContentSHA || o.From != "" {
			return nil
		}
		tr.Text = o.Text[:min(int64(len(o.Text)), n)]
	}
	for !utf8.ValidString(tr.Text) { // a cut inside a character: never written so
		tr.Text = tr.Text[:len(tr.Text)-1]
	}
	return nil
}

// oneChunkContent returns the content sha of at most ChunkSize bytes
// (settleFulltext's), decoded into dst's storage (dst[:0]): read as its one
// chunk when it has one (the hash of a content of one chunk is the
// chunk's, SmallContent), without reading its manifest or copying the
// chunk, else through contentPrefix. Fewer bytes than the content has when
// its chunks are gone.
func oneChunkContent(t *tx, sha string, dst []byte) ([]byte, error) {
	item, err := t.txn.Get(chunkKey(sha))
	if errors.Is(err, badger.ErrKeyNotFound) {
		b, err := contentPrefix(t, sha, ChunkSize)
		return append(dst, b...), err
	}
	if err != nil {
		return nil, err
	}
	err = item.Value(func(val []byte) error {
		dst, err = decodeChunk(val, dst)
		return err
	})
	return dst, err
}

// contentPrefix reads the first n bytes of the content sha (fewer when it
// is shorter or its chunks are gone).
func contentPrefix(t *tx, sha string, n int64) ([]byte, error) {
	var m Manifest
	if err := t.getJSON(manifestKey(sha), &m); errors.Is(err, ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	var out, buf []byte
	for _, ch := range m.Chunks {
		if int64(len(out)) >= n {
			break
		}
		item, err := t.txn.Get(chunkKey(ch.SHA))
		if err != nil {
			return out, nil
		}
		if err := item.Value(func(val []byte) error {
			buf, err = decodeChunk(val, buf)
			return err
		}); err != nil {
			return nil, err
		}
		out = append(out, buf[:min(int64(len(buf)), n-int64(len(out)))]...)
	}
	return out, nil
}

// detachFulltext fills in document doc's FULLTEXT text when it refers to
// the OCR text, before that text is replaced or deleted.
func detachFulltext(t *tx, site, doc string) error {
	var tr TextRecord
	k := textKey(site, doc, TextFulltext)
	if err := t.getJSON(k, &tr); errors.Is(err, ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if tr.From != TextOCR {
		return nil
	}
	if err := resolveText(t, site, doc, &tr); err != nil {
		return err
	}
	return t.setJSON(k, tr)
}

// StoredText returns a document's text record of kind as it is stored: a
// reference (From, Bytes) is not resolved. Nil when there is none.
func (d *DB) StoredText(site, doc, kind string) (*TextRecord, error) {
	var tr TextRecord
	err := d.view(func(t *tx) error { return t.getJSON(textKey(site, doc, kind), &tr) })
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &tr, nil
}
