package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/argon2"
)

// The built-in user directory's side of authentication: password hashes,
// tokens for directory users, and the per-request check that a user's
// tokens still stand (API.md "Users, groups and sign-in").

// Directory answers whether a directory user's tokens of a generation
// still stand: the user exists, is enabled and has that generation.
type Directory interface {
	UserGeneration(username string) (generation int, enabled bool, err error)
}

// Lifetimes of the tokens of a sign-in (SERVICE-SPEC.md §5.10):
// configurable within Cognito's bounds (auth.access_token_ttl and
// auth.refresh_token_ttl; config checks the same bounds at load).
const (
	DefaultAccessTTL  = 15 * time.Minute
	MinAccessTTL      = 5 * time.Minute
	MaxAccessTTL      = 24 * time.Hour
	DefaultRefreshTTL = 30 * 24 * time.Hour
	MinRefreshTTL     = time.Hour
	MaxRefreshTTL     = 3650 * 24 * time.Hour
	// DefaultIdleTimeout: the web console signs out after 15 minutes
	// without input.
	DefaultIdleTimeout = 15 * time.Minute
)

// IdleTimeout is how long the web console stays signed in without input.
func (a *Authenticator) IdleTimeout() time.Duration { return a.cfg.IdleTimeout }

// AccessTTL is the lifetime of the access and ID tokens of a sign-in.
func (a *Authenticator) AccessTTL() time.Duration { return a.cfg.AccessTTL }

// RefreshTTL is how long a sign-in's refresh token signs in again.
func (a *Authenticator) RefreshTTL() time.Duration { return a.cfg.RefreshTTL }

// checkTTLs defaults and bounds the token lifetimes of cfg.
func checkTTLs(cfg *Config) error {
	if cfg.AccessTTL == 0 {
		cfg.AccessTTL = DefaultAccessTTL
	}
	if cfg.RefreshTTL == 0 {
		cfg.RefreshTTL = DefaultRefreshTTL
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.AccessTTL < MinAccessTTL || cfg.AccessTTL > MaxAccessTTL {
		return fmt.Errorf("auth: the access token lifetime %s is outside %s to %s", cfg.AccessTTL, MinAccessTTL, MaxAccessTTL)
	}
	if cfg.RefreshTTL < MinRefreshTTL || cfg.RefreshTTL > MaxRefreshTTL {
		return fmt.Errorf("auth: the refresh token lifetime %s is outside %s to %s", cfg.RefreshTTL, MinRefreshTTL, MaxRefreshTTL)
	}
	if cfg.RefreshTTL <= cfg.AccessTTL {
		return fmt.Errorf("auth: the refresh token lifetime %s must exceed the access token lifetime %s", cfg.RefreshTTL, cfg.AccessTTL)
	}
	return nil
}

// Argon2id parameters (OWASP's minimum for argon2id: 19 MiB, 2 passes).
const (
	argonTime    = 2
	argonMemory  = 19 * 1024 // KiB
	argonThreads = 1
	argonKeyLen  = 32
)

// hashSlots bounds concurrent hashing: each takes 19 MiB, and a burst of
// sign-ins must not take the process's memory.
var hashSlots = make(chan struct{}, 2)

// ErrHashBusy is a password check or hash that found no free slot within
// its wait: the caller answers "busy, try again" (429, SMTP 454) rather
// than queueing behind other callers' hashes (issue 43).
var ErrHashBusy = errors.New("every password hash slot is busy")

// takeSlot takes a hash slot, waiting at most wait (below 0: as long as
// it takes).
func takeSlot(wait time.Duration) error {
	if wait < 0 {
		hashSlots <- struct{}{}
		return nil
	}
	select {
	case hashSlots <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case hashSlots <- struct{}{}:
		return nil
	case <-t.C:
		return ErrHashBusy
	}
}

// HashPassword returns the argon2id hash of pw in the PHC string format,
// waiting for a hash slot as long as it takes (Admins' routes; anonymous
// routes use HashPasswordWithin).
func HashPassword(pw string) (string, error) { return HashPasswordWithin(pw, -1) }

// HashPasswordWithin is HashPassword waiting at most wait for a hash slot
// (ErrHashBusy after it).
func HashPasswordWithin(pw string, wait time.Duration) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	if err := takeSlot(wait); err != nil {
		return "", err
	}
	sum := argon2.IDKey([]byte(pw), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	<-hashSlots
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
		b64.EncodeToString(salt), b64.EncodeToString(sum)), nil
}

// dummyHash is verified against when a user does not exist, so a sign-in
// takes as long for an unknown user as for a wrong password.
var dummyHash = sync.OnceValue(func() string {
	h, _ := HashPassword("quire-no-such-user")
	return h
})

// VerifyPassword reports whether pw matches hash (HashPassword's
// format); an empty or malformed hash matches nothing, after the same
// work. It waits for a hash slot as long as it takes: callers a client
// can flood use VerifyPasswordWithin.
func VerifyPassword(hash, pw string) bool {
	ok, _ := VerifyPasswordWithin(hash, pw, -1)
	return ok
}

