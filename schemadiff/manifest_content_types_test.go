package schemadiff_test

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/airlockdev/airlock/schemadiff"
)

var _ = Describe("contract diff: content types judged by what the media ranges admit", func() {
	It("does not report a type the old wildcard already admitted", func() {
		changes, _ := manifestChanges(manifestCase{tool: "review_status", new: []edit{{"agent_schema: agent.schema.json\n",
			"agent_schema: agent.schema.json\ncontent_types: [application/json, application/*+json, application/problem+json]\n"}}})
		Expect(changes).To(BeEmpty())
	})

	It("reports a range the old types did not cover as widened, and a range no new one covers as narrowed", func() {
		changes, _ := manifestChanges(manifestCase{tool: "review_status",
			old: []edit{{"agent_schema: agent.schema.json\n", "agent_schema: agent.schema.json\ncontent_types: [application/json, application/problem+json]\n"}},
			new: []edit{{"agent_schema: agent.schema.json\n", "agent_schema: agent.schema.json\ncontent_types: [application/json, application/*+json]\n"}}})
		Expect(rulesOf(changes)).To(Equal([]string{schemadiff.RuleManifestContentTypesWidened}))
		Expect(changes[0].Message).To(Equal("content_types now admits application/*+json"))
		changes, _ = manifestChanges(manifestCase{tool: "review_status",
			new: []edit{{"agent_schema: agent.schema.json\n", "agent_schema: agent.schema.json\ncontent_types: [application/json, application/problem+json]\n"}}})
		Expect(rulesOf(changes)).To(Equal([]string{schemadiff.RuleManifestContentTypesNarrowed}))
		Expect(changes[0].Message).To(Equal("content_types no longer admits application/*+json"))
	})
})
