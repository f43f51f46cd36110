package record_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/internal/testtree"
	"github.com/airlockdev/airlock/record"
	"github.com/airlockdev/airlock/semantic"
)

// bundledBodies lists the body files of the bundled fixture trees
// (fixtures/<tool>/<version>/<kind>/<name>.<ext>), by tool and version:
// not sidecars, goldens, output schemas or defaults.
func bundledBodies(root string) map[[2]string][]string {
	out := map[[2]string][]string{}
	matches, err := filepath.Glob(filepath.Join(root, "*", "*", "*", "*"))
	Expect(err).NotTo(HaveOccurred())
	for _, p := range matches {
		base := filepath.Base(p)
		if strings.HasSuffix(base, ".meta.yaml") || strings.HasSuffix(base, ".agent.json") ||
			strings.HasSuffix(base, ".output-schema.json") || strings.HasPrefix(base, ".") {
			continue
		}
		if info, err := os.Stat(p); err != nil || !info.Mode().IsRegular() {
			continue
		}
		rel, _ := filepath.Rel(root, p)
		parts := strings.Split(rel, string(filepath.Separator))
		key := [2]string{parts[0], parts[1]}
		out[key] = append(out[key], p)
	}
	return out
}

var unsafeName = regexp.MustCompile(`[^A-Za-z0-9_-]`)

var _ = Describe("bundled fixtures through the recorder", func() {
	It("come back byte for byte, with nothing redacted", func() {
		root, err := filepath.Abs(filepath.Join("..", "fixtures"))
		Expect(err).NotTo(HaveOccurred())
		schemas, err := filepath.Abs(filepath.Join("..", "schemas"))
		Expect(err).NotTo(HaveOccurred())
		groups := bundledBodies(root)
		Expect(groups).NotTo(BeEmpty())
		keys := make([][2]string, 0, len(groups))
		for k := range groups {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i][0]+"/"+keys[i][1] < keys[j][0]+"/"+keys[j][1] })

		var report strings.Builder
		changed, total := 0, 0
		for _, k := range keys {
			dir := testtree.Tree(map[string]string{"fixtures/.keep": ""})
			opts := record.Options{
				SchemasDir: schemas, FixturesDir: filepath.Join(dir, "fixtures"),
				Tool: k[0], UpstreamVersion: k[1], Timeout: 10 * time.Second,
			}
			originals := map[string]string{}
			for _, p := range groups[k] {
				rel, _ := filepath.Rel(root, p)
				kind := filepath.Base(filepath.Dir(p))
				base := filepath.Base(p)
				name := unsafeName.ReplaceAllString(kind+"-"+strings.TrimSuffix(base, filepath.Ext(base)), "_")
				originals[name] = rel
				// application/json for every body: the redactor gets to look
				// at each one, whatever it is.
				opts.Calls = append(opts.Calls, record.Call{
					Name: name, Request: semantic.Request{ID: "req-" + name},
					Command: &record.CommandCall{Argv: []string{"cat", p}, ContentType: "application/json"},
				})
			}
			results, err := record.Record(context.Background(), opts)
			Expect(err).NotTo(HaveOccurred(), "%s/%s", k[0], k[1])
			Expect(results).To(HaveLen(len(opts.Calls)))
			for _, r := range results {
				total++
				rel := originals[r.Name]
				want, err := os.ReadFile(filepath.Join(root, rel))
				Expect(err).NotTo(HaveOccurred())
				var why []string
				if r.Err != nil {
					why = append(why, "not recorded: "+r.Err.Error())
				} else {
					got, err := os.ReadFile(r.Body)
					Expect(err).NotTo(HaveOccurred())
					if !bytes.Equal(got, want) {
						why = append(why, fmt.Sprintf("body changed (%d bytes, was %d): %q", len(got), len(want), got))
					}
					m := testtree.ReadMeta(r.Meta)
					if len(m.Recorded.Redacted) > 0 {
						why = append(why, fmt.Sprintf("redacted: %v", m.Recorded.Redacted))
					}
				}
				if len(why) > 0 {
					changed++
					fmt.Fprintf(&report, "- fixtures/%s\n    %s\n", rel, strings.Join(why, "\n    "))
				}
			}
		}
		Expect(total).To(BeNumerically(">=", 100), "bundled bodies found")
		if changed > 0 {
			Fail(fmt.Sprintf("%d of %d bundled fixture bodies do not come back byte for byte\n%s", changed, total, report.String()))
		}
		GinkgoWriter.Printf("%d bundled fixture bodies recorded byte for byte, nothing redacted\n", total)
	})
})
