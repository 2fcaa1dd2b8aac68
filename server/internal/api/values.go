package api

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

// ValidEmail is the pipeline's idea of an address it can send to.
func ValidEmail(s string) bool { return pipeline.ValidEmail(s) }

// ValidUserID accepts a user name as a query parameter: 1 to 256 bytes of
// valid UTF-8 without control characters.
func ValidUserID(u string) bool {
	if u == "" || len(u) > 256 || !utf8.ValidString(u) {
		return false
	}
	return !strings.ContainsFunc(u, unicode.IsControl)
}

func Deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func IsUUIDv4(s string) bool {
	u, err := uuid.Parse(s)
	return err == nil && u.Version() == 4 && len(s) == 36
}

// ParseDay parses yyyy-MM-dd in the zone tz ("+0500", "-08:00", an IANA
// name, or empty for UTC) and returns the start of that day.
func ParseDay(date, tz string) (time.Time, error) {
	loc := time.UTC
	if tz != "" {
		if l, err := time.LoadLocation(tz); err == nil {
			loc = l
		} else if t, err := time.Parse("-0700", strings.Replace(tz, ":", "", 1)); err == nil {
			_, off := t.Zone()
			loc = time.FixedZone(tz, off)
		} else {
			return time.Time{}, Invalid("tz", "invalid 'tz' parameter")
		}
	}
	t, err := time.ParseInLocation("2006-01-02", date, loc)
	if err != nil {
		return time.Time{}, Invalid("date", "invalid date string '"+date+"'")
	}
	return t, nil
}

// ParseDateParam parses a start or end query parameter given as a day
// (yyyy-MM-dd, the whole day counts) or a full timestamp.
func ParseDateParam(r *Request, name string, end bool) (time.Time, error) {
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
		return time.Time{}, Invalid(name, "invalid '"+name+"' parameter")
	}
	if end {
		t = t.AddDate(0, 0, 1)
	}
	return t, nil
}

func NonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func IsNotFound(err error) bool { return errors.Is(err, storage.ErrNotFound) }

func SplitDocPath(p string) (dir, name string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

// NotificationConfigured reports whether NOTIFICATION actions of a site
// have a sender address (and the server or site a mail server).
func (s *Env) NotificationConfigured(site string) bool {
	c, err := s.DB.SiteConfig(site)
	return err == nil && c.FromEmail() != ""
}

// NonNil makes a nil slice encode as [] rather than null.
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
