//go:build !windows

package cli

// restrictToService is Windows' way of keeping the data dir to the service:
// elsewhere the data dir is made 0700 and chown'd to the service user.
func restrictToService(string) error { return nil }

// foreignAccess is checked from the mode bits elsewhere (doctorDataDir).
func foreignAccess(string) ([]string, error) { return nil, nil }
