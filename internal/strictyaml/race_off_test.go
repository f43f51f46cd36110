//go:build !race

package strictyaml

// RaceEnabled reports a build with the race detector (see race_on_test.go).
const RaceEnabled = false
