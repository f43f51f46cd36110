package manifest

// Compiles is how many times the embedded contract schema has been
// compiled in this process (0 or 1).
func Compiles() int32 { return compiles.Load() }
