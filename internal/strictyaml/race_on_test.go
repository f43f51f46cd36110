//go:build race

package strictyaml

// RaceEnabled reports a build with the race detector, under which
// sync.Pool drops a quarter of what is put back, so that regexp and fmt
// allocate more than they do in a normal build: allocation bounds do not
// hold there, and make test runs the battery without -race.
const RaceEnabled = true
