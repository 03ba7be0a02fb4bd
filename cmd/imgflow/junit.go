package main

import (
	"encoding/xml"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/imgflow/imgflow/internal/redact"
	"github.com/imgflow/imgflow/interp/startest"
)

// JUnit XML as the common (Ant/Jenkins) schema has it, which Azure
// Pipelines' PublishTestResults (testResultsFormat: JUnit) and GitHub
// Actions' JUnit reporters read: one <testsuite> per *_test.star file, one
// <testcase> per test_* function, a <failure> with the assertion messages,
// an <error> when the file itself failed to load.
// testdata/junit/junit.xsd is the schema the tests validate it against.

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// writeJUnit writes the results of the test files as JUnit XML.
func writeJUnit(path string, files []string, results []startest.Result, start time.Time) error {
	data, err := junitXML(files, results, start)
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("--junit: %w", err)
	}
	return nil
}

func junitXML(files []string, results []startest.Result, start time.Time) ([]byte, error) {
	doc := junitSuites{Name: "imgflow test"}
	// A test's failures quote what it saw (a check's output, a URL): the
	// report is a file CI keeps and shows, so SAS signatures, URL
	// passwords and secret() values go.
	secrets := redact.SecretValues(os.Environ())
	var total time.Duration
	for _, file := range files {
		suite := junitSuite{Name: file, Timestamp: start.UTC().Format("2006-01-02T15:04:05")}
		var d time.Duration
		for _, r := range results {
			if r.File != file {
				continue
			}
			c := junitCase{Name: r.Name, Classname: junitClassname(file), Time: seconds(r.Duration)}
			if !r.Passed() {
				text := redact.Text(strings.Join(r.Failures, "\n\n"), secrets)
				p := &junitProblem{Message: redact.Text(failureMessage(r.Failures[0]), secrets), Text: text}
				if r.Name == "<load>" {
					p.Type = "LoadError"
					c.Error = p
					suite.Errors++
				} else {
					p.Type = "AssertionError"
					c.Failure = p
					suite.Failures++
				}
			}
			suite.Tests++
			d += r.Duration
			suite.Cases = append(suite.Cases, c)
		}
		suite.Time = seconds(d)
		total += d
		doc.Tests += suite.Tests
		doc.Failures += suite.Failures
		doc.Errors += suite.Errors
		doc.Suites = append(doc.Suites, suite)
	}
	doc.Time = seconds(total)
	out, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(out, '\n')...), nil
}

// junitClassname is a test file as a dotted class name, the way JUnit
// reporters group tests: workflows/flatcar_test.star → workflows.flatcar_test.
func junitClassname(file string) string {
	return strings.ReplaceAll(strings.TrimSuffix(file, ".star"), "/", ".")
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// failureMessage is the line of a failure that says what went wrong: the
// last line of a Python-style traceback ("Error: …"), else the first.
func failureMessage(failure string) string {
	lines := strings.Split(strings.TrimSpace(failure), "\n")
	if strings.HasPrefix(lines[0], "Traceback") {
		return strings.TrimSpace(lines[len(lines)-1])
	}
	return lines[0]
}
