package server_test

func init() {
	for _, m := range []string{"PROPFIND", "PROPPATCH", "MKCOL", "GET", "PUT", "DELETE", "MOVE", "COPY", "LOCK", "UNLOCK"} {
		for _, p := range []string{"/dav", "/dav/*"} {
			notDocumentRoutes[m+" "+p] = "WebDAV: Basic auth and folder permissions checked by the handler (dav_test.go TestDav_FolderPermissions, TestDav_Methods)"
		}
	}
	routeSamples["PUT /dav"] = `"scan"`
	routeSamples["PUT /dav/*"] = `"scan"`
}
