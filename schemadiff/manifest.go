package schemadiff

import (
	"fmt"
	"path"
	"path/filepath"

	"github.com/airlockdev/airlock/gate"
	"github.com/airlockdev/airlock/internal/fileio"
	"github.com/airlockdev/airlock/internal/introspect"
	"github.com/airlockdev/airlock/internal/manifest"
	"github.com/airlockdev/airlock/internal/strictyaml"
	"github.com/airlockdev/airlock/reports"
)

// The manifest families: two revisions of a contract's contract.yaml
// compared from the gate's side. Whatever makes the gate admit what it
// refused (a semantic rule removed or loosened, a limit raised, a content
// type or format policy widened) is breaking; whatever makes it refuse more
// is compatible, and may refuse real traffic; what changes the agent's
// promise (a projected field added, the current version) is a contract
// change.

// ManifestView is one side of a contract diff: the loaded contract, its
// decoded contract.yaml, and where that file is, for the line of a key.
type ManifestView struct {
	// Contract is the loaded contract.
	Contract *gate.Contract
	// M is its decoded manifest (a copy).
	M manifest.Manifest
	// File names the manifest in reports: the OS path, or "REF:path" for a
	// contract read from git.
	File string
	pos  *strictyaml.Positions
}

// NewManifestView reads c's manifest (through the fs.FS it was loaded
// from, at most gate.MaxConfigFile bytes) for the lines of its keys; file
// names it in reports ("" names it as the contract's folder does). A
// manifest that cannot be read again is a *gate.ConfigError.
func NewManifestView(c *gate.Contract, file string) (*ManifestView, error) {
	fsys, dir, shown := introspect.Source(c)
	name := path.Join(dir, gate.ManifestFile)
	if file == "" {
		file = filepath.Join(shown, gate.ManifestFile)
	}
	raw, err := fileio.ReadFS(fsys, name, gate.MaxConfigFile)
	if err != nil {
		return nil, &gate.ConfigError{File: file, Msg: "cannot read manifest: " + err.Error(), Err: err}
	}
	return &ManifestView{Contract: c, M: introspect.Manifest(c), File: file, pos: strictyaml.NewPositions(raw)}, nil
}

// ManifestHandler compares two manifests and reports each difference
// through e as a change of one of its own Rule values. One side is nil
// only for the family of contracts added and removed (a contract present on
// one side); the other families run when both sides are present.
type ManifestHandler func(old, new *ManifestView, e *ManifestEmitter)

// ManifestEmitter collects the changes of one manifest comparison.
type ManifestEmitter struct {
	old, new *ManifestView
	changes  []reports.Change
}

// Side says which manifest holds the key a change is reported at.
type Side bool

// The sides of a manifest change: the new manifest where it has the key,
// the old one for a key only the old manifest has.
const (
	InNew Side = true
	InOld Side = false
)

// Emit reports a change of rule r: oldKey and newKey are JSON Pointers
// into each manifest (where a key exists on one side only, the other side
// names the enclosing key), at names the manifest whose file and line the
// change gives, instance is the instance location the change is about (a
// rule's or projection entry's pointer; "" for none), and the message is
// formatted from format and args.
func (e *ManifestEmitter) Emit(r Rule, oldKey, newKey string, at Side, instance, format string, args ...any) {
	v, key := e.new, newKey
	if at == InOld || v == nil {
		v, key = e.old, oldKey
	}
	c := reports.Change{Rule: r.ID, Level: r.Level, Instance: instance, OldPointer: oldKey, NewPointer: newKey,
		Message: fmt.Sprintf(format, args...)}
	if v != nil {
		c.File = v.File
		c.Line, _ = v.pos.KeyPosition(key)
	}
	e.changes = append(e.changes, c)
}

// Manifests compares two manifests with every manifest family of the
// registry, in registry order. Either side may be nil (a contract added or
// removed); then only the family of contracts added and removed runs.
func Manifests(old, new *ManifestView) []reports.Change {
	e := &ManifestEmitter{old: old, new: new}
	for _, f := range families {
		if f.manifest == nil {
			continue
		}
		if (old == nil || new == nil) && !f.presence {
			continue
		}
		f.manifest(old, new, e)
	}
	return append([]reports.Change{}, e.changes...)
}

