package cli

import (
	"runtime/debug"
	"testing"
)

// TestShownVersion: a release build's version wins; a build that left the
// -dev default shows the module version the toolchain recorded (go install
// ...@vX.Y.Z), but never "(devel)" or nothing.
func TestShownVersion(t *testing.T) {
	info := func(v string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: "github.com/airlockdev/airlock", Version: v}}
	}
	for _, tc := range []struct {
		name, gate string
		info       *debug.BuildInfo
		want       string
	}{
		{"go install of a tag", "0.1.0-dev", info("v0.2.3"), "0.2.3"},
		{"go install of a pre-release", "0.1.0-dev", info("v0.3.0-rc.1"), "0.3.0-rc.1"},
		{"a pseudo-version", "0.1.0-dev", info("v0.1.1-0.20261201120000-0123456789ab"), "0.1.1-0.20261201120000-0123456789ab"},
		{"a release build sets gate.Version", "0.2.3", info("v9.9.9"), "0.2.3"},
		{"a local build", "0.1.0-dev", info("(devel)"), "0.1.0-dev"},
		{"no module version", "0.1.0-dev", info(""), "0.1.0-dev"},
		{"no build information", "0.1.0-dev", nil, "0.1.0-dev"},
	} {
		if got := shownVersion(tc.gate, tc.info); got != tc.want {
			t.Errorf("%s: shownVersion(%q, %v) = %q, want %q", tc.name, tc.gate, tc.info, got, tc.want)
		}
	}
}
