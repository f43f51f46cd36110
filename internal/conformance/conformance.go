// Package conformance finds the public test corpora the tests read in
// place — JSONTestSuite and JSON-Schema-Test-Suite, in the shared
// conformance folder beside the repository (../shared/conformance) or
// under $AIRLOCK_CONFORMANCE — and serves the JSON-Schema-Test-Suite's
// remote documents. Only tests import it.
package conformance

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/airlockdev/airlock/internal/schema"
	"github.com/airlockdev/airlock/internal/strictjson"
)

// Env names the variable that points at the conformance folder (the one
// holding JSONTestSuite/ and JSON-Schema-Test-Suite/).
const Env = "AIRLOCK_CONFORMANCE"

// Corpus returns the directory of one corpus (a subfolder of the
// conformance folder, e.g. "JSONTestSuite"), or a message saying why it
// cannot be used.
func Corpus(name string) (dir, missing string) {
	root := os.Getenv(Env)
	if root == "" {
		mod, err := ModuleRoot()
		if err != nil {
			return "", fmt.Sprintf("cannot locate the conformance corpora: %v; set %s to the folder holding %s", err, Env, name)
		}
		// The default: the shared conformance folder beside the repository.
		root = filepath.Join(mod, "..", "shared", "conformance")
	}
	dir, err := filepath.Abs(filepath.Join(root, name))
	if err == nil {
		var fi os.FileInfo
		if fi, err = os.Stat(dir); err == nil && !fi.IsDir() {
			err = fmt.Errorf("%s is not a directory", dir)
		}
	}
	if err != nil {
		return "", fmt.Sprintf("conformance corpus %s not found (%v); set %s to the folder holding JSONTestSuite/ and JSON-Schema-Test-Suite/", name, err, Env)
	}
	return dir, ""
}

// Required reports whether a missing corpus must fail the run: under
// CI=true a job must not pass by silently skipping its conformance run.
func Required() bool {
	ci, _ := strconv.ParseBool(os.Getenv("CI"))
	return ci
}

// ModuleRoot walks up from the working directory to go.mod: the
// repository's root, for tests that read its bundled trees.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Remotes serves every file under dir (the suite's remotes/ folder),
// parsed by the strict parser within lim, at the URL the suite expects,
// http://localhost:1234/<path>: no server, and any other URL fails.
func Remotes(dir string, lim strictjson.Limits) (schema.ConfinedLoader, error) {
	loader := schema.ConfinedLoader{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		doc, err := strictjson.Parse(body, lim)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		loader["http://localhost:1234/"+filepath.ToSlash(rel)] = doc
		return nil
	})
	if err == nil && len(loader) == 0 {
		err = fmt.Errorf("no remotes in %s", dir)
	}
	return loader, err
}
