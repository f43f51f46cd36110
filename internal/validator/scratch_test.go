package validator

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"
)

var lim = strictjson.Limits{MaxDepth: 512, MaxNumberLength: 4096, MaxStringLength: 1 << 24}

func TestScratchSuite(t *testing.T) {
	root := "/work/shared/conformance/JSON-Schema-Test-Suite"
	loader := schema.ConfinedLoader{}
	filepath.WalkDir(root+"/remotes", func(p string, d fs.DirEntry, err error) error {
		if d.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(p)
		doc, err := strictjson.Parse(b, lim)
		if err == nil {
			rel, _ := filepath.Rel(root+"/remotes", p)
			loader["http://localhost:1234/"+rel] = doc
		}
		return nil
	})
	total, agree, fb := 0, 0, 0
	for _, dir := range []string{"tests/draft2020-12", "tests/draft2020-12/optional", "tests/draft2020-12/optional/format"} {
		files, _ := filepath.Glob(filepath.Join(root, dir, "*.json"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			doc, err := strictjson.Parse(b, lim)
			if err != nil {
				continue
			}
			for gi, g := range doc.([]any) {
				group := g.(map[string]any)
				c := schema.NewCompiler(loader)
				url := fmt.Sprintf("http://airlock.invalid/%s/%d.json", filepath.Base(f), gi)
				if c.AddResource(url, group["schema"]) != nil {
					continue
				}
				s, err := c.Compile(url)
				if err != nil {
					continue
				}
				vd := Compile(s)
				if vd.Fallback() != "" {
					fb++
					t.Logf("fallback %s: %s", filepath.Base(f), vd.Fallback())
				}
				for _, tc := range group["tests"].([]any) {
					tc := tc.(map[string]any)
					total++
					ref, _ := schema.Validate(s, tc["data"])
					got, err := vd.Validate(tc["data"])
					if err != nil {
						t.Errorf("%s", err)
					}
					if (ref == nil) == (got == nil) {
						agree++
					} else {
						t.Errorf("%s / %s / %s: v6 valid=%v ours valid=%v (%v)", filepath.Base(f), group["description"], tc["description"], ref == nil, got == nil, got)
					}
					if got != nil && !strings.HasPrefix(got.KeywordLocation, "http") {
						t.Errorf("loc %q", got.KeywordLocation)
					}
				}
			}
		}
	}
	t.Logf("cases %d agree %d fallback groups %d", total, agree, fb)
}
