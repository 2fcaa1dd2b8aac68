package cluster

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Join tokens (see DESIGN.md, "Join tokens"): stateless, signed with the
// CA's join key (HMAC-SHA256), expiring, single use on the member that
// redeems them.
const (
	DefaultJoinTokenTTL = time.Hour
	MaxJoinTokenTTL     = 24 * time.Hour
	joinTokenPrefix     = "quirejoin1."
)

// ErrJoinToken is wrapped by every refusal of a join token. The HTTP
// layer answers all of them alike (and counts them for rate limiting).
var ErrJoinToken = errors.New("cluster: join token refused")

// JoinTokenInfo is what a join token says in the clear: which cluster
// (its CA's fingerprint) and until when. A new node reads it to check the
// CA it is handed; only the cluster can check the signature.
type JoinTokenInfo struct {
	CAFingerprint string    `json:"ca"`
	Expires       time.Time `json:"-"`
	ExpiresUnix   int64     `json:"exp"`
	IssuedUnix    int64     `json:"iat"`
	Nonce         string    `json:"n"`
}

// JoinBundle is what Redeem hands a new node: its certificate and the
// CA's, both PEM-encoded.
type JoinBundle struct {
	NodeID    string `json:"nodeId"`
	CertPEM   []byte `json:"cert"`
	CACertPEM []byte `json:"caCert"`
}

// IssueJoinToken returns a token that a new node trades for its
// certificate (Redeem) until ttl passes (0: DefaultJoinTokenTTL; at most
// MaxJoinTokenTTL). The token is a bearer secret: whoever holds it can
// join until it expires or is redeemed.
func (ca *CA) IssueJoinToken(ttl time.Duration) (string, error) {
	if ttl == 0 {
		ttl = DefaultJoinTokenTTL
	}
	if ttl < 0 || ttl > MaxJoinTokenTTL {
		return "", fmt.Errorf("cluster: a join token lives between 1s and %v, not %v", MaxJoinTokenTTL, ttl)
	}
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	now := ca.now()
	info := JoinTokenInfo{
		CAFingerprint: ca.Fingerprint(),
		IssuedUnix:    now.Unix(),
		ExpiresUnix:   now.Add(ttl).Unix(),
		Nonce:         hex.EncodeToString(nonce),
	}
	payload, err := json.Marshal(info)
	if err != nil {
		return "", err
	}
	p := base64.RawURLEncoding.EncodeToString(payload)
	return joinTokenPrefix + p + "." + base64.RawURLEncoding.EncodeToString(ca.joinMAC(p)), nil
}

func (ca *CA) joinMAC(payload string) []byte {
	m := hmac.New(sha256.New, ca.joinKey)
	m.Write([]byte(joinTokenPrefix + payload))
	return m.Sum(nil)
}

// ParseJoinToken reads a token's clear part without checking its
// signature (a new node cannot: it has no key). It checks the form only.
func ParseJoinToken(token string) (JoinTokenInfo, error) {
	info, _, _, err := parseJoinToken(token)
	return info, err
}

func parseJoinToken(token string) (JoinTokenInfo, string, []byte, error) {
	var info JoinTokenInfo
	rest, ok := strings.CutPrefix(strings.TrimSpace(token), joinTokenPrefix)
	if !ok {
		return info, "", nil, fmt.Errorf("%w: not a Quire join token", ErrJoinToken)
	}
	p, s, ok := strings.Cut(rest, ".")
	if !ok {
		return info, "", nil, fmt.Errorf("%w: malformed", ErrJoinToken)
	}
	payload, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return info, "", nil, fmt.Errorf("%w: malformed", ErrJoinToken)
	}
	sig, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return info, "", nil, fmt.Errorf("%w: malformed", ErrJoinToken)
	}
	if err := json.Unmarshal(payload, &info); err != nil || info.CAFingerprint == "" || info.Nonce == "" || info.ExpiresUnix == 0 {
		return JoinTokenInfo{}, "", nil, fmt.Errorf("%w: malformed", ErrJoinToken)
	}
	info.Expires = time.Unix(info.ExpiresUnix, 0)
	return info, p, sig, nil
}

// Redeem checks a join token and signs the new node's certificate
// request (see SignCSR): the token must be signed by this cluster's join
// key, name this cluster's CA, be unexpired and not redeemed on this
// member before. A token whose certificate request is refused is not
// spent. Every refusal of the token wraps ErrJoinToken.
func (ca *CA) Redeem(token string, csrDER []byte) (*JoinBundle, error) {
	info, p, sig, err := parseJoinToken(token)
	if err != nil {
		return nil, err
	}
	if !hmac.Equal(sig, ca.joinMAC(p)) {
		if info.CAFingerprint != ca.Fingerprint() {
			return nil, fmt.Errorf("%w: issued by another cluster", ErrJoinToken)
		}
		return nil, fmt.Errorf("%w: bad signature", ErrJoinToken)
	}
	if info.CAFingerprint != ca.Fingerprint() { // signed by our key: cannot happen unless the key is shared
		return nil, fmt.Errorf("%w: issued by another cluster", ErrJoinToken)
	}
	now := ca.now()
	if !now.Before(info.Expires) {
		return nil, fmt.Errorf("%w: expired at %s", ErrJoinToken, info.Expires.UTC().Format(time.RFC3339))
	}
	if info.ExpiresUnix-info.IssuedUnix > int64(MaxJoinTokenTTL/time.Second) {
		return nil, fmt.Errorf("%w: lifetime over %v", ErrJoinToken, MaxJoinTokenTTL)
	}

	ca.mu.Lock()
	defer ca.mu.Unlock()
	for n, exp := range ca.redeemed { // forget spent tokens once they expired anyway
		if !now.Before(exp) {
			delete(ca.redeemed, n)
		}
	}
	if _, spent := ca.redeemed[info.Nonce]; spent {
		return nil, fmt.Errorf("%w: already redeemed", ErrJoinToken)
	}
	certPEM, nodeID, err := ca.SignCSR(csrDER)
	if err != nil {
		return nil, err
	}
	ca.redeemed[info.Nonce] = info.Expires
	return &JoinBundle{NodeID: nodeID, CertPEM: certPEM, CACertPEM: ca.CertPEM()}, nil
}
