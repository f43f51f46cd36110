package schema_test

import (
	"strings"
	"testing"

	"github.com/airlockdev/airlock/internal/schema"
)

// Every name Formats lists is asserted: the gate's compiler refuses a
// value that is not of that format. The names CheckFormatName refuses as
// "no checker" really have none (any string passes), which is why a
// contract may not use them.
func TestFormatsAreAsserted(t *testing.T) {
	bad := map[string]string{
		"date": "x", "date-time": "2025-02-30T10:00:00Z", "duration": "x", "email": "x",
		"hostname": "-bad-", "ipv4": "x", "ipv6": "x", "iri": "x", "iri-reference": "%zz",
		"json-pointer": "x", "period": "x", "regex": "(", "relative-json-pointer": "x",
		"semver": "x", "time": "x", "uri": "x", "uri-reference": "%zz", "uri-template": "{",
		"uuid": "x",
	}
	for _, name := range schema.Formats() {
		value, ok := bad[name]
		if !ok {
			t.Errorf("format %q: no bad value in this test", name)
			continue
		}
		if err := schema.CheckFormatName(name); err != nil {
			t.Errorf("CheckFormatName(%q) = %v, want nil", name, err)
		}
		s, err := compileDoc(t, `{"format": "`+name+`"}`)
		if err != nil {
			t.Fatal(err)
		}
		if s.Validate(value) == nil {
			t.Errorf("format %q admits %q: it is not asserted", name, value)
		}
	}
	if len(bad) != len(schema.Formats()) {
		t.Errorf("the test knows %d formats, Formats lists %d", len(bad), len(schema.Formats()))
	}
	for name, value := range map[string]string{"idn-hostname": "-bad-", "idn-email": "x", "date-tme": "next tuesday"} {
		s, err := compileDoc(t, `{"format": "`+name+`"}`)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(value); err != nil {
			t.Errorf("format %q refuses %q (%v): the validator has a checker after all, update CheckFormatName", name, value, err)
		}
		if schema.CheckFormatName(name) == nil {
			t.Errorf("CheckFormatName(%q) = nil, want an error", name)
		}
	}
}

func TestCheckFormatNameMessages(t *testing.T) {
	for name, want := range map[string]string{
		"int32":        `"type": "integer", "minimum": -2147483648, "maximum": 2147483647`,
		"int64":        `"type": "integer", "minimum": -9223372036854775808, "maximum": 9223372036854775807`,
		"float":        `"type": "number", "minimum": -3.4028234663852886e38, "maximum": 3.4028234663852886e38`,
		"double":       `"type": "number", "minimum": -1.7976931348623157e308, "maximum": 1.7976931348623157e308`,
		"idn-hostname": "no checker",
		"idn-email":    "no checker",
		"date-tme":     `unknown format "date-tme"`,
	} {
		err := schema.CheckFormatName(name)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckFormatName(%q) = %v, want it to say %s", name, err, want)
		}
	}
}
