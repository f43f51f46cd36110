package schema

// SetMinPrecompileFiles sets minPrecompileFiles and returns a func that
// restores it.
func SetMinPrecompileFiles(n int) (restore func()) {
	old := minPrecompileFiles
	minPrecompileFiles = n
	return func() { minPrecompileFiles = old }
}
