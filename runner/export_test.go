package runner_test

import "airlock/semantic"

func parsePointer(s string) (semantic.Pointer, error) { return semantic.ParsePointer(s) }
