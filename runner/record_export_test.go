package runner

// ReadMeta exposes the strict sidecar reader to the specs: a sidecar that
// record or promote wrote must read back under the published schema.
var ReadMeta = readMeta
