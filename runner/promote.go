package runner

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/airlockdev/airlock/gate"
)

// ErrWrongVerdict is wrapped by Promote's error when the gate's verdict
// now does not fit the destination: a refused response cannot become
// accepted, an admitted one cannot become a near-miss (exit 1).
var ErrWrongVerdict = errors.New("the gate's verdict does not fit the destination")

// PromoteOptions configure Promote.
type PromoteOptions struct {
	// SchemasDir holds the contracts.
	SchemasDir string
	// Fixture is the body (or its sidecar) at
	// <fixtures>/<tool>/<upstream-version>/<kind>/<name>.<ext>.
	Fixture string
	// To is KindAccepted, KindNearMiss or KindHistorical.
	To string
}

// Promotion is what Promote did.
type Promotion struct {
	// Moved maps each source path to its destination, body first.
	Moved [][2]string
	// Body is the body's new path.
	Body string
	// Verdict is the gate's verdict on the fixture now, with its effective
	// metadata; Expect is what the new sidecar expects.
	Verdict *gate.Verdict
	Expect  *Expect
}

// Promote moves a fixture (typically a recorded one) to another kind
// folder of the same tool and upstream version: body, sidecar, output
// schema and golden together, all or nothing, never overwriting
// (ErrFixtureExists).
//
// The gate judges the fixture first, with its effective metadata (sidecar
// and inherited defaults). The new sidecar states every inherited value
// explicitly, so the destination's defaults cannot change its meaning, and
// keeps the recorded: provenance; its expectation is:
//   - accepted: admitted (the verdict must be admitted, else ErrWrongVerdict);
//   - near-miss: refused for the reason the gate gives now (the verdict must
//     be a refusal, else ErrWrongVerdict);
//   - historical: whatever the gate does now: admitted, or refused for its
//     reason (a retired shape).
func Promote(opts PromoteOptions) (*Promotion, error) {
	if !slices.Contains([]string{KindAccepted, KindNearMiss, KindHistorical}, opts.To) {
		return nil, &gate.ConfigError{File: "--to", Msg: fmt.Sprintf("%q is not a destination (want accepted, near-miss or historical)", opts.To)}
	}
	body := opts.Fixture
	if stem, ok := strings.CutSuffix(body, MetaSuffix); ok {
		found, err := bodyFor(stem)
		if err != nil {
			return nil, err
		}
		body = found
	}
	info, err := os.Stat(body)
	if err != nil {
		return nil, &gate.ConfigError{File: body, Msg: "no such fixture", Err: err}
	}
	if info.IsDir() || isSidecar(filepath.Base(body)) {
		return nil, &gate.ConfigError{File: body, Msg: "not a fixture body: name the body file (or its .meta.yaml)"}
	}
	kdir := filepath.Dir(body)
	vdir := filepath.Dir(kdir)
	tdir := filepath.Dir(vdir)
	kind, ver, tool := filepath.Base(kdir), filepath.Base(vdir), filepath.Base(tdir)
	if !slices.Contains(Kinds, kind) {
		return nil, &gate.ConfigError{File: body, Msg: fmt.Sprintf("not inside a fixture tree: %q is not a kind folder (want <fixtures>/<tool>/<upstream-version>/<kind>/<name>.<ext>)", kind)}
	}
	if kind == opts.To {
		return nil, &gate.ConfigError{File: body, Msg: "the fixture is already in " + opts.To + "/"}
	}
	c, err := gate.LoadContract(filepath.Join(opts.SchemasDir, tool), gate.Options{})
	if err != nil {
		return nil, err
	}
	if !slices.Contains(c.UpstreamVersions(), ver) {
		return nil, &gate.ConfigError{File: vdir, Msg: fmt.Sprintf("upstream version %q is not in %s's contract (have %v)", ver, tool, c.UpstreamVersions())}
	}

	// The fixture's effective metadata, as a run would see it.
	defaults, err := readDefaults(tdir, nil)
	if err == nil {
		defaults, err = readDefaults(vdir, defaults)
	}
	if err == nil {
		defaults, err = readDefaults(kdir, defaults)
	}
	if err != nil {
		return nil, err
	}
	name := filepath.Base(body)
	stem := bodyStem(name)
	f := Fixture{
		Tool: tool, UpstreamVersion: ver, Kind: kind, Name: name, Stem: stem, Body: body,
		Golden: filepath.Join(kdir, stem+GoldenSuffix), OutputSchema: filepath.Join(kdir, stem+OutputSchemaSuffix),
		defaults: defaults,
	}
	meta := defaults
	if side := filepath.Join(kdir, stem+MetaSuffix); exists(side) {
		f.Meta = side
		m, err := readMeta(side)
		if err != nil {
			return nil, err
		}
		meta = merge(meta, m)
	}
	rc := &runContext{contracts: map[string]*gate.Contract{tool: c}, start: time.Now()}
	p, err := rc.prepare(Fixture{Tool: tool, UpstreamVersion: ver, Kind: KindRecorded, Name: name, Stem: stem, Body: body, Meta: f.Meta, defaults: defaults})
	if err != nil {
		return nil, err
	}
	v, err := rc.gateCheck(f, p.exp, p.body, p.exp.status, p.exp.contentType, p.exp.contentEncoding)
	if err != nil {
		return nil, err
	}

	var expect *Expect
	switch {
	case opts.To == KindAccepted && !v.Admitted:
		return nil, fmt.Errorf("%w: %s is refused now (%s), so it cannot be accepted; promote it to near-miss, or fix the contract", ErrWrongVerdict, body, v.Reason)
	case opts.To == KindNearMiss && v.Admitted:
		return nil, fmt.Errorf("%w: %s is admitted now, so it is no near-miss; promote it to accepted or historical", ErrWrongVerdict, body)
	case !v.Admitted:
		expect = &Expect{Outcome: "refused", Reason: v.Reason}
	}

	// The new sidecar: every effective value explicit, the new expectation.
	out := Meta{Request: &MetaRequest{}, Expect: expect}
	if meta != nil {
		out = *meta
		out.Expect = expect
		if meta.Request != nil {
			r := *meta.Request
			out.Request = &r
		}
	}
	st, ct := p.exp.status, p.exp.contentType
	out.Status, out.ContentType = &st, &ct
	if p.exp.contentEncoding != "" {
		enc := p.exp.contentEncoding
		out.ContentEncoding = &enc
	}
	if out.Request == nil {
		out.Request = &MetaRequest{}
	}
	id := p.exp.request.ID
	out.Request.ID = &id
	out.Request.Context = p.exp.request.Context
	comment := fmt.Sprintf("Promoted from %s/ to %s/ by airlock promote %s on %s.", kind, opts.To, gate.Version, time.Now().UTC().Format(time.RFC3339))
	if expect != nil {
		comment += "\nThe gate refuses it with " + expect.Reason + "."
	}

	dst := filepath.Join(vdir, opts.To)
	if err := checkWritable(dst); err != nil {
		return nil, err
	}
	taken, err := takenNames(dst)
	if err != nil {
		return nil, err
	}
	if taken[stem] {
		return nil, fmt.Errorf("%w: %s already holds a fixture named %q", ErrFixtureExists, dst, stem)
	}
	moves := [][2]string{{body, filepath.Join(dst, name)}}
	for _, extra := range []string{f.OutputSchema, f.Golden} {
		if exists(extra) {
			moves = append(moves, [2]string{extra, filepath.Join(dst, filepath.Base(extra))})
		}
	}
	sidecar := newFile{path: filepath.Join(dst, stem+MetaSuffix), data: marshalMeta(&out, comment)}
	if err := moveAll(dst, moves, sidecar, f.Meta); err != nil {
		return nil, err
	}
	moved := moves
	if f.Meta != "" {
		moved = append(moved, [2]string{f.Meta, sidecar.path})
	}
	return &Promotion{Moved: moved, Body: moves[0][1], Verdict: v, Expect: expect}, nil
}

