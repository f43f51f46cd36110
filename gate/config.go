package gate

import "github.com/airlockdev/airlock/internal/config"

// ConfigError is the error of a contract's configuration (exit code 2 in
// the CLI): a manifest or schema file that is unreadable, malformed, or
// names something that does not exist. Load, LoadAll, LoadDir and
// LoadAllDir return it, wrapped in nothing, so errors.As finds it:
//
//   - File is the path as given (inside the fs.FS for Load and LoadAll, the
//     OS path for LoadDir and LoadAllDir);
//   - Line and Column are 1-based, 0 when unknown;
//   - Key is the offending key's RFC 6901 JSON Pointer in the file
//     ("/upstream_versions/v1/schema"), "" when unknown;
//   - Msg says what was found and what was expected;
//   - Err is the underlying error, if any (Unwrap returns it, so errors.Is
//     sees fs.ErrNotExist or ErrOutsideContract through it).
//
// Its Error method renders "file:line:column: key: message". It is not used
// for command-line flags or for calls Check cannot judge (see ErrUsage).
type ConfigError = config.Error

// MaxConfigFile is the largest manifest, in bytes, that the gate reads
// (1 MiB); a larger contract.yaml is a *ConfigError.
const MaxConfigFile = config.MaxFile
