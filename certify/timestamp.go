package certify

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"time"
)

// TSA is an RFC 3161 time-stamping authority. With one in Options, each
// signature carries a timestamp token over its signature value (the
// signatureTimeStampToken unsigned attribute of RFC 3161 appendix A), so
// a verifier knows the signature existed at the TSA's time even after the
// signer's certificate expires.
type TSA struct {
	URL string // http(s) URL; user:password@ in it is sent as basic auth
	// Client defaults to one with a 30 s timeout.
	Client *http.Client
	// Roots, when set, are the authorities the TSA's certificate must
	// chain to; otherwise the token's signature is checked but not whom
	// it comes from.
	Roots *x509.CertPool
}

// TSAError is a timestamp Quire could not get: the authority is
// unreachable, refused the request or answered with a token that does
// not verify.
type TSAError struct{ Err error }

func (e *TSAError) Error() string { return "timestamp authority: " + e.Err.Error() }
func (e *TSAError) Unwrap() error { return e.Err }

var (
	oidTimeStampToken = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 2, 14}
	oidTSTInfo        = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 16, 1, 4}
)

type algorithm struct {
	Algorithm  asn1.ObjectIdentifier
	Parameters asn1.RawValue `asn1:"optional"`
}

type messageImprint struct {
	HashAlgorithm algorithm
	HashedMessage []byte
}

type timeStampReq struct {
	Version        int
	MessageImprint messageImprint
	Nonce          *big.Int `asn1:"optional"`
	CertReq        bool     `asn1:"optional"`
}

type pkiStatusInfo struct {
	Status       int
	StatusString asn1.RawValue  `asn1:"optional"`
	FailInfo     asn1.BitString `asn1:"optional"`
}

type timeStampResp struct {
	Status pkiStatusInfo
	Token  asn1.RawValue `asn1:"optional"`
}

// maxTSAReply bounds what is read of an authority's answer.
const maxTSAReply = 64 << 10

// stamp asks the authority for a token over sig and checks it.
func (t *TSA) stamp(sig []byte) ([]byte, error) {
	imprint := sha256.Sum256(sig)
	nonce, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 63))
	if err != nil {
		return nil, err
	}
	req, err := asn1.Marshal(timeStampReq{
		Version:        1,
		MessageImprint: messageImprint{HashAlgorithm: algorithm{Algorithm: oidSHA256, Parameters: asn1.NullRawValue}, HashedMessage: imprint[:]},
		Nonce:          nonce,
		CertReq:        true,
	})
	if err != nil {
		return nil, err
	}
	client := t.Client
	if client == nil {
		client = &http.Client{Timeout: 30 * time.Second}
	}
	hreq, err := http.NewRequest(http.MethodPost, t.URL, bytes.NewReader(req))
	if err != nil {
		return nil, &TSAError{err}
	}
	hreq.Header.Set("Content-Type", "application/timestamp-query")
	if u := hreq.URL.User; u != nil {
		pw, _ := u.Password()
		hreq.SetBasicAuth(u.Username(), pw)
	}
	resp, err := client.Do(hreq)
	if err != nil {
		return nil, &TSAError{err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTSAReply+1))
	if err != nil {
		return nil, &TSAError{err}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &TSAError{fmt.Errorf("HTTP %d", resp.StatusCode)}
	}
	if len(body) > maxTSAReply {
		return nil, &TSAError{errors.New("reply over 64 KiB")}
	}
	var tr timeStampResp
	if rest, err := asn1.Unmarshal(body, &tr); err != nil || len(rest) > 0 {
		return nil, &TSAError{errors.New("reply is not a TimeStampResp")}
	}
	// 0 granted, 1 granted with modifications.
	if tr.Status.Status > 1 || len(tr.Token.FullBytes) == 0 {
		return nil, &TSAError{fmt.Errorf("request refused (status %d)", tr.Status.Status)}
	}
	info, err := verifyToken(tr.Token.FullBytes, sig, t.Roots)
	if err != nil {
		return nil, &TSAError{err}
	}
	if info.nonce == nil || info.nonce.Cmp(nonce) != 0 {
		return nil, &TSAError{errors.New("the token does not answer this request (nonce)")}
	}
	return tr.Token.FullBytes, nil
}

// tstInfo is what Quire reads of a token's TSTInfo.
type tstInfo struct {
	imprint messageImprint
	genTime time.Time
	nonce   *big.Int
}

// parseTSTInfo reads a TSTInfo: version, policy, messageImprint,
// serialNumber, genTime, then optional accuracy, ordering, nonce, tsa
// and extensions, told apart by their tags.
func parseTSTInfo(der []byte) (tstInfo, error) {
	var seq asn1.RawValue
	if _, err := asn1.Unmarshal(der, &seq); err != nil || seq.Tag != asn1.TagSequence {
		return tstInfo{}, errors.New("bad TSTInfo")
	}
	var out tstInfo
	var version int
	var policy asn1.ObjectIdentifier
	var serial *big.Int
	rest := seq.Bytes
	var err error
	for i, v := range []any{&version, &policy, &out.imprint, &serial} {
		if rest, err = asn1.Unmarshal(rest, v); err != nil {
			return tstInfo{}, fmt.Errorf("bad TSTInfo field %d: %w", i, err)
		}
	}
	if rest, err = asn1.UnmarshalWithParams(rest, &out.genTime, "generalized"); err != nil {
		return tstInfo{}, fmt.Errorf("bad TSTInfo genTime: %w", err)
	}
	for len(rest) > 0 {
		var f asn1.RawValue
		if rest, err = asn1.Unmarshal(rest, &f); err != nil {
			return tstInfo{}, errors.New("bad TSTInfo")
		}
		if f.Class == asn1.ClassUniversal && f.Tag == asn1.TagInteger {
			out.nonce = new(big.Int)
			if _, err := asn1.Unmarshal(f.FullBytes, &out.nonce); err != nil {
				return tstInfo{}, errors.New("bad TSTInfo nonce")
			}
		}
	}
	return out, nil
}

