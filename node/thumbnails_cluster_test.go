package node_test

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"net/http"
	"path"
	"testing"
	"time"

	"quire/quiretest"
)

// TestCluster_ThumbnailsReachEveryMember: the leader's pipeline makes a
// new image's thumbnail once (a command in the log), and every member
// then lists the same THUMBNAIL artifact and serves the same PNG through
// its listing's thumbnailUrl, whichever member took the upload.
func TestCluster_ThumbnailsReachEveryMember(t *testing.T) {
	t.Parallel() // in-process cluster of its own: see TestMain
	leader, fs := startCluster(t)
	all := []*quiretest.Server{leader, fs[0], fs[1]}
	img := base64.StdEncoding.EncodeToString(quiretest.PNG(quiretest.TextImage("Hi")))
	r := fs[0].Do(http.MethodPost, "/documents", map[string]any{"path": "scans/hi.png", "contentType": "image/png", "isBase64": true, "content": img}, fs[0].Admin())
	if r.Status != http.StatusCreated {
		t.Fatalf("create through a follower: %d %s", r.Status, r.Body)
	}
	doc := quiretest.Str(t, r.JSON(t), "documentId")

	// thumbnails lists the document's THUMBNAIL artifact ids on s.
	thumbnails := func(s *quiretest.Server) []string {
		r := s.Do(http.MethodGet, "/documents/"+doc+"/artifacts?artifactCategory=THUMBNAIL", nil, s.Admin())
		if r.Status != http.StatusOK {
			t.Fatalf("artifacts on %s: %d %s", s.Node.Cluster.ID(), r.Status, r.Body)
		}
		var ids []string
		for _, x := range quiretest.List(t, r.JSON(t), "documents") {
			ids = append(ids, quiretest.Str(t, quiretest.Obj(t, x), "artifactId"))
		}
		return ids
	}
	quiretest.Eventually(t, "the thumbnail on every member", 60*time.Second, func() bool {
		for _, s := range all {
			if len(thumbnails(s)) == 0 {
				return false
			}
		}
		return true
	})
	want := thumbnails(leader)
	if len(want) != 1 {
		t.Fatalf("the leader lists %d thumbnails of one image: %v", len(want), want)
	}
	var first []byte
	for _, s := range all {
		id := s.Node.Cluster.ID()
		if got := thumbnails(s); len(got) != 1 || got[0] != want[0] {
			t.Fatalf("%s lists thumbnails %v, the leader %v", id, got, want)
		}
		r := s.Do(http.MethodGet, "/folders?path=scans", nil, s.Admin())
		if r.Status != http.StatusOK {
			t.Fatalf("listing on %s: %d %s", id, r.Status, r.Body)
		}
		var u string
		for _, x := range quiretest.List(t, r.JSON(t), "documents") {
			m := quiretest.Obj(t, x)
			if _, has := m["thumbnailUrl"]; has && path.Base(quiretest.Str(t, m, "path")) == "hi.png" {
				u = quiretest.Str(t, m, "thumbnailUrl")
			}
		}
		if u == "" {
			t.Fatalf("%s lists hi.png without a thumbnailUrl: %s", id, r.Body)
		}
		g := s.Do(http.MethodGet, u, nil, "")
		if g.Status != http.StatusOK || g.Header.Get("Content-Type") != "image/png" {
			t.Fatalf("%s serves its thumbnailUrl: %d %s", id, g.Status, g.Header.Get("Content-Type"))
		}
		if _, err := png.Decode(bytes.NewReader(g.Body)); err != nil {
			t.Fatalf("%s serves a thumbnail that is no PNG: %v", id, err)
		}
		if first == nil {
			first = g.Body
		} else if !bytes.Equal(first, g.Body) {
			t.Fatalf("%s serves other thumbnail bytes (%d) than %s (%d)", id, len(g.Body), leader.Node.Cluster.ID(), len(first))
		}
	}
}
