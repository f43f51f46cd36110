package runner_test

import "github.com/airlockdev/airlock/semantic"

func parsePointer(s string) (semantic.Pointer, error) { return semantic.ParsePointer(s) }
