//go:build !windows

package intake

import "syscall"

// openNoFollow is the open flag that refuses a symbolic link as the last
// path element (a link put into a watched folder is not followed).
const openNoFollow = syscall.O_NOFOLLOW
