package storage

import (
	"fmt"
	"sync"
	"testing"
)

// TestSiteConfig_CacheFollowsWrites: SiteConfig answers from a cache, and
// a SetSiteConfig that returned is seen by the next read, for that site
// only; a caller changing the answer changes nothing stored or cached.
func TestSiteConfig_CacheFollowsWrites(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	read := func(site string) *SiteConfig {
		t.Helper()
		c, err := d.SiteConfig(site)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if got := read("default").MaxContentLengthBytes; got != "" {
		t.Fatalf("fresh store: maxContentLengthBytes %q, want none", got)
	}
	for _, want := range []string{"1000", "2000", ""} {
		mustApply(t, d, OpSetSiteConfig, "default", t0, SiteConfig{MaxContentLengthBytes: want, Branding: &Branding{Title: "t" + want}})
		c := read("default")
		if c.MaxContentLengthBytes != want || c.Branding == nil || c.Branding.Title != "t"+want {
			t.Fatalf("after setting %q: got %+v", want, c)
		}
		c.Branding.Title, c.MaxContentLengthBytes = "changed by the caller", "1"
		if again := read("default"); again.MaxContentLengthBytes != want || again.Branding.Title != "t"+want {
			t.Fatalf("a caller's change leaked into the next answer: %+v", again)
		}
		if other := read("other"); other.MaxContentLengthBytes != "" {
			t.Fatalf("site other: %+v, want empty", other)
		}
	}
}

// TestSiteConfig_ReadsDuringWrites: reads racing with writes never leave
// a stale configuration behind once the last write returned.
func TestSiteConfig_ReadsDuringWrites(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := d.SiteConfig("default"); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	want := ""
	for i := range 50 {
		want = string(rune('1'+i%9)) + "00"
		mustApply(t, d, OpSetSiteConfig, "default", t0, SiteConfig{MaxContentLengthBytes: want})
		c, err := d.SiteConfig("default")
		if err != nil {
			t.Fatal(err)
		}
		if c.MaxContentLengthBytes != want {
			close(stop)
			wg.Wait()
			t.Fatalf("write %d: read %q after setting %q", i, c.MaxContentLengthBytes, want)
		}
	}
	close(stop)
	wg.Wait()
}

// TestSiteConfig_CacheIsBounded: a caller naming many site ids, most of
// them unknown, never grows the cache past maxCachedSiteConfigs, and a
// configured site still answers its stored configuration afterwards.
func TestSiteConfig_CacheIsBounded(t *testing.T) {
	t.Parallel() // own store, no package or process state
	d := mustOpen(t)
	mustApply(t, d, OpSetSiteConfig, "default", t0, SiteConfig{MaxContentLengthBytes: "1000"})
	for i := range 3 * maxCachedSiteConfigs {
		if _, err := d.SiteConfig(fmt.Sprintf("unknown-%d", i)); err != nil {
			t.Fatal(err)
		}
		d.siteCfg.mu.Lock()
		n := len(d.siteCfg.m)
		d.siteCfg.mu.Unlock()
		if n > maxCachedSiteConfigs {
			t.Fatalf("after %d site ids the cache holds %d configurations (bound %d)", i+1, n, maxCachedSiteConfigs)
		}
	}
	c, err := d.SiteConfig("default")
	if err != nil {
		t.Fatal(err)
	}
	if c.MaxContentLengthBytes != "1000" {
		t.Fatalf("default's configuration after the flood: %+v", c)
	}
}
