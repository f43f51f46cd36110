// Command importbench measures airlock import openapi on a description of a
// given size cut from a real one, in processes of their own: wall time and
// peak resident memory of the import (targets: ≤ 10 s and ≤ 500 MB for 5 MB,
// issue 15), then the time the contract it wrote takes to load
// (gate.LoadDir, target ≤ 1 s). It also times the whole description, for
// the record.
//
// The cut keeps the operation's path first, then whole path items in
// order (then its webhooks, x-webhooks), and only the components the kept
// items reach (through $refs, transitively), until the description is at
// least -size bytes.
//
//	go run ./scripts/importbench -bin bin/airlock -spec .ci/node/openapi/…/api.github.com.json
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/airlockdev/airlock/gate"
)

func main() {
	bin := flag.String("bin", "bin/airlock", "the airlock binary")
	spec := flag.String("spec", "", "a JSON OpenAPI description to cut")
	path := flag.String("path", "/repos/{owner}/{repo}/pulls/{pull_number}", "the path item kept first")
	op := flag.String("operation", "pulls/get", "the operation imported")
	size := flag.Int("size", 5<<20, "the cut description's size, bytes")
	runs := flag.Int("runs", 3, "runs of each measurement (medians)")
	flag.Parse()
	if err := run(*bin, *spec, *path, *op, *size, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "importbench:", err)
		os.Exit(1)
	}
}

func run(bin, spec, first, op string, size, runs int) error {
	raw, err := os.ReadFile(spec)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "importbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// The cut counts bytes before compaction; a few rounds bring the
	// written description to the size asked for.
	var cut []byte
	for want, i := size, 0; i < 20; i++ {
		if cut, err = cutSpec(raw, first, want); err != nil {
			return err
		}
		if len(cut) >= size || len(cut) >= len(raw) {
			break
		}
		want += (size-len(cut))*2 + 4096
	}
	cutFile := filepath.Join(tmp, "cut.json")
	if err := os.WriteFile(cutFile, cut, 0o644); err != nil {
		return err
	}
	for _, c := range []struct {
		name, file string
		bytes      int
		target     bool
	}{{"cut", cutFile, len(cut), true}, {"whole", spec, len(raw), false}} {
		var walls []float64
		var rss []int64
		var out string
		for i := 0; i < runs; i++ {
			dir := filepath.Join(tmp, fmt.Sprintf("%s%d", c.name, i))
			cmd := exec.Command(bin, "import", "openapi", c.file, "--operation", op, "--tool", "bench", "--api", "bench",
				"--upstream-version", "v1", "--schemas", filepath.Join(dir, "schemas"), "--fixtures", filepath.Join(dir, "fixtures"))
			var o bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &o
			start := time.Now()
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, o.String())
			}
			walls = append(walls, time.Since(start).Seconds())
			rss = append(rss, cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss) // KiB on Linux
			out = filepath.Join(dir, "schemas", "bench")
		}
		wall, peak := median(walls), medianInt(rss)
		mb := float64(c.bytes) / (1 << 20)
		if c.target {
			fmt.Printf("import openapi, %.1f MB description (cut from %s): median %.2f s (target <= 10 s: %s), peak RSS %d MB (target <= 500 MB: %s)\n",
				mb, filepath.Base(spec), wall, mark(wall <= 10), peak/1024, mark(peak/1024 <= 500))
			var loads []float64
			for i := 0; i < runs; i++ {
				start := time.Now()
				if _, err := gate.LoadDir(out, gate.Options{}); err != nil {
					return err
				}
				loads = append(loads, time.Since(start).Seconds())
			}
			l := median(loads)
			fmt.Printf("load of the contract it wrote: median %.1f ms (target <= 1 s: %s)\n", l*1000, mark(l <= 1))
		} else {
			fmt.Printf("import openapi, whole %s (%.1f MB, for the record): median %.2f s, peak RSS %d MB\n", filepath.Base(spec), mb, wall, peak/1024)
		}
	}
	return nil
}

func mark(ok bool) string {
	if ok {
		return "holds"
	}
	return "MISSED"
}

func median(v []float64) float64 {
	sort.Float64s(v)
	return v[len(v)/2]
}

func medianInt(v []int64) int64 {
	sort.Slice(v, func(i, j int) bool { return v[i] < v[j] })
	return v[len(v)/2]
}

var refRE = regexp.MustCompile(`"\$ref":\s*"#/components/([^/"]+)/([^"]+)"`)

// cutSpec keeps the path item first, then others in order, with the
// components they reach, until the result has at least size bytes.
func cutSpec(raw []byte, first string, size int) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	var paths map[string]json.RawMessage
	var comps map[string]map[string]json.RawMessage
	if err := json.Unmarshal(doc["paths"], &paths); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(doc["components"], &comps); err != nil {
		return nil, err
	}
	if _, ok := paths[first]; !ok {
		return nil, fmt.Errorf("no path %s", first)
	}
	order := []string{first}
	var rest []string
	for p := range paths {
		if p != first {
			rest = append(rest, p)
		}
	}
	sort.Strings(rest)
	order = append(order, rest...)

	keptComps := map[string]map[string]json.RawMessage{}
	total := len(doc["info"]) + 100
	var reach func(b []byte)
	reach = func(b []byte) {
		for _, m := range refRE.FindAllSubmatch(b, -1) {
			kind, name := string(m[1]), strings.NewReplacer("~1", "/", "~0", "~").Replace(string(m[2]))
			if keptComps[kind] == nil {
				keptComps[kind] = map[string]json.RawMessage{}
			}
			if _, ok := keptComps[kind][name]; ok {
				continue
			}
			c, ok := comps[kind][name]
			if !ok {
				continue
			}
			keptComps[kind][name] = c
			total += len(c) + len(name) + 4
			reach(c)
		}
	}
	// keep adds items in order, with what they reach, while the size is
	// not reached.
	keep := func(items map[string]json.RawMessage, order []string) map[string]json.RawMessage {
		kept := map[string]json.RawMessage{}
		for _, k := range order {
			if total >= size {
				break
			}
			kept[k] = items[k]
			total += len(items[k]) + len(k) + 4
			reach(items[k])
		}
		return kept
	}
	out := map[string]any{"openapi": doc["openapi"], "info": doc["info"], "paths": keep(paths, order), "components": keptComps}
	// The paths of GitHub's description reach about 4.3 MB; its webhooks
	// (x-webhooks) come next, in order, while the size is not reached.
	var hooks map[string]json.RawMessage
	if total < size && json.Unmarshal(doc["x-webhooks"], &hooks) == nil {
		names := make([]string, 0, len(hooks))
		for h := range hooks {
			names = append(names, h)
		}
		sort.Strings(names)
		out["x-webhooks"] = keep(hooks, names)
	}
	return json.Marshal(out)
}
