package main

import (
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func junitSchema(t *testing.T) *xsdSchema {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot(t), "testdata", "junit", "junit.xsd"))
	require.NoError(t, err)
	defer f.Close()
	s, err := loadXSD(f)
	require.NoError(t, err)
	return s
}

// The JUnit XML of `imgflow test --junit` validates against the JUnit
// schema in testdata/junit, with passing, failing and unloadable tests.
func TestJUnitValidatesAgainstTheSchema(t *testing.T) {
	root := repoRoot(t)
	broken := workspace(t, map[string]string{"workflows/broken_test.star": "def test_x():\n    pass\n\nx = undefined_name\n"})
	out := filepath.Join(t.TempDir(), "junit.xml")
	res := imgflow(t, "test", "--root", root, "--junit", out,
		filepath.Join(root, "testdata", "cli", "failing_test.star"), filepath.Join(root, "workflows", "flatcar_test.star"))
	require.Equal(t, 1, res.code, res.String())
	assert.Contains(t, res.stdout, "FAIL testdata/cli/failing_test.star:test_fails_on_purpose", "the console report is unchanged")

	data, err := os.ReadFile(out)
	require.NoError(t, err)
	schema := junitSchema(t)
	require.NoError(t, schema.validate(strings.NewReader(string(data))), string(data))

	var doc junitSuites
	require.NoError(t, xml.Unmarshal(data, &doc))
	require.Len(t, doc.Suites, 2)
	assert.Equal(t, 1, doc.Failures)
	suite := doc.Suites[0]
	assert.Equal(t, "testdata/cli/failing_test.star", suite.Name)
	assert.Equal(t, 2, suite.Tests)
	assert.Equal(t, 1, suite.Failures)
	require.Len(t, suite.Cases, 2)
	failed := suite.Cases[0]
	assert.Equal(t, "test_fails_on_purpose", failed.Name)
	assert.Equal(t, "testdata.cli.failing_test", failed.Classname)
	require.NotNil(t, failed.Failure)
	assert.Equal(t, `Error: "stable" != "beta"`, failed.Failure.Message)
	assert.Contains(t, failed.Failure.Text, "testdata/cli/failing_test.star:7:")
	assert.Nil(t, suite.Cases[1].Failure)
	assert.Equal(t, "workflows/flatcar_test.star", doc.Suites[1].Name)
	assert.Zero(t, doc.Suites[1].Failures)

	// A file that does not load is an <error>.
	out2 := filepath.Join(t.TempDir(), "junit.xml")
	res = imgflow(t, "test", "--root", broken, "--junit", out2, filepath.Join(broken, "workflows"))
	require.Equal(t, 1, res.code, res.String())
	data, err = os.ReadFile(out2)
	require.NoError(t, err)
	require.NoError(t, schema.validate(strings.NewReader(string(data))), string(data))
	assert.Contains(t, string(data), `<error message="workflows/broken_test.star:4:5: undefined: undefined_name" type="LoadError">`)

	// Where xmllint is installed, it agrees.
	if xmllint, err := exec.LookPath("xmllint"); err == nil {
		for _, f := range []string{out, out2} {
			cmd := exec.Command(xmllint, "--noout", "--schema", filepath.Join(root, "testdata", "junit", "junit.xsd"), f)
			msg, err := cmd.CombinedOutput()
			assert.NoError(t, err, string(msg))
		}
	}
}

// The validator rejects what the schema forbids, so a passing validation
// means something.
func TestJUnitSchemaRejectsInvalidDocuments(t *testing.T) {
	schema := junitSchema(t)
	valid := `<testsuites><testsuite name="a" tests="1" time="0.1" timestamp="2026-01-02T03:04:05"><testcase name="t" time="1.5"><failure message="m">x</failure></testcase><system-out>o</system-out></testsuite></testsuites>`
	require.NoError(t, schema.validate(strings.NewReader(valid)))
	for name, doc := range map[string]string{
		"missing required attribute": `<testsuites><testsuite tests="1"/></testsuites>`,
		"unknown attribute":          `<testsuites><testsuite name="a" tests="1" colour="red"/></testsuites>`,
		"bad decimal":                `<testsuites><testsuite name="a" tests="1" time="1,5"/></testsuites>`,
		"negative count":             `<testsuites><testsuite name="a" tests="-1"/></testsuites>`,
		"bad timestamp":              `<testsuites><testsuite name="a" tests="1" timestamp="yesterday"/></testsuites>`,
		"unknown element":            `<testsuites><testsuite name="a" tests="1"><test name="t"/></testsuite></testsuites>`,
		"wrong order":                `<testsuites><testsuite name="a" tests="1"><system-out/><testcase name="t"/></testsuite></testsuites>`,
		"testcase without name":      `<testsuites><testsuite name="a" tests="1"><testcase/></testsuite></testsuites>`,
		"element in a failure":       `<testsuites><testsuite name="a" tests="1"><testcase name="t"><failure><b/></failure></testcase></testsuite></testsuites>`,
		"text in a testsuite":        `<testsuites><testsuite name="a" tests="1">oops</testsuite></testsuites>`,
		"wrong root":                 `<testsuite-list/>`,
	} {
		assert.Error(t, schema.validate(strings.NewReader(doc)), name)
	}
}
