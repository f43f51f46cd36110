package gate

// Default limits, used where a contract leaves a limit at 0.
const (
	DefaultMaxBytes        = 1 << 20 // 1 MiB of decoded body
	DefaultMaxDepth        = 64      // nesting of objects and arrays
	DefaultMaxNumberLength = 128     // bytes in one number token
	DefaultMaxStringLength = 1 << 16 // 64 KiB in one unescaped string or member name
)

// The memory one Check holds is bounded by its contract's byte limit:
// at most MemoryBase + MemoryPerByte × MaxBytes bytes of heap
// (Limits.MemoryBound). The body is read into one buffer (up to 2 ×
// MaxBytes while it grows); a JSON body is parsed onto a tape of at most
// 15 bytes per body byte (strictjson.ParseTape; about 3 for API pages,
// half as much again while it is sized); an MCP result, and a body
// matched against error shapes after its schema refused it, are also
// built as Go maps, at most 72 bytes per body byte plus 64 KiB
// (strictjson.Parse); the compiled validator, the projection, the
// envelope and the audit record allocate little beside them
// (internal/validator). airlock check sets the Go runtime's soft memory
// limit (GOMEMLIMIT) to this bound unless the environment sets one.
const (
	MemoryPerByte = 80
	MemoryBase    = 32 << 20
)

// MemoryBound is the heap one Check under l may hold, in bytes:
// MemoryBase + MemoryPerByte × MaxBytes (defaults filled in).
func (l Limits) MemoryBound() int64 {
	return MemoryBase + MemoryPerByte*l.withDefaults().MaxBytes
}

// MaxMaxBytes is the largest MaxBytes honoured (1 TiB); the manifest's
// schema allows at most 1 GiB.
const MaxMaxBytes = 1 << 40

// Limits bound the work one response can cause; they come from the
// manifest's "limits" section. Each field's zero value means its default;
// a negative value is a configuration error (the manifest schema refuses
// it). Contract.Limits returns them with defaults filled in.
type Limits struct {
	// MaxBytes is the largest decoded body, in bytes, that the transport
	// stage reads; 0 means DefaultMaxBytes (1 MiB). A longer body is refused
	// with transport.too_large after reading MaxBytes+1 bytes; a gzip body
	// is counted after inflation.
	MaxBytes int64 `yaml:"max_bytes" json:"max_bytes"`
	// MaxDepth is the deepest nesting of objects and arrays the parse stage
	// accepts (a top-level scalar is depth 0, "[]" depth 1); 0 means
	// DefaultMaxDepth (64). Deeper input is refused with parse.depth.
	MaxDepth int `yaml:"max_depth" json:"max_depth"`
	// MaxNumberLength is the longest number token, in bytes, that the parse
	// stage accepts; 0 means DefaultMaxNumberLength (128). Longer tokens are
	// refused with parse.number before any validator sees them.
	MaxNumberLength int `yaml:"max_number_length" json:"max_number_length"`
	// MaxStringLength is the longest string or member name, in bytes after
	// unescaping, that the parse stage accepts; 0 means
	// DefaultMaxStringLength (64 KiB). Longer ones are refused with
	// parse.string_too_long.
	MaxStringLength int `yaml:"max_string_length" json:"max_string_length"`
	// AllowFoldCollisions turns off the parse stage's case-folding check:
	// by default (false) two member names of one object that differ but
	// are equal under Unicode simple case folding ("Role" and "role"; "ſ"
	// U+017F and "s"; the Kelvin sign U+212A and "k") are refused with
	// parse.member_fold_collision, since a case-insensitive decoder
	// downstream (Go's encoding/json among them) reads them as one member.
	// The manifest's limits.member_fold_collision: false sets it. Exact
	// repeats stay parse.duplicate_member either way.
	AllowFoldCollisions bool `yaml:"-" json:"-"`
}

// withDefaults returns l with every zero field set to its default.
func (l Limits) withDefaults() Limits {
	if l.MaxBytes == 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxBytes > MaxMaxBytes {
		l.MaxBytes = MaxMaxBytes
	}
	if l.MaxDepth == 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxNumberLength == 0 {
		l.MaxNumberLength = DefaultMaxNumberLength
	}
	if l.MaxStringLength == 0 {
		l.MaxStringLength = DefaultMaxStringLength
	}
	return l
}
