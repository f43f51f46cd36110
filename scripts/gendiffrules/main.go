// Command gendiffrules prints docs/diff.md: the prose below, then the
// table of the diff rule registry (schemadiff.RulesTable):
//
//	go run ./scripts/gendiffrules > docs/diff.md
package main

import (
	"fmt"

	"github.com/airlockdev/airlock/schemadiff"
)

const intro = "# airlock diff\n\n" +
	"`airlock diff` compares two JSON Schemas and classifies every change from the **consumer's\n" +
	"side**: the agent or the adapter *reads* what the upstream sends. Whatever lets the producer\n" +
	"send something the old schema refused is `breaking` (a new enum value, a larger `maxLength`,\n" +
	"a dropped `required`, an opened object, a new `oneOf` alternative); whatever only narrows what\n" +
	"may arrive is `compatible`; a change someone must decide on although nothing the consumer\n" +
	"relied on is gone is a `contract-change` (a new member of a closed object, optional or not:\n" +
	"never silent).\n\n" +
	"```sh\n" +
	"airlock diff old.schema.json new.schema.json            # two schema files\n" +
	"airlock diff old/deploy_status schemas/deploy_status    # two contract folders\n" +
	"airlock diff --base origin/main [--tool NAME]           # schemas/ against a git revision\n" +
	"airlock diff --tool deploy_status v0 v1                 # two upstream versions of one contract\n" +
	"airlock diff --format json|markdown ...                 # default: text\n" +
	"airlock diff --fail-on breaking|gate-impact ...         # default: breaking\n" +
	"airlock diff --sarif diff.sarif ...                     # also SARIF 2.1.0, see sarif.md\n" +
	"```\n\n" +
	"- **Inputs.** A schema file may `$ref` the `*.json` files of its own folder and the shared\n" +
	"  components of the `_components` folder beside that folder\n" +
	"  (`../_components/<api>/<version>/<file>.json`, see\n" +
	"  [contracts.md](contracts.md#shared-components)), and nothing else (no network, no other\n" +
	"  folder, the same confinement as contracts); it is parsed with the\n" +
	"  gate's strict JSON rules and loaded as the gate loads contracts: JSON Schema 2020-12 only,\n" +
	"  and a keyword, format, bound, pattern or reference the validator would not enforce as\n" +
	"  written is a configuration error (exit 2; see [contracts.md](contracts.md#what-load-refuses)). Two contract folders compare their agent-facing schemas,\n" +
	"  their agent error schemas (`agent_error_schema`, when both have one), each upstream version\n" +
	"  present in both and, after it, each of its error contracts present in both (matched by\n" +
	"  name, whatever their schema files are called: `review_status upstream v2 error not_found`),\n" +
	"  then their manifests (below). `--tool NAME` (with `--schemas DIR`) compares two\n" +
	"  upstream versions of `DIR/NAME/contract.yaml`.\n" +
	"- **How.** `$ref`s are resolved first; `$ref` targets and `allOf` members that apply to one\n" +
	"  instance location are merged; `oneOf`/`anyOf` are distributed into alternatives (one\n" +
	"  branch of each group, with the rest of the location; an alternative that admits no value,\n" +
	"  say one an `allOf` beside the `oneOf` excludes by `const` or `type`, is left out), each new\n" +
	"  alternative paired with the old one closest to it. A new alternative that some old one\n" +
	"  already covers (no breaking difference) is compared with it, not reported as added.\n" +
	"  Alternatives whose `const`/`enum` at the same property allow no common value (a\n" +
	"  discriminator: `kind: a` and `kind: b`) are never paired, so a tagged union of 40 branches\n" +
	"  costs about 40 trial comparisons, not 1,600, and a branch of a new kind is reported as added.\n" +
	"  A `$dynamicRef` is followed to its initial target, as a `$ref`: that is exact when its\n" +
	"  anchor has one `$dynamicAnchor` of that name in the documents compared. One whose anchor\n" +
	"  has more (the dynamic scope could choose another, JSON Schema Core 2020-12 §8.2.3.2) is\n" +
	"  refused with a configuration error naming its file and JSON Pointer (exit 2), rather than\n" +
	"  compared with the wrong target; contracts rarely use one.\n" +
	"- **Each pair of subschemas is compared once.** The lists of schemas that apply at a location,\n" +
	"  old and new, are compared once wherever they are reached, so a definition `$ref`'d from a\n" +
	"  thousand places costs one comparison and a recursive schema ends where its pair comes back;\n" +
	"  a subschema that is only a `$ref` (with annotations at most) is the same pair as its target,\n" +
	"  so a property added to a shared component is one change, not one per `$ref` site.\n" +
	"  A change behind such a shared pair is **reported once**, at the shallowest instance location\n" +
	"  where it applies (the first in walk order among equals), and its sentence names up to three\n" +
	"  other locations (the shallowest) and how many more there are (counted by the paths that reach them), or says\n" +
	"  that they recur: `/user/login: maxLength 8 became maxLength 16 (reported once; the same\n" +
	"  schemas also apply at /head/user/login, /repo/owner/login, /base/user/login and at 12 more\n" +
	"  instance location(s))`. The output grows with the changes, not with the places a\n" +
	"  definition is used.\n" +
	"- **Bounds.** Time and memory are proportional to the pairs compared, at most 16 per JSON\n" +
	"  object or array in the two schemas' files plus 10,000, and to the steps between them (each\n" +
	"  place a pair is reached), at most 8 per pair of that bound; a comparison that needs more is a\n" +
	"  configuration error that names the widest `oneOf`/`anyOf` distribution seen. The groups at\n" +
	"  one location multiply (3 groups of 5 branches are 125 alternatives, each paired with each\n" +
	"  of the other side's): more than 64 alternatives is a configuration error naming each group's\n" +
	"  file, JSON Pointer and number of branches. The depth of the walk is the number of reference\n" +
	"  tokens of the instance location (a `oneOf`/`anyOf`, such as the importer's nullable\n" +
	"  `anyOf: [{type: null}, …]`, adds none); a location deeper than 64 tokens (the gate's default\n" +
	"  `max_depth`), or more than 64 `oneOf`/`anyOf` distributions nested at one location, is never\n" +
	"  skipped in silence: the diff stops with a configuration error naming the instance location\n" +
	"  and the new schema's keyword location (exit 2). GitHub's 969 component schemas (5.3 MB in 970\n" +
	"  files, through `airlock import openapi`) diff against themselves in 4 to 5 s on a shared\n" +
	"  two-core machine and 360 MB of heap, compiling the two sides included: 51,000 pairs,\n" +
	"  against a bound of 1.7 million; GitHub Enterprise Server 3.17 against 3.19 the same way\n" +
	"  (4.7 MB each) reports 50 changes, none breaking, each change to a shared component once,\n" +
	"  in 3 to 5 s (`make bench`).\n" +
	"  Keywords the diff does not classify (`not`, `if`/`then`/`else`, `patternProperties`, …) are\n" +
	"  still compared, and a change in them is reported as breaking for someone to review. They\n" +
	"  are compared by a digest of every keyword that constrains an instance, at any depth and\n" +
	"  through `$ref`s, memoised per schema (16 digests per JSON object or array plus 10,000 at\n" +
	"  most, else a configuration error): a change 14 levels down inside a `not` is reported.\n" +
	"- **Each change** has a rule id from the registry below (stable API), its level, the\n" +
	"  instance location (a JSON Pointer into the response, `*` for every array element or\n" +
	"  additional member, empty for the whole response), the JSON Pointer of the change in each\n" +
	"  schema (its keyword location from the schema's root, through any `$ref`, as in JSON\n" +
	"  Schema's `keywordLocation`; where a keyword exists on one side only, the other side points\n" +
	"  at the enclosing schema), and one sentence. Text, Markdown and JSON write a pointer alike:\n" +
	"  the root, an empty JSON Pointer, is `\"\"` in all three, for schemas and manifests.\n" +
	"- **Where each change is written.** A schema change is placed at the line and column of its\n" +
	"  new-side keyword in the new schema's files, `$ref`s followed into sibling files and shared\n" +
	"  components (a removed member at the enclosing schema); a manifest change at its key's line\n" +
	"  of `contract.yaml`. Every format uses that place: the text report's `at FILE:LINE:COLUMN`,\n" +
	"  the Markdown and job-summary tables, the annotations, SARIF, and the JSON report's\n" +
	"  optional `new_file`, `new_line` and `new_column` (format version 3: optional fields only).\n" +
	"- **Output.** Text (default), `--format markdown` (for a pull request) or `--format json`,\n" +
	"  whose format is published as `schemas/diff.schema.json` (`airlock schema diff`). Between\n" +
	"  contracts, text and Markdown write a contract without changes as one line\n" +
	"  (`review_status: no changes`), and the comparisons without changes of a contract that has\n" +
	"  some as one line too (`review_status: no changes in agent schema, upstream v1`); JSON\n" +
	"  lists every comparison. `--format github` is the text, then a GitHub Actions annotation\n" +
	"  per breaking change (an error) and per other change with gate impact (a warning);\n" +
	"  `--summary FILE` writes a Markdown job summary of the same changes (README, \"In CI\").\n" +
	"  `--sarif FILE` also writes every change as SARIF 2.1.0 for code\n" +
	"  scanning (breaking: error, contract-change: warning, compatible: note), each where it is\n" +
	"  written (above); see [sarif.md](sarif.md).\n" +
	"- **Exit codes.** `0` nothing to fail on, `1` findings: a breaking change (`--fail-on\n" +
	"  breaking`, the default) or a change with gate impact (`--fail-on gate-impact`), `2` usage\n" +
	"  or configuration error (a missing file, a `$ref` outside the folder, a file that is not\n" +
	"  strict JSON, an unknown upstream version, not a git work tree, an unknown git revision),\n" +
	"  `3` internal error.\n\n" +
	"`airlock drift` uses the same comparison between consecutive upstream versions of a\n" +
	"contract ([drift.md](drift.md)).\n\n" +
	"## Contract diff and gate impact\n\n" +
	"A contract is more than its schemas: the manifest decides what the gate refuses before and\n" +
	"after the schema. Two contracts (two folders, or `--base`) are compared manifest against\n" +
	"manifest with the `manifest-*` rules of the registry, from the **gate's side**: whatever\n" +
	"makes the gate admit what it refused is `breaking` — a semantic rule removed\n" +
	"(`manifest-rule-removed`: dropping the request-id binding lets an answer to another call\n" +
	"through), a rule loosened or changed (a freshness window from 30m to 720h), a limit raised\n" +
	"(`max_bytes` to 1 GiB), content types widened, the format or text policy loosened, an error\n" +
	"contract that may match more. Tightenings are `compatible` and say that they may refuse real\n" +
	"traffic. What changes the agent's promise is a `contract-change` (a projected field added, a\n" +
	"new `current`, an upstream version added, error codes); a projected field removed or\n" +
	"re-pointed is `breaking`. Limits, content types, format and text policies are compared with\n" +
	"their defaults filled in, so writing a default out changes nothing; rules and error contracts\n" +
	"are matched by name. Content types are judged by the media types they admit, as the gate\n" +
	"matches them: `application/problem+json` added beside `application/*+json` admits nothing\n" +
	"new and is not reported; `application/*+json` added beside `application/problem+json` is a\n" +
	"widening. An error contract's schema and the agent error schema are compared by content as\n" +
	"response schemas are (above), at the same levels: a loosening is breaking, since the gate then\n" +
	"admits an error shape it refused.\n\n" +
	"A manifest change gives the manifest (`file`; the new one, or the old one for a key only it\n" +
	"has), the `line` of the key there, and JSON Pointers into each manifest as `old_pointer` and\n" +
	"`new_pointer` (where a key exists on one side only, the other side names the enclosing key);\n" +
	"its `instance` is the instance location the rule or projection entry reads.\n\n" +
	"**`--base REF`** compares every contract of `--schemas DIR` in the working tree (or only\n" +
	"`--tool NAME`'s) with the same folders at git revision `REF` of the repository `DIR` is in.\n" +
	"The old files are read with `git ls-tree -r -z` and `git cat-file --batch`, never checked\n" +
	"out, and loaded from memory as the gate loads any contract; they are named `REF:path`. Only\n" +
	"the folders compared (those holding a `contract.yaml` on either side, or `--tool`'s) and\n" +
	"`_components` are read; a file beside them or an unrelated folder is never opened. In a\n" +
	"contract folder, a symbolic link (mode 120000), a submodule or a file over 8 MiB\n" +
	"(`schemadiff.MaxGitFile`) fails that tool only, and so does an old contract that does not\n" +
	"load (a pull request that fixes a broken contract): its manifest comparison reports the new\n" +
	"contract as `manifest-contract-added`, the sentence ending \"the old contract did not load:\"\n" +
	"and the error naming the file, and every other tool is compared as usual. In `_components`\n" +
	"such an entry is a configuration error (it is shared by every contract), and so is more than\n" +
	"10,000 files or 256 MiB read in all (`schemadiff.MaxGitEntries`, `MaxGitTotal`). Contracts\n" +
	"on one side only are reported as `manifest-contract-added` or `manifest-contract-removed`. Not\n" +
	"a git work tree, a revision that names no commit, or a working-tree contract that does not\n" +
	"load exits 2.\n\n" +
	"**Gate impact.** Each change between two contracts says what it means to the gate: the\n" +
	"agent fields whose projection pointer its instance location touches (one is a prefix of the\n" +
	"other, `*` matching any element; for the agent-facing schema, the fields under it) and the\n" +
	"semantic rules whose pointer it touches; for an error contract's schema and the agent error\n" +
	"schema, the detail fields it touches (`detail.upstream_code`). A manifest change that alters\n" +
	"what reaches the agent names the agent fields it alters, whatever its level: a projection\n" +
	"field added, removed or re-pointed (that field), an upstream version added (its projected\n" +
	"fields), `current` changed (the projected fields of the old and the new current version). A change reported once behind a shared `$ref` is\n" +
	"judged at every instance location it applies at, not only the one it is reported at: the\n" +
	"watched pointers are followed down the comparison's graph of schema pairs. For each narrowing (a `compatible` change: a type\n" +
	"narrowed, a `required` added, bounds tightened, an enum value removed, an object closed, a\n" +
	"limit lowered, a rule added or tightened …, and a breaking change that refuses some of what\n" +
	"the old contract admitted too: a member retyped, a `const`, `pattern` or `format` changed, a\n" +
	"semantic rule changed) the accepted, historical and recorded fixtures of\n" +
	"the tool under `--fixtures DIR` (default `fixtures`) run through the old and the new\n" +
	"contract, and each fixture the old admits and the new refuses is counted against the\n" +
	"narrowing that explains the refusal, by its stage. A schema refusal goes first by the\n" +
	"refusal's keyword (from the audit record's reason and keyword location): `schema.required`\n" +
	"to a property that became required and that the refused object lacks, `schema.enum` and\n" +
	"`schema.const` to an enum or const change, `schema.type` to a type narrowed (no longer\n" +
	"nullable among them) or changed (`humidity` from number to string refuses every number),\n" +
	"`maxLength`/`minLength`, `pattern` and `format` to the string rules,\n" +
	"`additionalProperties`/`unevaluatedProperties` to an object closed, the numeric, array and\n" +
	"member bounds to theirs, `oneOf`/`anyOf` to a branch removed; then by instance location (the\n" +
	"change's and the refusal's overlap); failing that, to a property added to an open object, a\n" +
	"branch removed or a `$ref` re-targeted at or above the refusal. A semantic refusal goes to\n" +
	"the rule of its name, a transport or parse refusal to a lowered limit or narrowed content\n" +
	"types, a projection refusal to the text policy or, by keyword and location, to the\n" +
	"agent-facing schema (error schemas get no fixture evidence: a response an error contract\n" +
	"matches is refused by both contracts). \"this narrowing refuses 3 fixture(s) the old contract\n" +
	"admitted\", with up to 5 paths. The gate stops at the first stage that refuses, so a fixture\n" +
	"refused by one narrowing is judged against the narrowings of later stages on their own: those\n" +
	"of its upstream version's schema (and a format policy tightened) by validating the value the\n" +
	"old contract admitted against the new schema, those of the agent-facing schema by validating\n" +
	"the old agent output's data against the new agent schema when the version's projection and\n" +
	"the text policy are unchanged (so the new contract would project the same data); a fixture\n" +
	"either refuses is credited to it too. A later narrowing that cannot be judged that way (a\n" +
	"semantic rule, a text policy) never claims to refuse no fixture: \"not shown to refuse a\n" +
	"fixture; 2 fixture(s) not judged: refused earlier by manifest-limit-lowered\n" +
	"/limits/max_bytes\" (JSON `not_judged`, `refused_earlier_by`). This costs at most two\n" +
	"validations per fixture refused. A refusal that no reported change explains (a keyword the\n" +
	"diff does not classify, say `not`) is credited to no change: the evidence line counts it and\n" +
	"names up to 5 of the fixtures. Only the fixtures of upstream versions both contracts have are\n" +
	"run: a version removed or renamed whose fixture folder is still there fails nothing, and\n" +
	"`manifest-upstream-version-removed` shows no fixture evidence (when the\n" +
	"tool's fixture folder holds versions neither contract lists all of, that tool gets no evidence\n" +
	"and the evidence line says why). At most 10,000 fixtures of one tool are run\n" +
	"(`schemadiff.MaxImpactFixtures`).\n" +
	"A `--fixtures` folder that does not exist gives no fixture evidence, and the output says so.\n" +
	"Comparing two schema files or two upstream versions (`--tool`) has no gate-impact view.\n\n" +
	"`--fail-on gate-impact` exits 1 when a change touches a projected field or a rule's pointer,\n" +
	"a narrowing refuses fixtures, a manifest change is breaking, a contract is added, or a manifest change alters what\n" +
	"reaches the agent (`current` changed, an upstream version added, a projection field added,\n" +
	"removed or re-pointed); the JSON output counts them as `gate_impact`. Each of them shows why,\n" +
	"in all three formats, and no other change does: a `gate impact:` line in text, the gate impact\n" +
	"column in Markdown, the `impact` object in JSON (`projected`, `rules`, `fixtures.refused`,\n" +
	"`loosens: true` for a breaking manifest change other than the projection's, \"the gate may now\n" +
	"admit what it refused\", and `repointed` for a re-pointed field, \"the agent's reviewed_by\n" +
	"(upstream v2) now comes from /data/change_id instead of /data/reviewed_by\"). A narrowing\n" +
	"whose evidence does not count says so after `no gate impact:`; in JSON its `impact` object\n" +
	"then holds only that evidence (`fixtures` with `refused: 0`, or `not_judged`), which\n" +
	"`gate_impact` does not count.\n\n" +
	"## Rules\n\n" +
	"The list below is generated from the registry in `schemadiff/rules.go`, in the order the\n" +
	"walk reports changes, the `manifest-*` rules last, in the order the manifests are compared\n" +
	"(`go run ./scripts/gendiffrules > docs/diff.md`), and kept equal to it by a test.\n\n"

func main() {
	fmt.Print(intro + schemadiff.RulesTable())
}
