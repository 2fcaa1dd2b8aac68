package storage

import (
	"encoding/json"
	"errors"
	"time"
)

// APIKey is a per-site API key record. The key itself is never stored,
// only its SHA-256 (Hash) and a masked form for listings.
type APIKey struct {
	Hash         string    `json:"hash"`
	Masked       string    `json:"masked"`
	Name         string    `json:"name"`
	SiteID       string    `json:"siteId"`
	UserID       string    `json:"userId"`
	Permissions  []string  `json:"permissions"`
	Groups       []string  `json:"groups,omitempty"`
	InsertedDate time.Time `json:"insertedDate"`
}

// AddAPIKey is the payload of OpAddAPIKey.
type AddAPIKey struct {
	Key APIKey `json:"key"`
	// OwnGroups refuses groups that give rights outside the key's site
	// (checkOwnGroups). Commands logged before it was added lack it and
	// replay as they were applied.
	OwnGroups bool `json:"ownGroups,omitempty"`
}

func applyAddAPIKey(t *tx, c *Command) (any, error) {
	p, err := decode[AddAPIKey](c)
	if err != nil {
		return nil, err
	}
	k := p.Key
	if err := checkName("name", k.Name); err != nil {
		return nil, err
	}
	if p.OwnGroups {
		if err := checkOwnGroups(t, c.Site, "groups", k.Groups); err != nil {
			return nil, err
		}
	}
	f := newDefFields(c) // RulesDefinitionFields
	if f.count("groups", len(k.Groups), MaxValuesPerKey) {
		for _, g := range k.Groups {
			f.name("groups", g)
		}
	}
	f.count("permissions", len(k.Permissions), MaxValuesPerKey)
	if err := f.err(); err != nil {
		return nil, err
	}
	k.SiteID, k.InsertedDate = c.Site, c.At
	if k.UserID == "" {
		k.UserID = c.User
	}
	ok, err := t.exists(apiKeyKey(k.Hash))
	if err != nil {
		return nil, err
	}
	if ok {
		return nil, &ConflictError{Msg: "api key already exists"}
	}
	if err := t.setJSON(apiKeyKey(k.Hash), k); err != nil {
		return nil, err
	}
	if err := t.set(apiKeySiteKey(c.Site, c.At, k.Hash), nil); err != nil {
		return nil, err
	}
	return nil, ensureSite(t, c)
}

// DeleteAPIKey is the payload of OpDeleteAPIKey: the key's hash, or its
// masked form as listed.
type DeleteAPIKey struct {
	Hash   string `json:"hash,omitempty"`
	Masked string `json:"masked,omitempty"`
}

func applyDeleteAPIKey(t *tx, c *Command) (any, error) {
	p, err := decode[DeleteAPIKey](c)
	if err != nil {
		return nil, err
	}
	var found *APIKey
	if p.Hash != "" {
		var k APIKey
		if err := t.getJSON(apiKeyKey(p.Hash), &k); err == nil && k.SiteID == c.Site {
			found = &k
		} else if err != nil && !errors.Is(err, ErrNotFound) {
			return nil, err
		}
	}
	if found == nil && p.Masked != "" {
		err := t.each(apiKeySitePrefix(c.Site), func(key, _ []byte) error {
			if found != nil {
				return nil
			}
			hash := string(key[len(key)-64:])
			var k APIKey
			if err := t.getJSON(apiKeyKey(hash), &k); err != nil {
				return err
			}
			if k.Masked == p.Masked {
				found = &k
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if found == nil {
		return nil, &NotFoundError{Msg: "ApiKey not found"}
	}
	if err := t.del(apiKeyKey(found.Hash)); err != nil {
		return nil, err
	}
	return nil, t.del(apiKeySiteKey(c.Site, found.InsertedDate, found.Hash))
}

// LookupAPIKey returns the API key with the given hash.
func (d *DB) LookupAPIKey(hash string) (*APIKey, error) {
	var k APIKey
	err := d.view(func(t *tx) error { return t.getJSON(apiKeyKey(hash), &k) })
	return &k, err
}

// ListAPIKeys returns a site's API keys, oldest first.
func (d *DB) ListAPIKeys(site string) ([]APIKey, error) {
	var out []APIKey
	err := d.view(func(t *tx) error {
		return t.each(apiKeySitePrefix(site), func(key, _ []byte) error {
			hash := string(key[len(key)-64:])
			var k APIKey
			b, err := t.getRaw(apiKeyKey(hash))
			if err != nil {
				return err
			}
			if err := json.Unmarshal(b, &k); err != nil {
				return err
			}
			out = append(out, k)
			return nil
		})
	})
	return out, err
}
