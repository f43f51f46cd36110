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
	"airlock diff --tool deploy_status v0 v1                 # two upstream versions of one contract\n" +
	"airlock diff --format json|markdown ...                 # default: text\n" +
	"```\n\n" +
	"- **Inputs.** A schema file may `$ref` the `*.json` files of its own folder and the shared\n" +
	"  components of the `_components` folder beside that folder\n" +
	"  (`../_components/<api>/<version>/<file>.json`, see\n" +
	"  [contracts.md](contracts.md#shared-components)), and nothing else (no network, no other\n" +
	"  folder, the same confinement as contracts); it is parsed with the\n" +
	"  gate's strict JSON rules and loaded as the gate loads contracts: JSON Schema 2020-12 only,\n" +
	"  and a keyword, format, bound, pattern or reference the validator would not enforce as\n" +
	"  written is a configuration error (exit 2; see [contracts.md](contracts.md#what-load-refuses)). Two contract folders compare their agent-facing schemas, then\n" +
	"  each upstream version present in both. `--tool NAME` (with `--schemas DIR`) compares two\n" +
	"  upstream versions of `DIR/NAME/contract.yaml`.\n" +
	"- **How.** `$ref`s are resolved first; `$ref` targets and `allOf` members that apply to one\n" +
	"  instance location are merged; `oneOf`/`anyOf` are distributed into alternatives (one\n" +
	"  branch of each group, with the rest of the location; an alternative that admits no value,\n" +
	"  say one an `allOf` beside the `oneOf` excludes by `const` or `type`, is left out), each new\n" +
	"  alternative paired with the old one closest to it. A new alternative that some old one\n" +
	"  already covers (no breaking difference) is compared with it, not reported as added.\n" +
	"- **Each pair of subschemas is compared once.** The lists of schemas that apply at a location,\n" +
	"  old and new, are compared once wherever they are reached, so a definition `$ref`'d from a\n" +
	"  thousand places costs one comparison and a recursive schema ends where its pair comes back.\n" +
	"  A change behind such a shared pair is **reported once**, at the shallowest instance location\n" +
	"  where it applies (the first in walk order among equals), and its sentence names up to three\n" +
	"  other locations and how many more there are (counted by the paths that reach them), or says\n" +
	"  that they recur: `/user/login: maxLength 8 became maxLength 16 (reported once; the same\n" +
	"  schemas also apply at /head/user/login, /repo/owner/login, /base/user/login and at 12 more\n" +
	"  instance location(s))`. The output grows with the changes, not with the places a\n" +
	"  definition is used.\n" +
	"- **Bounds.** Time and memory are proportional to the pairs compared, at most 16 per JSON\n" +
	"  object or array in the two schemas' files plus 10,000; a comparison that needs more is a\n" +
	"  configuration error that names the widest `oneOf`/`anyOf` distribution seen. The groups at\n" +
	"  one location multiply (3 groups of 5 branches are 125 alternatives, each paired with each\n" +
	"  of the other side's): more than 64 alternatives is a configuration error naming each group's\n" +
	"  file, JSON Pointer and number of branches. Locations nested deeper than 64 are not compared:\n" +
	"  the gate refuses responses nested that deep. GitHub's 969 component schemas (5.3 MB in 970\n" +
	"  files, through `airlock import openapi`) diff against themselves in 4 to 7 s on a shared\n" +
	"  two-core machine and 400 MB of heap, compiling the two sides included: 58,000 pairs,\n" +
	"  against a bound of 1.7 million; GitHub Enterprise Server 3.17 against 3.19 the same way\n" +
	"  (4.7 MB each) reports 74 changes, none breaking, in about 6 s (`make bench`).\n" +
	"  Keywords the diff does not classify (`not`, `if`/`then`/`else`, `patternProperties`, …) are\n" +
	"  still compared, and a change in them is reported as breaking for someone to review.\n" +
	"- **Each change** has a rule id from the registry below (stable API), its level, the\n" +
	"  instance location (a JSON Pointer into the response, `*` for every array element or\n" +
	"  additional member, empty for the whole response), the JSON Pointer of the change in each\n" +
	"  schema (its keyword location from the schema's root, through any `$ref`, as in JSON\n" +
	"  Schema's `keywordLocation`; where a keyword exists on one side only, the other side points\n" +
	"  at the enclosing schema), and one sentence.\n" +
	"- **Output.** Text (default), `--format markdown` (for a pull request) or `--format json`,\n" +
	"  whose format is published as `schemas/diff.schema.json` (`airlock schema diff`).\n" +
	"- **Exit codes.** `0` no breaking change, `1` at least one, `2` usage or configuration error\n" +
	"  (a missing file, a `$ref` outside the folder, a file that is not strict JSON, an unknown\n" +
	"  upstream version), `3` internal error.\n\n" +
	"`airlock drift` uses the same comparison between consecutive upstream versions of a\n" +
	"contract ([drift.md](drift.md)).\n\n" +
	"## Rules\n\n" +
	"The list below is generated from the registry in `schemadiff/rules.go`, in the order the\n" +
	"walk reports changes (`go run ./scripts/gendiffrules > docs/diff.md`), and kept equal to it by\n" +
	"a test.\n\n"

func main() {
	fmt.Print(intro + schemadiff.RulesTable())
}
