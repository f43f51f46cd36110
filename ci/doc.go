// Package ci holds no code: its tests check airlock's CI integration files
// as a user's pipeline meets them. action_test.go checks action.yml's
// structure and runs its run: steps as bash on the bundled tree and on a
// failing one; gitlab_test.go parses ci/gitlab/airlock.gitlab-ci.yml and runs
// its jobs' scripts; workflows_test.go parses .github/workflows/*.yml and the
// workflows of docs/ci.md and checks they pass only inputs action.yml declares.
package ci
