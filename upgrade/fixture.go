// Package upgrade proves that a data directory and a backup written by an
// older release work in the current one. The fixture in testdata/ was
// written by the release pinned in the Makefile (UPGRADE_FROM), built
// from this repository's history by `make upgrade-fixture`
// (upgrade/mkfixture); the tests in this package start the current
// build on it, restore its backup and install .deb packages over each
// other. Populate is what the old release was asked to store, and the
// Manifest it returns is what the tests look for.
package upgrade

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"net/url"
	"strings"
	"time"

	pkcs12 "software.sslmate.com/src/go-pkcs12"
)

// Manifest is what the old release wrote into the fixture.
type Manifest struct {
	Commit     string `json:"commit"`     // the pinned commit the old binary was built from
	OldVersion string `json:"oldVersion"` // its `quire version`
	Written    string `json:"written"`    // when the fixture was made (UTC)
	// Documents of site default (and finance, for Ann).
	Documents []Document `json:"documents"`
	// Attributes defined on site default: key -> dataType.
	Attributes map[string]string `json:"attributes"`
	// Users of the built-in directory, each with the password they set.
	Users []User `json:"users"`
	// APIKey of site default (READ, WRITE), named APIKeyName.
	APIKey     string `json:"apiKey"`
	APIKeyName string `json:"apiKeyName"`
	// Webhooks: id -> name.
	Webhooks map[string]string `json:"webhooks"`
	// Secrets of site default: alias -> SHA-256 fingerprint.
	Secrets map[string]string `json:"secrets"`
	// Backup is the archive's name in the fixture, made by the old
	// release while it served.
	Backup string `json:"backup"`
}

// Document is one document the old release stored.
type Document struct {
	Site        string `json:"site"`
	ID          string `json:"documentId"`
	Path        string `json:"path"`
	ContentType string `json:"contentType"`
	// Content is the current content when Size is 0; otherwise the content
	// is Size bytes with SHA256 (an upload in several chunks).
	Content string `json:"content,omitempty"`
	Size    int64  `json:"size,omitempty"`
	SHA256  string `json:"sha256,omitempty"`
	// Versions is how many versions the document has; OldContent the
	// first version's content when it has more than one.
	Versions   int    `json:"versions"`
	OldContent string `json:"oldContent,omitempty"`
	// Word is a word only this document's current content holds: a
	// fulltext search for it finds the document ("": not text).
	Word string            `json:"word"`
	Tags map[string]string `json:"tags,omitempty"`
	// Attributes: key -> the value as the API answers it (fmt %v of the
	// stringValue, numberValue or booleanValue).
	Attributes map[string]string `json:"attributes,omitempty"`
}

// User is a user of the built-in directory.
type User struct {
	Name     string `json:"name"`
	Password string `json:"password"`
	Site     string `json:"site"` // a site the user's groups reach
}

// Client is a minimal API client.
type Client struct {
	Base  string
	Token string
	HTTP  *http.Client
}

// Do sends a JSON request and returns the status and body.
func (c *Client) Do(method, path string, body any, tok string) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.Base+path, r)
	if err != nil {
		return 0, nil, err
	}
	if tok != "" {
		req.Header.Set("Authorization", tok)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: time.Minute}
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// call is Do with the admin token, wanting status want (0: any 2xx); out, when set,
// receives the JSON answer.
func (c *Client) call(method, path string, body any, want int, out any) error {
	st, b, err := c.Do(method, path, body, c.Token)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if st != want && (want != 0 || st/100 != 2) {
		return fmt.Errorf("%s %s: %d %s, want %d", method, path, st, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("%s %s: %w (%s)", method, path, err, b)
		}
	}
	return nil
}

