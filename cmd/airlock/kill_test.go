package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/airlockdev/airlock/fixture"
)

// The kill test: every command that writes a fixture tree (record
// --requests, mutate --write, run --update, promote) is killed with
// SIGKILL at random moments on a small tree; after the next command, the
// tree holds no temporary file and no journal, no sidecar or golden
// without its body, no written body without its sidecar, and airlock run
// passes. AIRLOCK_KILL_SEED replays a run; AIRLOCK_KILLS sets the kills per
// command (default 8).

// airlockBin is the binary the kill test starts: $AIRLOCK_BIN (make test
// builds bin/airlock, without the race detector, so that a hundred process
// starts stay quick), or one built here.
func airlockBin(t *testing.T) string {
	if bin := os.Getenv("AIRLOCK_BIN"); bin != "" {
		return bin
	}
	bin := filepath.Join(t.TempDir(), "airlock")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

type killEnv struct {
	bin      string
	t        *testing.T
	rng      *rand.Rand
	schemas  string // the bundled contracts
	pristine string // a copy of the bundled review_status fixtures mutate reads
	tree     string // the tree the commands write
	work     string
	noMeta   map[string]bool // bodies of the bundled tree without a sidecar
}

func (k *killEnv) cmd(args ...string) *exec.Cmd {
	c := exec.Command(k.bin, args...)
	c.Dir = k.work
	return c
}

// airlock runs a command to its end and returns its exit code and output.
func (k *killEnv) airlock(args ...string) (int, string) {
	c := k.cmd(args...)
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, &out
	err := c.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String()
	}
	if err != nil {
		k.t.Fatalf("airlock %v: %v", args, err)
	}
	return 0, out.String()
}

// killAfter starts a command and kills it with SIGKILL after d (if it is
// still running); it reports whether the kill landed.
func (k *killEnv) killAfter(d time.Duration, args ...string) bool {
	c := k.cmd(args...)
	if err := c.Start(); err != nil {
		k.t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case <-done:
		return false
	case <-time.After(d):
		c.Process.Signal(syscall.SIGKILL)
		<-done
		return true
	}
}

// timed runs a command to its end and returns how long it took.
func (k *killEnv) timed(args ...string) time.Duration {
	start := time.Now()
	code, out := k.airlock(args...)
	if code > 1 {
		k.t.Fatalf("airlock %v: exit %d\n%s", args, code, out)
	}
	return time.Since(start)
}

// leftovers lists the journals and temporary files in the tree.
func (k *killEnv) leftovers() []string {
	var out []string
	filepath.WalkDir(k.tree, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".airlock-") {
			out = append(out, p)
		}
		return err
	})
	return out
}

// check runs the next command (next), then verifies the tree. It reports
// whether the kill had left a journal or a temporary file to clean up.
func (k *killEnv) check(after string, next []string) (dirty bool) {
	k.t.Helper()
	dirty = len(k.leftovers()) > 0
	if code, out := k.airlock(next...); code != 0 {
		k.t.Errorf("%s: the next command (airlock %s) exits %d:\n%s", after, next[0], code, out)
	}
	bodies := map[string]bool{}
	var sidecars, goldens, leftovers []string
	filepath.WalkDir(k.tree, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		switch {
		case strings.HasPrefix(name, ".airlock-"):
			leftovers = append(leftovers, p)
		case name == fixture.DefaultsFile:
		case strings.HasSuffix(name, fixture.MetaSuffix):
			sidecars = append(sidecars, p)
		case strings.HasSuffix(name, fixture.GoldenSuffix):
			goldens = append(goldens, p)
		case strings.HasSuffix(name, fixture.OutputSchemaSuffix):
		default:
			bodies[filepath.Join(filepath.Dir(p), fixture.StemOf(name))] = true
		}
		return nil
	})
	if len(leftovers) > 0 {
		k.t.Errorf("%s: temporary files or journals remain: %v", after, leftovers)
	}
	defer func() {
		if code, out := k.airlock("run", "--schemas", k.schemas, "--fixtures", k.tree); code != 0 {
			k.t.Errorf("%s: airlock run exits %d:\n%s", after, code, out)
		}
	}()
	for _, s := range sidecars {
		if !bodies[strings.TrimSuffix(s, fixture.MetaSuffix)] {
			k.t.Errorf("%s: sidecar without a body: %s", after, s)
		}
	}
	for _, g := range goldens {
		if !bodies[strings.TrimSuffix(g, fixture.GoldenSuffix)] {
			k.t.Errorf("%s: golden without a body: %s", after, g)
		}
	}
	metas := map[string]bool{}
	for _, s := range sidecars {
		metas[strings.TrimSuffix(s, fixture.MetaSuffix)] = true
	}
	for b := range bodies {
		rel, _ := filepath.Rel(k.tree, b)
		if !metas[b] && !k.noMeta[rel] {
			k.t.Errorf("%s: a written body without its sidecar: %s", after, b)
		}
	}
	return dirty
}

func copyTree(t *testing.T, dst, src string) {
	t.Helper()
	if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
}

