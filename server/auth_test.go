package server_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"quire/auth"
	"quire/node"
	"quire/quiretest"
	"quire/server/internal/servertest"
)

func TestAuth_Matrix(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	docDefault := servertest.AddDoc(t, s, admin, "", map[string]any{"content": "d"})
	docFinance := servertest.AddDoc(t, s, admin, "?siteId=finance", map[string]any{"content": "f"})

	otherKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	forged, _ := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{
		"iss": "quire", "cognito:username": "mallory", "cognito:groups": []string{"Admins"},
		"exp": time.Now().Add(time.Hour).Unix(),
	}).SignedString(otherKey)
	hdr := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT"}`))
	pay := base64.RawURLEncoding.EncodeToString([]byte(`{"iss":"quire","cognito:username":"x","cognito:groups":["Admins"]}`))
	unsigned := hdr + "." + pay + "."
	expired, err := auth.SignToken(s.DataDir, "", "old", []string{"Admins"}, -time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	wrongIss, err := auth.SignToken(s.DataDir, "someone-else", "x", []string{"Admins"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, method, path, token string
		body                      any
		want                      int
		resp                      string
	}{
		{"no token", "GET", "/documents/" + docDefault, "", nil, 401, `{"message":"Unauthorized"}`},
		{"garbage token", "GET", "/documents/" + docDefault, "not-a-token", nil, 401, `{"message":"Unauthorized"}`},
		{"forged", "GET", "/documents/" + docDefault, forged, nil, 401, `{"message":"Unauthorized"}`},
		{"alg none", "GET", "/documents/" + docDefault, unsigned, nil, 401, `{"message":"Unauthorized"}`},
		{"expired", "GET", "/documents/" + docDefault, expired, nil, 401, `{"message":"Unauthorized"}`},
		{"wrong issuer", "GET", "/documents/" + docDefault, wrongIss, nil, 401, `{"message":"Unauthorized"}`},
		{"bearer prefix", "GET", "/documents/" + docDefault, "Bearer " + admin, nil, 200, ""},
		{"site group reads", "GET", "/documents/" + docDefault, s.Token("ann", "default"), nil, 200, ""},
		{"read-only group reads", "GET", "/documents/" + docFinance + "?siteId=finance", s.Token("ann", "finance_read"), nil, 200, ""},
		{"read-only group cannot write", "POST", "/documents?siteId=finance", s.Token("ann", "finance_read"), map[string]any{"content": "x"}, 401, `{"message":"fkq access denied (groups: finance (READ))"}`},
		{"read-only group cannot delete", "DELETE", "/documents/" + docFinance + "?siteId=finance", s.Token("ann", "finance_read"), nil, 401, `{"message":"fkq access denied (groups: finance (READ))"}`},
		{"other site", "GET", "/documents/" + docFinance + "?siteId=finance", s.Token("ann", "default"), nil, 401, `{"message":"fkq access denied to siteId (finance)"}`},
		{"single group picks the site", "GET", "/documents/" + docFinance, s.Token("ann", "finance"), nil, 200, ""},
		{"reserved site", "GET", "/documents?siteId=API_KEY", admin, nil, 401, `{"message":"'API_KEY' siteId is reserved"}`},
		{"govern group writes", "POST", "/documents?siteId=finance", s.Token("ann", "finance_govern"), map[string]any{"content": "x"}, 201, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(tt.method, tt.path, tt.body, tt.token)
			servertest.MustStatus(t, r, tt.want)
			if tt.resp != "" {
				servertest.MustBody(t, r, tt.resp)
			}
		})
	}
}