// BigContent is the uploaded document's content: size bytes of text lines
// starting with word. Few distinct words (the fixture's index stays
// small) and compressible, yet no two 1 MiB chunks alike (the line
// pattern repeats every 97*89 lines, not a divisor of a chunk).
func BigContent(word string, size int) []byte {
	var b bytes.Buffer
	b.WriteString(word + "\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "line a%d b%d of the long scan, kept across releases\n", i%97, i%89)
	}
	return b.Bytes()[:size]
}

// AddUser is how Populate makes a user: the old binary's `quire user
// add` (name, groups, temporary password), given by the fixture maker.
type AddUser func(name, groups, password string) error

// Populate stores the fixture's documents, versions, typed attributes,
// tags, a user with their own password, an API key, a webhook and a
// secret through the API at c (an Admins token), and says what it stored.
func Populate(c *Client, addUser AddUser) (*Manifest, error) {
	m := &Manifest{Attributes: map[string]string{}, Webhooks: map[string]string{}, Secrets: map[string]string{}}
	for _, a := range []struct{ key, typ string }{{"invoiceNo", "STRING"}, {"amount", "NUMBER"}, {"paid", "BOOLEAN"}} {
		if err := c.call("POST", "/attributes", map[string]any{"attribute": map[string]any{"key": a.key, "dataType": a.typ}}, http.StatusCreated, nil); err != nil {
			return nil, err
		}
		m.Attributes[a.key] = a.typ
	}

	// A letter in two versions, with tags and typed attributes.
	var created struct {
		DocumentID string `json:"documentId"`
	}
	letter := Document{Site: "default", Path: "letters/hello.txt", ContentType: "text/plain",
		OldContent: "first edition of the letter, zebracorn", Content: "second edition of the letter, quasarfig",
		Word: "quasarfig", Versions: 2,
		Tags:       map[string]string{"category": "letters", "status": "filed"},
		Attributes: map[string]string{"invoiceNo": "INV-7", "amount": "12.5", "paid": "true"}}
	if err := c.call("POST", "/documents", map[string]any{"path": letter.Path, "contentType": letter.ContentType, "content": letter.OldContent,
		"tags":       []map[string]string{{"key": "category", "value": "letters"}},
		"attributes": []map[string]any{{"key": "invoiceNo", "stringValue": "INV-7"}, {"key": "amount", "numberValue": 12.5}, {"key": "paid", "booleanValue": true}},
	}, http.StatusCreated, &created); err != nil {
		return nil, err
	}
	letter.ID = created.DocumentID
	if err := c.call("PATCH", "/documents/"+letter.ID, map[string]any{"content": letter.Content, "contentType": "text/plain"}, http.StatusOK, nil); err != nil {
		return nil, err
	}
	if err := c.call("POST", "/documents/"+letter.ID+"/tags", map[string]any{"tags": []map[string]string{{"key": "status", "value": "filed"}}}, http.StatusCreated, nil); err != nil {
		return nil, err
	}
	m.Documents = append(m.Documents, letter)

	// A ledger of site finance, which Ann's group reaches.
	ledger := Document{Site: "finance", Path: "ledgers/q3.txt", ContentType: "text/plain", Content: "quarterly ledger, nebulaplum", Word: "nebulaplum", Versions: 1}
	if err := c.call("POST", "/documents?siteId=finance", map[string]any{"path": ledger.Path, "contentType": ledger.ContentType, "content": ledger.Content}, http.StatusCreated, &created); err != nil {
		return nil, err
	}
	ledger.ID = created.DocumentID
	m.Documents = append(m.Documents, ledger)

	// A large upload through a signed URL: content in several chunks (not
	// text: its fulltext index would outweigh the rest of the fixture).
	big := BigContent("lighthousekeeper", 2<<20+12345)
	sum := sha256.Sum256(big)
	// Its versions are counted below: the upload's empty placeholder is one.
	scan := Document{Site: "default", Path: "scans/long.bin", ContentType: "application/octet-stream", Size: int64(len(big)), SHA256: hex.EncodeToString(sum[:])}
	var up struct {
		DocumentID string `json:"documentId"`
		URL        string `json:"url"`
	}
	if err := c.call("POST", "/documents/upload", map[string]any{"path": scan.Path, "contentType": scan.ContentType}, 0, &up); err != nil {
		return nil, err
	}
	u, err := url.Parse(up.URL)
	if err != nil {
		return nil, err
	}
	// The URL names the server's public URL: send it to c's address.
	req, _ := http.NewRequest("PUT", c.Base+u.RequestURI(), bytes.NewReader(big))
	req.Header.Set("Content-Type", scan.ContentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("upload: %s", resp.Status)
	}
	scan.ID = up.DocumentID
	m.Documents = append(m.Documents, scan)

	// Ann: a user of site finance who set her own password.
	ann := User{Name: "ann", Password: "Ann-own-pass-2", Site: "finance"}
	if err := addUser(ann.Name, "finance", "Temporary-pass-1"); err != nil {
		return nil, err
	}
	var ch struct {
		Session string `json:"Session"`
	}
	if err := c.call("POST", "/login", map[string]any{"username": ann.Name, "password": "Temporary-pass-1"}, http.StatusOK, &ch); err != nil {
		return nil, err
	}
	if err := c.call("POST", "/respondToAuthChallenge", map[string]any{"username": ann.Name, "newPassword": ann.Password, "session": ch.Session}, http.StatusOK, nil); err != nil {
		return nil, err
	}
	m.Users = append(m.Users, ann)

	// A scanner's API key.
	var key struct {
		APIKey string `json:"apiKey"`
	}
	m.APIKeyName = "scanner"
	if err := c.call("POST", "/sites/default/apiKeys", map[string]any{"name": m.APIKeyName, "permissions": []string{"READ", "WRITE"}}, 0, &key); err != nil {
		return nil, err
	}
	m.APIKey = key.APIKey

	// A webhook.
	var hook struct {
		WebhookID string `json:"webhookId"`
	}
	if err := c.call("POST", "/webhooks", map[string]any{"name": "intake"}, http.StatusCreated, &hook); err != nil {
		return nil, err
	}
	m.Webhooks[hook.WebhookID] = "intake"

	// A signing certificate in the secrets store.
	p12, err := selfSignedPKCS12("Nora Notary", "pw1")
	if err != nil {
		return nil, err
	}
	var sec struct {
		Fingerprint string `json:"fingerprint"`
	}
	if err := c.call("POST", "/sites/default/secrets", map[string]any{"alias": "notary", "type": "PKCS12", "data": base64.StdEncoding.EncodeToString(p12), "password": "pw1"}, http.StatusCreated, &sec); err != nil {
		return nil, err
	}
	m.Secrets["notary"] = sec.Fingerprint
	// Versions as the old release lists them.
	for i, d := range m.Documents {
		var vs struct {
			Documents []json.RawMessage `json:"documents"`
		}
		q := ""
		if d.Site != "default" {
			q = "?siteId=" + d.Site
		}
		if err := c.call("GET", "/documents/"+d.ID+"/versions"+q, nil, http.StatusOK, &vs); err != nil {
			return nil, err
		}
		if d.Versions != 0 && d.Versions != len(vs.Documents) {
			return nil, fmt.Errorf("%s has %d versions, want %d", d.Path, len(vs.Documents), d.Versions)
		}
		m.Documents[i].Versions = len(vs.Documents)
	}
	if m.APIKey == "" || hook.WebhookID == "" || sec.Fingerprint == "" || strings.TrimSpace(letter.ID) == "" {
		return nil, fmt.Errorf("an answer lacked its id: %+v", m)
	}
	return m, nil
}

// selfSignedPKCS12 is a self-signed signing certificate for cn with its
// key, as a PKCS #12 file.
func selfSignedPKCS12(cn, password string) ([]byte, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().AddDate(20, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return pkcs12.Modern.Encode(key, cert, nil, password)
}
