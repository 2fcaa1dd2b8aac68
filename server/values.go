package server

import (
	"errors"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"quire/pipeline"
	"quire/storage"
)

// validEmail is the pipeline's idea of an address it can send to.
func validEmail(s string) bool { return pipeline.ValidEmail(s) }

// validUserID accepts a user name as a query parameter: 1 to 256 bytes of
// valid UTF-8 without control characters.
func validUserID(u string) bool {
	if u == "" || len(u) > 256 || !utf8.ValidString(u) {
		return false
	}
	return !strings.ContainsFunc(u, unicode.IsControl)
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func isUUIDv4(s string) bool {
	u, err := uuid.Parse(s)
	return err == nil && u.Version() == 4 && len(s) == 36
}

// parseDay parses yyyy-MM-dd in the zone tz ("+0500", "-08:00", an IANA
// name, or empty for UTC) and returns the start of that day.
func parseDay(date, tz string) (time.Time, error) {
	loc := time.UTC
	if tz != "" {
		if l, err := time.LoadLocation(tz); err == nil {
			loc = l
		} else if t, err := time.Parse("-0700", strings.Replace(tz, ":", "", 1)); err == nil {
			_, off := t.Zone()
			loc = time.FixedZone(tz, off)
		} else {
			return time.Time{}, invalid("tz", "invalid 'tz' parameter")
		}
	}
	t, err := time.ParseInLocation("2006-01-02", date, loc)
	if err != nil {
		return time.Time{}, invalid("date", "invalid date string '"+date+"'")
	}
	return t, nil
}

// parseDateParam parses a start or end query parameter given as a day
// (yyyy-MM-dd, the whole day counts) or a full timestamp.
func parseDateParam(r *reqCtx, name string, end bool) (time.Time, error) {
	v := r.Query(name)
	if v == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{dateLayout, time.RFC3339, time.RFC3339Nano} {
		if t, err := time.Parse(layout, v); err == nil {
			// `end` is inclusive, like `start` (storage takes an exclusive
			// bound): the whole given second, or the instant itself.
			if end && t.Nanosecond() == 0 {
				t = t.Add(time.Second)
			} else if end {
				t = t.Add(time.Nanosecond)
			}
			return t, nil
		}
	}
	t, err := time.Parse("2006-01-02", v)
	if err != nil {
		return time.Time{}, invalid(name, "invalid '"+name+"' parameter")
	}
	if end {
		t = t.AddDate(0, 0, 1)
	}
	return t, nil
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func isNotFound(err error) bool { return errors.Is(err, storage.ErrNotFound) }

func splitDocPath(p string) (dir, name string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

// notificationConfigured reports whether NOTIFICATION actions of a site
// have a sender address (and the server or site a mail server).
func (s *env) notificationConfigured(site string) bool {
	c, err := s.db.SiteConfig(site)
	return err == nil && c.FromEmail() != ""
}

// nonNil makes a nil slice encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
