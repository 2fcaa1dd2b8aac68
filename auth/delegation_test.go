package auth

import (
	"reflect"
	"testing"
	"time"
)

func TestDelegate(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	clock := now
	a := mustOpen(t, Config{Now: func() time.Time { return clock }}, nil)
	other := mustOpen(t, Config{Now: func() time.Time { return clock }}, nil)
	tok, err := a.SignDelegation(Delegation{Site: "finance", Permissions: []Permission{PermRead, PermWrite}, OnBehalfOf: "clerk", Reason: "ticket 42", IssuedBy: "admin"})
	if err != nil {
		t.Fatal(err)
	}
	foreign, _ := other.SignDelegation(Delegation{Site: "finance", Permissions: []Permission{PermRead}, Reason: "x", IssuedBy: "admin"})
	for _, tt := range []struct {
		name      string
		caller    *Principal
		tok       string
		after     time.Duration
		wantUser  string
		wantPerms []Permission
		wantErr   bool
	}{
		{"admin keeps only the listed permissions", NewPrincipal("admin", []string{"Admins"}), tok, 0, "clerk", []Permission{PermRead, PermWrite}, false},
		{"never more than the caller has", NewPrincipal("ro", []string{"finance_read"}), tok, 0, "clerk", []Permission{PermRead}, false},
		{"a caller without the site gets nothing", NewPrincipal("x", []string{"hr"}), tok, 0, "clerk", nil, false},
		{"expired", NewPrincipal("admin", []string{"Admins"}), tok, DelegationTTL + time.Minute, "", nil, true},
		{"another server's token", NewPrincipal("admin", []string{"Admins"}), foreign, 0, "", nil, true},
		{"tampered", NewPrincipal("admin", []string{"Admins"}), tok[:len(tok)-4] + "AAAA", 0, "", nil, true},
		{"an access token is no delegation token", NewPrincipal("admin", []string{"Admins"}), mustSign(t, a), 0, "", nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock = now.Add(tt.after)
			p, err := a.Delegate(tt.caller, tt.tok)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("accepted: %+v", p)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Admin || p.Username != tt.wantUser || p.Delegation == nil || p.Delegation.Actor != tt.caller.Username {
				t.Fatalf("principal = %+v", p)
			}
			if got := p.Permissions("finance"); !reflect.DeepEqual(got, tt.wantPerms) && !(len(got) == 0 && len(tt.wantPerms) == 0) {
				t.Errorf("permissions on finance = %v, want %v", got, tt.wantPerms)
			}
			if got := p.Permissions("default"); len(got) != 0 {
				t.Errorf("permissions on another site: %v", got)
			}
		})
	}
	clock = now
	if _, err := a.Authenticate(tok); err == nil {
		t.Error("a delegation token was accepted as an Authorization token")
	}
}

func mustSign(t *testing.T, a *Authenticator) string {
	t.Helper()
	s, err := a.Sign("admin", []string{"Admins"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
