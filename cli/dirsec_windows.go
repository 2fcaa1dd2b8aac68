//go:build windows

package cli

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The service's data dir and config file belong to the service's account
// (LocalSystem) and to Administrators only. The DACL is protected: it does
// not inherit C:\ProgramData's, which lets every user read. Inside the data
// dir everything inherits it (OICI), the files the server writes later too.
const (
	serviceDirDACL  = "D:P(A;OICI;FA;;;SY)(A;OICI;FA;;;BA)"
	serviceFileDACL = "D:P(A;;FA;;;SY)(A;;FA;;;BA)"
)

// restrictToService sets path's DACL to SYSTEM and Administrators, full
// control, nothing inherited from its parent; SetNamedSecurityInfo hands
// the inheritable entries down to what the folder already holds.
func restrictToService(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	sddl := serviceFileDACL
	if fi.IsDir() {
		sddl = serviceDirDACL
	}
	sd, err := windows.SecurityDescriptorFromString(sddl)
	if err != nil {
		return fmt.Errorf("security descriptor %s: %w", sddl, err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return fmt.Errorf("security descriptor %s: %w", sddl, err)
	}
	err = windows.SetNamedSecurityInfo(path, windows.SE_FILE_OBJECT,
		windows.DACL_SECURITY_INFORMATION|windows.PROTECTED_DACL_SECURITY_INFORMATION, nil, nil, dacl, nil)
	if err != nil {
		return fmt.Errorf("set the permissions of %s: %w", path, err)
	}
	return nil
}

// pathDACL is path's DACL in SDDL ("D:P(A;OICI;FA;;;SY)...").
func pathDACL(path string) (string, error) {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return "", err
	}
	return sd.String(), nil
}

// foreignAccess lists who else than SYSTEM, Administrators and the owner
// path's DACL lets in (their SIDs), or "everyone" for a NULL DACL.
func foreignAccess(path string) ([]string, error) {
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return nil, err
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		return nil, err
	}
	if dacl == nil {
		return []string{"everyone (no DACL)"}, nil
	}
	allowed := map[string]bool{
		"S-1-5-18":     true, // LocalSystem, the service's account
		"S-1-5-32-544": true, // Administrators
		"S-1-3-0":      true, // CREATOR OWNER (an inheritable placeholder)
	}
	var out []string
	for i := uint32(0); i < uint32(dacl.AceCount); i++ {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return nil, err
		}
		if ace.Header.AceType != windows.ACCESS_ALLOWED_ACE_TYPE {
			continue
		}
		sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart)).String()
		if !allowed[sid] {
			out = append(out, sid)
		}
	}
	return out, nil
}
