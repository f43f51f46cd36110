// Package layering holds no code: its test lists every package of the
// module with the module packages it may import, so imports keep pointing
// one way (DESIGN.md, "Packages").
package layering
