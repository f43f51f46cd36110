// Command genreasons prints docs/reasons.md from the gate's reason and
// warning registries (gate.Reasons, gate.WarningCodes):
//
//	go run ./scripts/genreasons > docs/reasons.md
package main

import (
	"fmt"
	"strings"

	"github.com/airlockdev/airlock/gate"
)

func main() {
	fmt.Print("# Reason codes\n\nEvery refusal carries one reason code, `stage.name`, for the operator (audit record, reports).\nThe agent sees only the error code and whether to retry. The codes are stable API; the list\nbelow is kept equal to the registry in `gate/reasons.go` by a test, and `airlock reasons` prints it.\n\nRetryable is the default policy; a contract overrides it per reason with `retryable:` in\n`contract.yaml`. A contract that narrows `error_codes` turns any other code into\n`INVALID_RESPONSE`.\n\n")
	fmt.Println("| reason | stage | error code | retryable | meaning |\n| --- | --- | --- | --- | --- |")
	for _, r := range gate.Reasons() {
		fmt.Printf("| `%s` | %s | %s | %v | %s |\n", r.Code, r.Stage, r.ErrorCode, r.Retryable, strings.ReplaceAll(r.Description, "|", "\\|"))
	}
	fmt.Print("\n## Warning codes\n\nA warning reports something about a response that did not decide the verdict. Warnings are in\n`Verdict.Warnings` and the audit record's `warnings` list (code, instance location, message;\nat most 16 per verdict), never in the agent output. The codes are stable API, kept equal to\nthe registry in `gate/reasons.go` by the same test.\n\n")
	fmt.Println("| warning | meaning |\n| --- | --- |")
	for _, w := range gate.WarningCodes() {
		fmt.Printf("| `%s` | %s |\n", w.Code, strings.ReplaceAll(w.Description, "|", "\\|"))
	}
}