// Manifest rule ids: stable API, listed with their levels by Rules and in
// docs/diff.md.
const (
	RuleManifestContractAdded           = "manifest-contract-added"
	RuleManifestContractRemoved         = "manifest-contract-removed"
	RuleManifestVersionAdded            = "manifest-upstream-version-added"
	RuleManifestVersionRemoved          = "manifest-upstream-version-removed"
	RuleManifestCurrentChanged          = "manifest-current-changed"
	RuleManifestProtocolChanged         = "manifest-protocol-changed"
	RuleManifestLimitRaised             = "manifest-limit-raised"
	RuleManifestLimitLowered            = "manifest-limit-lowered"
	RuleManifestContentTypesWidened     = "manifest-content-types-widened"
	RuleManifestContentTypesNarrowed    = "manifest-content-types-narrowed"
	RuleManifestFormatPolicyLoosened    = "manifest-format-policy-loosened"
	RuleManifestFormatPolicyTightened   = "manifest-format-policy-tightened"
	RuleManifestTextPolicyLoosened      = "manifest-text-policy-loosened"
	RuleManifestTextPolicyTightened     = "manifest-text-policy-tightened"
	RuleManifestRuleRemoved             = "manifest-rule-removed"
	RuleManifestRuleLoosened            = "manifest-rule-loosened"
	RuleManifestRuleChanged             = "manifest-rule-changed"
	RuleManifestRuleTightened           = "manifest-rule-tightened"
	RuleManifestRuleAdded               = "manifest-rule-added"
	RuleManifestProjectionFieldAdded    = "manifest-projection-field-added"
	RuleManifestProjectionFieldRemoved  = "manifest-projection-field-removed"
	RuleManifestProjectionFieldRepoint  = "manifest-projection-field-repointed"
	RuleManifestErrorCodesChanged       = "manifest-error-codes-changed"
	RuleManifestErrorContractAdded      = "manifest-error-contract-added"
	RuleManifestErrorContractRemoved    = "manifest-error-contract-removed"
	RuleManifestErrorContractChanged    = "manifest-error-contract-changed"
	RuleManifestErrorOutcomeChanged     = "manifest-error-outcome-changed"
	RuleManifestStatusPolicyChanged     = "manifest-status-policy-changed"
	RuleManifestAgentErrorSchemaChanged = "manifest-agent-error-schema-changed"
)

const mayRefuse = " The gate refuses more than before, so it may refuse real traffic (see the gate-impact view)."

