package storage

import (
	"encoding/json"
	"errors"
)

// errStop ends an iteration early.
var errStop = errors.New("stop")

// scanPage reads, in t, up to limit JSON records under prefix whose id
// (in key order) comes after after, and the id to continue from when
// more remain: the id of the page's last record, or "" at the end. A
// limit of 0 reads them all. It is the one prefix scan of every listing
// that pages by id.
func scanPage[T any](t *tx, prefix []byte, after string, limit int, id func(*T) string) ([]T, string, error) {
	var out []T
	var next string
	err := t.each(prefix, func(_, v []byte) error {
		var r T
		if err := json.Unmarshal(v, &r); err != nil {
			return err
		}
		if after != "" && id(&r) <= after {
			return nil
		}
		if limit > 0 && len(out) == limit {
			next = id(&out[len(out)-1])
			return errStop
		}
		out = append(out, r)
		return nil
	})
	if errors.Is(err, errStop) {
		err = nil
	}
	return out, next, err
}

// listPage is scanPage in a read transaction of its own.
func listPage[T any](d *DB, prefix []byte, after string, limit int, id func(*T) string) ([]T, string, error) {
	var out []T
	var next string
	err := d.view(func(t *tx) error {
		var err error
		out, next, err = scanPage(t, prefix, after, limit, id)
		return err
	})
	return out, next, err
}