func TestKill(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the kill test starts about a hundred processes")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("AIRLOCK_KILL_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	kills := 8
	if s := os.Getenv("AIRLOCK_KILLS"); s != "" {
		kills, _ = strconv.Atoi(s)
	}
	t.Logf("AIRLOCK_KILL_SEED=%d AIRLOCK_KILLS=%d", seed, kills)
	work := t.TempDir()
	k := &killEnv{
		bin: airlockBin(t), t: t, rng: rand.New(rand.NewPCG(seed, 0)), work: work,
		schemas: filepath.Join(work, "schemas"), pristine: filepath.Join(work, "pristine"),
		tree: filepath.Join(work, "fixtures"), noMeta: map[string]bool{},
	}
	copyTree(t, k.schemas, filepath.Join("..", "..", "schemas"))
	copyTree(t, filepath.Join(k.pristine, "review_status"), filepath.Join("..", "..", "fixtures", "review_status"))
	copyTree(t, filepath.Join(k.tree, "review_status"), filepath.Join("..", "..", "fixtures", "review_status"))
	filepath.WalkDir(k.tree, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.Contains(d.Name(), ".meta.") && !strings.HasSuffix(d.Name(), fixture.GoldenSuffix) {
			if _, err := os.Stat(filepath.Join(filepath.Dir(p), fixture.StemOf(d.Name())+fixture.MetaSuffix)); err != nil {
				rel, _ := filepath.Rel(k.tree, filepath.Join(filepath.Dir(p), fixture.StemOf(d.Name())))
				k.noMeta[rel] = true
			}
		}
		return err
	})
	body := filepath.Join(k.pristine, "review_status", "v2", "accepted", "approved.json")
	bind := []string{"--tool", "review_status", "--request-id", "req.J7q94MkP", "--context", "change_id=CR-1042"}
	landed, dirty := map[string]int{}, map[string]int{}

	// kill runs one command uninterrupted once (to learn its duration),
	// then kills fresh instances at random moments within that duration.
	run := []string{"run", "--schemas", k.schemas, "--fixtures", k.tree}
	update := append(slices.Clone(run), "--update")
	kill := func(name string, prepare func(i int) []string, next []string, after func(i int)) {
		t.Run(name, func(t *testing.T) {
			k.t = t
			d := k.timed(prepare(0)...)
			k.check(name+" (uninterrupted)", next)
			after(0)
			for i := 1; i <= kills; i++ {
				args := prepare(i)
				if k.killAfter(time.Duration(k.rng.Int64N(int64(d)+1)), args...) {
					landed[name]++
				}
				if k.check(fmt.Sprintf("%s killed (#%d)", name, i), next) {
					dirty[name]++
				}
				after(i)
			}
			t.Logf("%s: %d of %d kills landed before the command ended (it takes about %v); %d left a journal or temporary file for the next command", name, landed[name], kills, d.Round(time.Millisecond), dirty[name])
		})
	}
	nothing := func(int) {}

	kill("record --requests", func(i int) []string {
		var reqs strings.Builder
		for j := range 12 {
			fmt.Fprintf(&reqs, "- name: k%d-%d\n  args: [%q]\n", i, j, body)
		}
		file := filepath.Join(work, fmt.Sprintf("requests-%d.yaml", i))
		if err := os.WriteFile(file, []byte(reqs.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return append([]string{"record", "--schemas", k.schemas, "--fixtures", k.tree, "--requests", file}, append(bind, "--", "cat")...)
	}, run, nothing)

	kill("mutate --write", func(int) []string {
		// Remove the mutants of the last round, so that this one writes.
		nm := filepath.Join(k.tree, "review_status", "v2", fixture.KindNearMiss)
		entries, _ := os.ReadDir(nm)
		for _, e := range entries {
			if strings.Contains(fixture.StemOf(e.Name()), ".") {
				os.Remove(filepath.Join(nm, e.Name()))
			}
		}
		return []string{"mutate", "--schemas", k.schemas, "--fixtures", k.pristine, "--upstream-version", "v2", "--max-per-fixture", "4", "--write", k.tree, "--all"}
	}, run, nothing)

	goldens := func() {
		filepath.WalkDir(k.tree, func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, fixture.GoldenSuffix) {
				os.Remove(p)
			}
			return err
		})
	}
	kill("run --update", func(int) []string {
		goldens()
		return update
	}, update, nothing) // the next command is the same one, run to its end

	kill("promote", func(i int) []string {
		name := fmt.Sprintf("p%d", i)
		if code, out := k.airlock(append([]string{"record", "--schemas", k.schemas, "--fixtures", k.tree, "--name", name}, append(bind, "--", "cat", body)...)...); code != 0 {
			t.Fatalf("record %s: exit %d\n%s", name, code, out)
		}
		return []string{"promote", "--schemas", k.schemas, filepath.Join(k.tree, "review_status", "v2", "recorded", name+".json"), "--to", "accepted"}
	}, update, func(i int) { // a promoted fixture needs its golden: run --update is what a user runs next
		name := fmt.Sprintf("p%d", i)
		n := 0
		for _, kind := range []string{fixture.KindRecorded, fixture.KindAccepted} {
			dir := filepath.Join(k.tree, "review_status", "v2", kind)
			_, errBody := os.Stat(filepath.Join(dir, name+".json"))
			_, errMeta := os.Stat(filepath.Join(dir, name+fixture.MetaSuffix))
			if (errBody == nil) != (errMeta == nil) {
				t.Errorf("promote killed (#%d): %s/%s has a body or a sidecar without the other", i, kind, name)
			}
			if errBody == nil {
				n++
			}
		}
		if n != 1 {
			t.Errorf("promote killed (#%d): fixture %s is in %d places, want exactly one", i, name, n)
		}
	})
}