var (
	manifestContractAdded = Rule{ID: RuleManifestContractAdded, Level: reports.ContractChange,
		Description: "A contract folder was added: a new tool reaches the agent through the gate."}
	manifestContractRemoved = Rule{ID: RuleManifestContractRemoved, Level: reports.ContractChange,
		Description: "A contract folder was removed: the tool no longer has a contract, so connectors that gate it can no longer load one."}
	manifestVersionAdded = Rule{ID: RuleManifestVersionAdded, Level: reports.ContractChange,
		Description: "An upstream version was added to upstream_versions: responses that name it are now judged (by its own schema, rules and projection) where calls naming it were refused."}
	manifestVersionRemoved = Rule{ID: RuleManifestVersionRemoved, Level: reports.Compatible,
		Description: "An upstream version was removed from upstream_versions: calls that name it can no longer be judged." + mayRefuse}
	manifestCurrentChanged = Rule{ID: RuleManifestCurrentChanged, Level: reports.ContractChange,
		Description: "current changed: a call that names no upstream version is judged by another version's schema, rules and projection."}
	manifestProtocolChanged = Rule{ID: RuleManifestProtocolChanged, Level: reports.Breaking,
		Description: "protocol, result or text_block changed (top level or in an upstream version): the gate reads another part of the body as the value it checks, so what it admits is not comparable."}
	manifestLimitRaised = Rule{ID: RuleManifestLimitRaised, Level: reports.Breaking,
		Description: "A limit was raised (max_bytes, max_depth, max_number_length or max_string_length, defaults filled in) or member_fold_collision was turned off: the gate admits bodies it refused."}
	manifestLimitLowered = Rule{ID: RuleManifestLimitLowered, Level: reports.Compatible,
		Description: "A limit was lowered, or member_fold_collision turned back on." + mayRefuse}
	manifestContentTypesWidened = Rule{ID: RuleManifestContentTypesWidened, Level: reports.Breaking,
		Description: "content_types admits a media type it did not (defaults filled in: application/json, application/*+json; a new entry that an old one already covers, such as application/problem+json beside application/*+json, is no widening and is not reported): the gate admits bodies served under it."}
	manifestContentTypesNarrowed = Rule{ID: RuleManifestContentTypesNarrowed, Level: reports.Compatible,
		Description: "content_types no longer admits a media type it did (an old entry no new entry covers)." + mayRefuse}
	manifestFormatPolicyLoosened = Rule{ID: RuleManifestFormatPolicyLoosened, Level: reports.Breaking,
		Description: "The format policy of a format was loosened (assert to a named checker or annotate, a checker to annotate or to another checker; default filled in): values the old policy refused are admitted."}
	manifestFormatPolicyTightened = Rule{ID: RuleManifestFormatPolicyTightened, Level: reports.Compatible,
		Description: "The format policy of a format was tightened (annotate to a checker or assert, a checker to assert)." + mayRefuse}
	manifestTextPolicyLoosened = Rule{ID: RuleManifestTextPolicyLoosened, Level: reports.Breaking,
		Description: "The text policy of projected strings was loosened for a field (default, fields or detail_fields, built-in defaults filled in): a larger or no max_length, another or no normalization, more controls, bidi, zero_width or tag_characters allowed, untrusted_text dropped."}
	manifestTextPolicyTightened = Rule{ID: RuleManifestTextPolicyTightened, Level: reports.Compatible,
		Description: "The text policy of projected strings was tightened for a field." + mayRefuse}
	manifestRuleRemoved = Rule{ID: RuleManifestRuleRemoved, Level: reports.Breaking,
		Description: "A semantic rule (binding, context, freshness, membership, count, cel or custom) of an upstream version was removed: the gate admits responses it refused, a request-id binding removed lets an answer to another call through."}
	manifestRuleLoosened = Rule{ID: RuleManifestRuleLoosened, Level: reports.Breaking,
		Description: "A freshness rule's window was widened (a larger max_age or max_skew, or max_age set to 0, no age limit): the gate admits older or later stamps."}
	manifestRuleChanged = Rule{ID: RuleManifestRuleChanged, Level: reports.Breaking,
		Description: "A semantic rule kept its name but changed its kind, pointer, context key or expression: it checks something else, so the gate may admit what it refused."}
	manifestRuleTightened = Rule{ID: RuleManifestRuleTightened, Level: reports.Compatible,
		Description: "A freshness rule's window was narrowed (a smaller max_age or max_skew)." + mayRefuse}
	manifestRuleAdded = Rule{ID: RuleManifestRuleAdded, Level: reports.Compatible,
		Description: "A semantic rule was added to an upstream version." + mayRefuse}
	manifestProjectionFieldAdded = Rule{ID: RuleManifestProjectionFieldAdded, Level: reports.ContractChange,
		Description: "An upstream version's projection gained an agent field: the agent sees a value it did not."}
	manifestProjectionFieldRemoved = Rule{ID: RuleManifestProjectionFieldRemoved, Level: reports.Breaking,
		Description: "An upstream version's projection lost an agent field: the agent no longer gets a value it relied on."}
	manifestProjectionFieldRepointed = Rule{ID: RuleManifestProjectionFieldRepoint, Level: reports.Breaking,
		Description: "An agent field of an upstream version's projection copies from another JSON Pointer: the agent gets another value under the same name."}
	manifestErrorCodesChanged = Rule{ID: RuleManifestErrorCodesChanged, Level: reports.ContractChange,
		Description: "error_codes changed (default filled in: all three codes): the agent may see a code it did not, or an INVALID_RESPONSE where it saw another."}
	manifestErrorContractAdded = Rule{ID: RuleManifestErrorContractAdded, Level: reports.ContractChange,
		Description: "An upstream version declares a new error contract (errors entry): responses it matches reach the agent as its code (and detail) instead of the refusal they had."}
	manifestErrorContractRemoved = Rule{ID: RuleManifestErrorContractRemoved, Level: reports.ContractChange,
		Description: "An error contract was removed: responses it matched get the refusal of the check that fails first (INVALID_RESPONSE, or the status policy's code)."}
	manifestErrorContractChanged = Rule{ID: RuleManifestErrorContractChanged, Level: reports.Breaking,
		Description: "An error contract's when, schema or detail changed: it may match responses it did not, or pass other values to the agent as detail. The schema's contents are compared as a comparison of their own (\"<tool> upstream <version> error <name>\"); a schema file renamed whose contents compare equal, nothing else changed, is not reported."}
	manifestErrorOutcomeChanged = Rule{ID: RuleManifestErrorOutcomeChanged, Level: reports.ContractChange,
		Description: "An error contract's code or retryable changed: the agent is told something else for the same upstream error."}
	manifestStatusPolicyChanged = Rule{ID: RuleManifestStatusPolicyChanged, Level: reports.ContractChange,
		Description: "statuses or retryable changed: the agent is told another error code or retry flag for the same refusal."}
	manifestAgentErrorSchemaChanged = Rule{ID: RuleManifestAgentErrorSchemaChanged, Level: reports.Breaking,
		Description: "agent_error_schema was added, removed or renamed: the detail of matched upstream errors is checked against another closed shape, or none. When both contracts name one, the contents are compared as a comparison of their own (\"<tool> agent error schema\"); a rename whose contents compare equal is not reported."}
)