func TestAuth_APIKeys(t *testing.T) {
	s := quiretest.NewServer(t)
	admin := s.Admin()
	for _, site := range []string{"default", "finance"} {
		t.Run(site, func(t *testing.T) {
			r := s.Do(http.MethodPost, "/sites/"+site+"/apiKeys", map[string]any{"name": "scanner", "permissions": []string{"READ", "WRITE"}}, admin)
			servertest.MustStatus(t, r, http.StatusOK)
			key := quiretest.Str(t, r.JSON(t), "apiKey")
			if strings.Count(key, ".") != 0 || len(key) < 32 {
				t.Fatalf("apiKey = %q", key)
			}
			id := servertest.AddDoc(t, s, key, "?siteId="+site, map[string]any{"content": "scanned"})
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents/"+id+"?siteId="+site, nil, key), http.StatusOK)
			servertest.MustStatus(t, s.Do(http.MethodDelete, "/documents/"+id+"?siteId="+site, nil, key), http.StatusUnauthorized)
			other := "finance"
			if site == "finance" {
				other = "default"
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents?siteId="+other, nil, key), http.StatusUnauthorized)
			l := s.Do(http.MethodGet, "/sites/"+site+"/apiKeys", nil, admin)
			servertest.MustStatus(t, l, http.StatusOK)
			keys := quiretest.List(t, l.JSON(t), "apiKeys")
			if len(keys) != 1 || strings.Contains(string(l.Body), key) {
				t.Fatalf("listing = %s (must show the key masked)", l.Body)
			}
			servertest.MustStatus(t, s.Do(http.MethodGet, "/sites/"+site+"/apiKeys", nil, s.Token("ann", site)), http.StatusUnauthorized)
			d := s.Do(http.MethodDelete, "/sites/"+site+"/apiKeys/"+key, nil, admin)
			servertest.MustBody(t, d, `{"message":"ApiKey deleted"}`)
			servertest.MustStatus(t, s.Do(http.MethodGet, "/documents?siteId="+site, nil, key), http.StatusUnauthorized)
			v := s.Do(http.MethodPost, "/sites/"+site+"/apiKeys", map[string]any{}, admin)
			servertest.MustStatus(t, v, http.StatusBadRequest)
			servertest.MustBody(t, v, `{"errors":[{"key":"name","error":"'name' is required"}]}`)
		})
	}
}

func TestSitesVersionHealthCORS(t *testing.T) {
	s := quiretest.NewServer(t)
	r := s.Do(http.MethodGet, "/sites", nil, s.Token("ann", "default", "finance_read"))
	servertest.MustStatus(t, r, http.StatusOK)
	b := r.JSON(t)
	if b["username"] != "ann" {
		t.Fatalf("username = %v", b["username"])
	}
	sites := quiretest.List(t, b, "sites")
	if len(sites) != 2 {
		t.Fatalf("sites = %s", r.Body)
	}
	def, fin := quiretest.Obj(t, sites[0]), quiretest.Obj(t, sites[1])
	if def["siteId"] != "default" || def["permission"] != "READ_WRITE" || fin["siteId"] != "finance" || fin["permission"] != "READ_ONLY" {
		t.Fatalf("sites = %s", r.Body)
	}
	v := s.Do(http.MethodGet, "/version", nil, s.Admin())
	servertest.MustStatus(t, v, http.StatusOK)
	var ver struct {
		Version *string `json:"version"`
		Type    string  `json:"type"`
	}
	if err := json.Unmarshal(v.Body, &ver); err != nil || ver.Version == nil || *ver.Version != node.Version || ver.Type != "core" {
		t.Fatalf("version = %s (%v), want version %q, type core", v.Body, err, node.Version)
	}
	h := s.Do(http.MethodGet, "/healthz", nil, "")
	servertest.MustStatus(t, h, http.StatusOK)
	if h.Header.Get("Access-Control-Allow-Origin") != "*" || h.Header.Get("Access-Control-Allow-Methods") != "*" || h.Header.Get("Access-Control-Allow-Headers") == "" {
		t.Fatalf("CORS headers missing: %v", h.Header)
	}
	o := s.Do(http.MethodOptions, "/documents", nil, "")
	servertest.MustStatus(t, o, http.StatusOK)
	if o.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("OPTIONS without CORS: %v", o.Header)
	}
	nf := s.Do(http.MethodGet, "/nothing/here", nil, s.Admin())
	servertest.MustStatus(t, nf, http.StatusNotFound)
	servertest.MustBody(t, nf, `{"message":"/nothing/here request handler not found"}`)
}