// VerifyPasswordWithin is VerifyPassword waiting at most wait for a hash
// slot: ErrHashBusy after it, with nothing checked.
func VerifyPasswordWithin(hash, pw string, wait time.Duration) (bool, error) {
	if hash == "" {
		hash = dummyHash()
		pw += "\x00" // never matches
	}
	parts := strings.Split(hash, "$")
	var m, t uint32
	var p uint8
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, nil
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m > 256*1024 || t > 10 || p == 0 {
		return false, nil
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	want, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false, nil
	}
	if err := takeSlot(wait); err != nil {
		return false, err
	}
	got := argon2.IDKey([]byte(pw), salt, t, m, p, uint32(len(want)))
	<-hashSlots
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// MaxPasswordBytes is the longest password CheckPassword takes.
const MaxPasswordBytes = 256

// CheckPassword is the password policy: 8 to 256 bytes, not only spaces.
func CheckPassword(pw string) error {
	switch {
	case len(pw) < 8:
		return errors.New("Password does not conform to policy: Password not long enough (at least 8 characters)")
	case len(pw) > MaxPasswordBytes:
		return errors.New("Password does not conform to policy: Password too long (at most 256 bytes)")
	case strings.TrimSpace(pw) == "":
		return errors.New("Password does not conform to policy: Password must not be blank")
	}
	return nil
}

// NewSecret returns n random bytes as URL-safe base64 (refresh tokens,
// sessions, reset codes) and the SHA-256 (hex) it is stored under.
func NewSecret(n int) (secret, hash string) {
	b := make([]byte, n)
	rand.Read(b)
	secret = base64.RawURLEncoding.EncodeToString(b)
	return secret, SecretHash(secret)
}

// SecretHash is how a secret is stored.
func SecretHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// SignUser returns an access or ID token (use "access" or "id") for a
// directory user: the server's own token with the user's groups, marked
// with the user's generation so that Authenticate can check it stands.
func (a *Authenticator) SignUser(use, username, email string, groups []string, generation int) (string, error) {
	now := a.cfg.Now()
	if groups == nil {
		groups = []string{}
	}
	c := jwt.MapClaims{
		"iss":              a.cfg.Issuer,
		"sub":              username,
		"cognito:username": username,
		"cognito:groups":   groups,
		"token_use":        use,
		"quire:gen":        generation,
		"iat":              now.Unix(),
		"nbf":              now.Add(-time.Minute).Unix(),
		"exp":              now.Add(a.cfg.AccessTTL).Unix(),
	}
	if email != "" {
		c["email"] = email
	}
	t := jwt.NewWithClaims(jwt.SigningMethodES256, c)
	ks := a.ks.Load()
	t.Header["kid"] = ks.kid
	return t.SignedString(ks.key)
}

// checkDirectory refuses a directory user's token whose user is gone,
// disabled or of another generation (a password change, a reset, a
// group change).
func (a *Authenticator) checkDirectory(p *Principal) error {
	if p.dirGen == 0 {
		return nil
	}
	if a.cfg.Directory == nil {
		return errUnauthorized
	}
	gen, enabled, err := a.cfg.Directory.UserGeneration(p.Username)
	if err != nil || !enabled || gen != p.dirGen {
		return errUnauthorized
	}
	return nil
}

// dirGeneration is a directory token's generation claim (0: none).
func dirGeneration(c jwt.MapClaims) int {
	f, ok := c["quire:gen"].(float64)
	if !ok || f < 1 {
		return 0
	}
	return int(f)
}

// Session is a short-lived signed value for a sign-in challenge
// (NEW_PASSWORD_REQUIRED): the user and generation, valid 5 minutes.
func (a *Authenticator) Session(username string, generation int) string {
	exp := a.cfg.Now().Add(5 * time.Minute).Unix()
	payload := fmt.Sprintf("%s\x00%d\x00%d", username, generation, exp)
	sig := SignURL(a.URLKey(), "session", payload)
	return base64.RawURLEncoding.EncodeToString([]byte(payload)) + "." + sig
}

// CheckSession returns the user and generation of a valid session.
func (a *Authenticator) CheckSession(s string) (string, int, bool) {
	enc, sig, ok := strings.Cut(s, ".")
	if !ok {
		return "", 0, false
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || !a.VerifyURL(sig, "session", string(raw)) {
		return "", 0, false
	}
	parts := strings.Split(string(raw), "\x00")
	if len(parts) != 3 {
		return "", 0, false
	}
	var gen int
	var exp int64
	if _, err := fmt.Sscan(parts[1], &gen); err != nil {
		return "", 0, false
	}
	if _, err := fmt.Sscan(parts[2], &exp); err != nil || a.cfg.Now().Unix() > exp {
		return "", 0, false
	}
	return parts[0], gen, true
}
