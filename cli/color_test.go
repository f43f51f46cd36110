package cli

import "testing"

// Colour only on a terminal, never with NO_COLOR set in auto mode; the
// flag's always and never win over both.
func TestColorOn(t *testing.T) {
	for _, c := range []struct {
		mode     string
		terminal bool
		noColor  string
		want     bool
	}{
		{"auto", true, "", true},
		{"auto", false, "", false},
		{"auto", true, "1", false},
		{"auto", false, "1", false},
		{"always", false, "1", true},
		{"never", true, "", false},
	} {
		if got := colorOn(c.mode, c.terminal, c.noColor); got != c.want {
			t.Errorf("colorOn(%q, terminal %v, NO_COLOR %q) = %v, want %v", c.mode, c.terminal, c.noColor, got, c.want)
		}
	}
}
