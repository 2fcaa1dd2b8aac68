//go:build !linux

package memtrim

import (
	"errors"
	"time"
)

var errUnsupported = errors.New("paging out file mappings needs Linux")

func rssFile() (int64, error) { return 0, errUnsupported }

func pageOut(string) (int, error) { return 0, errUnsupported }

func pageOutColdest(string, int64) (int, error) { return 0, errUnsupported }

func cpuTime() (time.Duration, error) { return 0, errUnsupported }

const supported = false
