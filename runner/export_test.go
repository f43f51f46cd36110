package runner_test

import "github.com/airlockdev/airlock/jsonpointer"

func parsePointer(s string) (jsonpointer.Pointer, error) { return jsonpointer.Parse(s) }
