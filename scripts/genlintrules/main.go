// Command genlintrules prints the rule table that ends docs/lint.md, from
// the lint rule registry (lint.RulesTable); a test keeps the two equal:
//
//	go run ./scripts/genlintrules   # paste below "## Rules" in docs/lint.md
package main

import (
	"fmt"

	"github.com/airlockdev/airlock/lint"
)

func main() {
	fmt.Print(lint.RulesTable())
}
