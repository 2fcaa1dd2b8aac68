//go:build windows

package intake

// openNoFollow: Windows has no O_NOFOLLOW. The scan takes regular files
// only (WalkDir reports links and junctions as such, never following
// them), and take checks that what it opened is a regular file.
const openNoFollow = 0
