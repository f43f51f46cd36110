package strictyaml

// Bounds on airlock's YAML files (contract manifests, fixture sidecars and
// defaults, request files). With them, any file of at most config.MaxFile
// bytes (1 MiB) is decoded, or refused with a *config.Error naming the file
// and line, with at most 64 MB allocated and in time linear in its size.
// The hostile-config battery checks the 64 MB in make test
// (hostile_test.go), and make bench prints each hostile file's bytes
// allocated per input byte beside a harmless file of the same size.
//
// MaxDepth, MaxIndent and MaxNodes (MaxSchemaNodes) are enforced by a
// pre-scan (scan.go) that reads the file the way the YAML scanner will and
// counts before the YAML parser (go.yaml.in/yaml/v3) allocates anything:
// the parser builds about 200 bytes per node, and every walk after it
// recurses once per level. The parsed tree is then checked again, exactly,
// for all the bounds before anything decodes it; MaxMappingKeys and
// MaxKeys are enforced there, since building the tree is linear and
// decoding is where keys cost.
const (
	// MaxDepth is how deeply collections (mappings and sequences) may nest,
	// block and flow style alike and compact forms included ("- - x",
	// "? ? x", "[a: b]"); a root collection is depth 1. airlock's own
	// files nest at most 6 deep (a manifest's
	// /upstream_versions/v2/rules/0/context/key); request arguments get the
	// rest.
	MaxDepth = 32

	// MaxIndent is the deepest block indentation, in columns, of a line
	// that starts a key, an entry or a value. Indentation costs the parser
	// nothing by itself; no airlock file needs more.
	MaxIndent = 128

	// MaxNodes is how many nodes a file may hold: scalars, mappings and
	// sequences, keys included, and the empty values YAML implies ("key:"
	// with nothing after it). The pre-scan's count is exact for ordinary
	// YAML and errs high, never low, for odd forms (tags, "?" keys). At
	// MaxNodes the costliest file (a flow list of one-letter scalars
	// decoded into an interface) allocates about 42 MB; ordinary YAML has
	// a node per 11 bytes or more, so a 1 MiB file of it loads (the
	// battery's harmless 1 MiB requests file has 94,000 nodes).
	MaxNodes = 120_000

	// MaxSchemaNodes is MaxNodes for a file checked against a published
	// JSON Schema (contract manifests, sidecars): the validator allocates
	// up to about 1 KB per node (contract.schema.json with every key and
	// value failing its pattern), against about 350 bytes for the rest.
	// The largest bundled manifest has fewer than 100 nodes.
	MaxSchemaNodes = 25_000

	// MaxMappingKeys is how many keys one mapping may hold. The YAML
	// decoder compares each key of a mapping with every later one (k²/2
	// comparisons for k keys), so this bounds its cost per key.
	MaxMappingKeys = 1_000

	// MaxKeys is how many keys the whole file may hold: with MaxMappingKeys
	// it bounds the decoder's duplicate-key comparisons to
	// MaxKeys × MaxMappingKeys / 2 (25 million), and it bounds what the
	// decoded maps hold. A 1 MiB requests file of ordinary calls has about
	// 41,000.
	MaxKeys = 50_000
)
