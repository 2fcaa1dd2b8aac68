package storage

// Reads of attribute definitions and document attributes.

import (
	"errors"
	"fmt"
)

// DocAttributes returns the attributes of a document sorted by key,
// starting after the key after, at most limit (0: all).
func (d *DB) DocAttributes(site, doc, after string, limit int) ([]DocAttribute, string, error) {
	var out []DocAttribute
	var next string
	err := d.view(func(t *tx) error {
		if _, err := getLiveDoc(t, site, doc); err != nil {
			return err
		}
		var err error
		out, next, err = scanPage(t, docAttrPrefix(site, doc), after, limit, func(a *DocAttribute) string { return a.Key })
		return err
	})
	return out, next, err
}

// DocAttribute returns one attribute of a document.
func (d *DB) DocAttribute(site, doc, key string) (*DocAttribute, error) {
	var a DocAttribute
	err := d.view(func(t *tx) error {
		if _, err := getLiveDoc(t, site, doc); err != nil {
			return err
		}
		err := t.getJSON(docAttrKey(site, doc, key), &a)
		if errors.Is(err, ErrNotFound) {
			return &NotFoundError{Msg: fmt.Sprintf("attribute '%s' not found on document '%s'", key, doc)}
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &a, nil
}

// AttributeDefs lists a site's attribute definitions by key, after the key
// after, at most limit.
func (d *DB) AttributeDefs(site, after string, limit int) ([]AttributeDef, string, error) {
	return listPage(d, attrDefPrefix(site), after, limit, func(a *AttributeDef) string { return a.Key })
}

// AttributeDefinition returns one definition, built-in ones included.
func (d *DB) AttributeDefinition(site, key string) (*AttributeDef, error) {
	var out *AttributeDef
	err := d.view(func(t *tx) error {
		def, err := lookupDef(t, site, key)
		if errors.Is(err, ErrNotFound) {
			return attrDefNotFound(key)
		}
		out = def
		return err
	})
	return out, err
}

// AttributeUsed reports whether documents or schemas use key.
func (d *DB) AttributeUsed(site, key string) (bool, error) {
	var used bool
	err := d.view(func(t *tx) error {
		var err error
		used, err = attributeInUse(t, site, key)
		return err
	})
	return used, err
}