// verifyToken checks a timestamp token (a CMS SignedData of a TSTInfo)
// against the signature value it stamps: the imprint is SHA-256 of sig,
// the token's own signature verifies, and with roots its signer chains
// to them for time stamping.
func verifyToken(token, sig []byte, roots *x509.CertPool) (tstInfo, error) {
	var ci contentInfo
	if rest, err := asn1.Unmarshal(token, &ci); err != nil || len(rest) > 0 || !ci.ContentType.Equal(oidSignedData) {
		return tstInfo{}, errors.New("the token is not a CMS SignedData")
	}
	var sd signedData
	if _, err := asn1.Unmarshal(ci.Content.Bytes, &sd); err != nil {
		return tstInfo{}, fmt.Errorf("token: %w", err)
	}
	var encap struct {
		Type    asn1.ObjectIdentifier
		Content []byte `asn1:"explicit,tag:0"`
	}
	if _, err := asn1.Unmarshal(sd.EncapContentInfo.FullBytes, &encap); err != nil || !encap.Type.Equal(oidTSTInfo) {
		return tstInfo{}, errors.New("the token holds no TSTInfo")
	}
	info, err := parseTSTInfo(encap.Content)
	if err != nil {
		return tstInfo{}, err
	}
	want := sha256.Sum256(sig)
	if !info.imprint.HashAlgorithm.Algorithm.Equal(oidSHA256) || !bytes.Equal(info.imprint.HashedMessage, want[:]) {
		return tstInfo{}, errors.New("the token stamps other data (message imprint)")
	}
	signer, _, err := verifySignedData(sd, encap.Content)
	if err != nil {
		return tstInfo{}, fmt.Errorf("token signature: %w", err)
	}
	if roots != nil {
		inter := x509.NewCertPool()
		certs, _ := x509.ParseCertificates(sd.Certificates.Bytes)
		for _, c := range certs {
			inter.AddCert(c)
		}
		if _, err := signer.Verify(x509.VerifyOptions{Roots: roots, Intermediates: inter,
			CurrentTime: info.genTime, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageTimeStamping}}); err != nil {
			return tstInfo{}, fmt.Errorf("token signer: %w", err)
		}
	}
	return info, nil
}

// addUnsignedAttr returns the CMS SignedData der with attr (type and
// one value) added as an unsigned attribute of its only signer.
func addUnsignedAttr(der []byte, typ asn1.ObjectIdentifier, value []byte) ([]byte, error) {
	var ci contentInfo
	if _, err := asn1.Unmarshal(der, &ci); err != nil {
		return nil, err
	}
	var sd signedData
	if _, err := asn1.Unmarshal(ci.Content.Bytes, &sd); err != nil {
		return nil, err
	}
	if len(sd.SignerInfos) != 1 || len(sd.SignerInfos[0].UnsignedAttrs.FullBytes) > 0 {
		return nil, errors.New("certify: unexpected signer infos")
	}
	a, err := asn1.Marshal(struct {
		Type   asn1.ObjectIdentifier
		Values asn1.RawValue
	}{typ, asn1.RawValue{Class: asn1.ClassUniversal, Tag: asn1.TagSet, IsCompound: true, Bytes: value}})
	if err != nil {
		return nil, err
	}
	sd.SignerInfos[0].UnsignedAttrs = asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 1, IsCompound: true, Bytes: a}
	sdDER, err := asn1.Marshal(sd)
	if err != nil {
		return nil, err
	}
	// A RawValue is written with its own tag: the explicit [0] by hand.
	return asn1.Marshal(contentInfo{ContentType: oidSignedData, Content: asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 0, IsCompound: true, Bytes: sdDER}})
}

// signatureTimestamp finds a signer's timestamp token and checks it.
func signatureTimestamp(si signerInfo) (time.Time, bool, error) {
	rest := si.UnsignedAttrs.Bytes
	for len(rest) > 0 {
		var a attribute
		var err error
		if rest, err = asn1.Unmarshal(rest, &a); err != nil {
			return time.Time{}, false, errors.New("bad unsigned attributes")
		}
		if !a.Type.Equal(oidTimeStampToken) {
			continue
		}
		info, err := verifyToken(a.Values.Bytes, si.Signature, nil)
		if err != nil {
			return time.Time{}, true, fmt.Errorf("timestamp: %w", err)
		}
		return info.genTime, true, nil
	}
	return time.Time{}, false, nil
}
