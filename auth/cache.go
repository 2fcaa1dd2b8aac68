package auth

import (
	"crypto/sha256"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Verifying a token's signature (ECDSA P-256 or RSA) costs far more than
// most requests it guards: a client sends the same token for its whole
// life, so a verified token is remembered until it expires (or for
// cacheFor at most). Tokens are kept by their SHA-256, never as text.
const (
	cacheFor     = 5 * time.Minute
	cacheEntries = 4096
)

type cachedToken struct {
	p     *Principal
	until time.Time
}

type tokenCache struct {
	mu sync.Mutex
	m  map[[32]byte]cachedToken
}

func (c *tokenCache) get(tok string, now time.Time) *Principal {
	k := sha256.Sum256([]byte(tok))
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok {
		return nil
	}
	if !now.Before(e.until) {
		delete(c.m, k)
		return nil
	}
	return e.p.clone()
}

func (c *tokenCache) put(tok string, p *Principal, claims jwt.MapClaims, now time.Time, leeway time.Duration) {
	until := now.Add(cacheFor)
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil {
		return
	}
	if e := exp.Add(leeway); e.Before(until) {
		until = e
	}
	k := sha256.Sum256([]byte(tok))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= cacheEntries {
		c.m = map[[32]byte]cachedToken{} // simple bound: start over
	}
	c.m[k] = cachedToken{p: p.clone(), until: until}
}

// clone copies a principal so a caller cannot change the cached one.
func (p *Principal) clone() *Principal {
	q := *p
	q.Groups = append([]string(nil), p.Groups...)
	q.Sites = make(map[string][]Permission, len(p.Sites))
	for k, v := range p.Sites {
		q.Sites[k] = append([]Permission(nil), v...)
	}
	return &q
}