// bodyFor finds the one body file of a fixture stem.
func bodyFor(stemPath string) (string, error) {
	dir, stem := filepath.Dir(stemPath), filepath.Base(stemPath)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", &gate.ConfigError{File: dir, Err: err}
	}
	for _, e := range entries {
		if n := e.Name(); !isSidecar(n) && !strings.HasPrefix(n, ".") && bodyStem(n) == stem {
			return filepath.Join(dir, n), nil
		}
	}
	return "", &gate.ConfigError{File: stemPath + MetaSuffix, Msg: "sidecar without a body file " + stem + ".<ext>"}
}

func exists(path string) bool {
	if path == "" {
		return false
	}
	_, err := os.Lstat(path)
	return err == nil
}

// moveAll links each source to its destination and creates the new
// sidecar, then removes the sources (and oldSidecar, when set). Any failure
// before the removals undoes what was created; a failure during them links
// the removed sources back and then removes the destinations, so the
// fixture is whole in exactly one place.
func moveAll(dir string, moves [][2]string, sidecar newFile, oldSidecar string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%w: %v", ErrUnwritable, err)
	}
	var created []string
	undo := func() {
		for _, c := range created {
			os.Remove(c)
		}
	}
	for _, m := range moves {
		if err := linkNew(m[0], m[1]); err != nil {
			undo()
			return err
		}
		created = append(created, m[1])
	}
	if err := createAll(dir, []newFile{sidecar}); err != nil {
		undo()
		return err
	}
	created = append(created, sidecar.path)

	sources := make([]string, 0, len(moves)+1)
	for _, m := range moves {
		sources = append(sources, m[0])
	}
	var removed []int
	for i, src := range sources {
		if err := os.Remove(src); err != nil {
			for _, j := range removed {
				linkNew(moves[j][1], moves[j][0])
			}
			undo()
			return fmt.Errorf("%w: %v", ErrUnwritable, err)
		}
		removed = append(removed, i)
	}
	if oldSidecar != "" {
		// The body has moved: a sidecar left behind would be one without a
		// body, so a failure here is reported but nothing is undone.
		if err := os.Remove(oldSidecar); err != nil {
			return fmt.Errorf("%w: moved, but the old sidecar %s remains: %v", ErrUnwritable, oldSidecar, err)
		}
	}
	return nil
}
