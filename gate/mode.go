package gate

import "fmt"

// Mode is what a caller does with a verdict (DESIGN.md "mode"): ModeStrict, the default, gives the agent the verdict's Output; ModeWarn (shadow) gives the agent the original result and only logs and counts the verdict; ModeOff does not check.
type Mode string

// The modes.
const (
	ModeStrict Mode = "strict"
	ModeWarn   Mode = "warn"
	ModeOff    Mode = "off"
)

// ParseMode reads "strict", "warn" or "off"; "" is ModeStrict. Anything else is an error naming the three.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", ModeStrict:
		return ModeStrict, nil
	case ModeWarn, ModeOff:
		return Mode(s), nil
	}
	return "", fmt.Errorf("unknown mode %q: want strict, warn or off", s)
}
