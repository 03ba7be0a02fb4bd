package cloud

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Azure's naming and shape rules for the resources imgflow creates
// (see the Azure Compute Gallery troubleshooting and community-gallery
// documentation). Every Validate* function returns nil, a single
// *ValidationError, or an errors.Join of several *ValidationError, so a
// caller can report every problem at once and still errors.As the first.

// ValidationError is one rule an input breaks: which field, its value, what
// is wrong and how to fix it.
type ValidationError struct {
	// Field names the input in the workflow's words ("gallery name").
	Field string
	// Value is the offending value (URLs without their query).
	Value string
	// Problem says what is wrong.
	Problem string
	// Fix says what to change, with an example where useful; may be empty.
	Fix string
}

func (e *ValidationError) Error() string {
	msg := fmt.Sprintf("invalid %s %q: %s", e.Field, e.Value, e.Problem)
	if e.Fix != "" {
		msg += "; " + e.Fix
	}
	return msg
}

func invalid(field, value, problem, fix string) *ValidationError {
	return &ValidationError{Field: field, Value: value, Problem: problem, Fix: fix}
}

// problemList collects validation errors, flattening joined ones.
type problemList []error

func (p *problemList) add(err error) {
	if err == nil {
		return
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			p.add(e)
		}
		return
	}
	*p = append(*p, err)
}

// err is nil, the single error, or errors.Join of all.
func (p problemList) err() error {
	switch len(p) {
	case 0:
		return nil
	case 1:
		return p[0]
	}
	return errors.Join(p...)
}

// ---------------------------------------------------------------------------
// Names

func isASCIIAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

func isLowerAlnum(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
}

// badRunes lists the distinct runes of s that allowed refuses, in order.
func badRunes(s string, allowed func(rune) bool) []rune {
	var bad []rune
	for _, r := range s {
		if !allowed(r) && !slices.Contains(bad, r) {
			bad = append(bad, r)
		}
	}
	return bad
}

func quoteRunes(rs []rune) string {
	q := make([]string, len(rs))
	for i, r := range rs {
		q[i] = strconv.QuoteRune(r)
	}
	return strings.Join(q, ", ")
}

// nameRule is a resource-name rule: length, character set and ends.
type nameRule struct {
	field   string
	min     int
	max     int
	allowed func(rune) bool
	charset string // human description of allowed
	// alnumEnds: starts and ends with an ASCII letter or digit.
	alnumEnds bool
	// noTrailingDot: may not end with '.'.
	noTrailingDot bool
	example       string
	// charFix, when set, gives the fix for bad characters ("" = default).
	charFix func(v string, bad []rune) string
}

func (r nameRule) check(v string) error {
	if v == "" {
		return invalid(r.field, v, "is empty", fmt.Sprintf("set a name of %d–%d characters, e.g. %s", max(r.min, 1), r.max, r.example))
	}
	var p problemList
	if n := utf8.RuneCountInString(v); n > r.max {
		p.add(invalid(r.field, v, fmt.Sprintf("is %d characters long; the maximum is %d", n, r.max), "shorten it"))
	} else if n < r.min {
		p.add(invalid(r.field, v, fmt.Sprintf("is %d characters long; the minimum is %d", n, r.min), "lengthen it, e.g. "+r.example))
	}
	if bad := badRunes(v, r.allowed); len(bad) > 0 {
		fix := ""
		if r.charFix != nil {
			fix = r.charFix(v, bad)
		}
		if fix == "" {
			fix = "use only " + r.charset + ", e.g. " + r.example
		}
		p.add(invalid(r.field, v, fmt.Sprintf("contains %s (allowed: %s)", quoteRunes(bad), r.charset), fix))
		return p.err()
	}
	first, _ := utf8.DecodeRuneInString(v)
	last, _ := utf8.DecodeLastRuneInString(v)
	if r.alnumEnds && (!isASCIIAlnum(first) || !isASCIIAlnum(last)) {
		trimmed := strings.TrimFunc(v, func(c rune) bool { return !isASCIIAlnum(c) })
		fix := "e.g. " + r.example
		if trimmed != "" {
			fix = "e.g. " + trimmed
		}
		p.add(invalid(r.field, v, "must start and end with a letter or digit", fix))
	} else if r.noTrailingDot && last == '.' {
		fix := "remove the trailing '.'"
		if t := strings.TrimRight(v, "."); t != "" {
			fix += ", e.g. " + t
		}
		p.add(invalid(r.field, v, "must not end with '.'", fix))
	}
	return p.err()
}

var (
	resourceGroupRule = nameRule{
		field: "resource group name", min: 1, max: 90,
		allowed: func(r rune) bool {
			return unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("_-.()", r)
		},
		charset:       "letters, digits, '_', '-', '.', '(' and ')'",
		noTrailingDot: true,
		example:       "flatcar-images",
	}

	galleryRule = nameRule{
		field: "gallery name", min: 1, max: 80,
		allowed:   func(r rune) bool { return isASCIIAlnum(r) || r == '_' || r == '.' },
		charset:   "letters, digits, '_' and '.'",
		alnumEnds: true,
		example:   "flatcar_staging",
		charFix: func(v string, bad []rune) string {
			if !slices.Contains(bad, '-') {
				return ""
			}
			ex := strings.ReplaceAll(v, "-", "_")
			if !galleryNameRE().MatchString(ex) {
				ex = "flatcar_staging"
			}
			return "use '_' instead of '-', e.g. " + ex
		},
	}

	imageDefinitionRule = nameRule{
		field: "image definition name", min: 1, max: 80,
		allowed:   func(r rune) bool { return isASCIIAlnum(r) || strings.ContainsRune("_-.", r) },
		charset:   "letters, digits, '_', '-' and '.'",
		alnumEnds: true,
		example:   "flatcar-stable-amd64",
	}

	publisherRule = identifierRule("publisher", 128, "flatcar")
	offerRule     = identifierRule("offer", 64, "stable")
	skuRule       = identifierRule("SKU", 64, "flatcar-stable-amd64")
)

// galleryNameRE is galleryRule as a regexp, for checking suggested fixes;
// compiled when one is made: its {0,78} is a program of that many states.
var galleryNameRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9._]{0,78}[A-Za-z0-9])?$`)
})

func identifierRule(field string, maxLen int, example string) nameRule {
	return nameRule{
		field: field, min: 1, max: maxLen,
		allowed:       func(r rune) bool { return isASCIIAlnum(r) || strings.ContainsRune("-._", r) },
		charset:       "letters, digits, '-', '.' and '_'",
		noTrailingDot: true,
		example:       example,
	}
}

// ValidateResourceGroupName checks a resource group name: 1–90 letters,
// digits, '_', '-', '.', '(' or ')', not ending with '.'.
func ValidateResourceGroupName(name string) error { return resourceGroupRule.check(name) }

// ValidateGalleryName checks a gallery name: 1–80 letters, digits, '_' and
// '.' (no '-'), starting and ending with a letter or digit.
func ValidateGalleryName(name string) error { return galleryRule.check(name) }

// ValidateImageDefinitionName checks an image definition name: 1–80
// letters, digits, '_', '-' and '.', starting and ending with a letter or
// digit.
func ValidateImageDefinitionName(name string) error { return imageDefinitionRule.check(name) }

// ValidatePublisher checks a definition's publisher: 1–128 letters,
// digits, '-', '.', '_', not ending with '.'.
func ValidatePublisher(s string) error { return publisherRule.check(s) }

// ValidateOffer checks a definition's offer: like a publisher, ≤64 chars.
func ValidateOffer(s string) error { return offerRule.check(s) }

// ValidateSKU checks a definition's SKU: like a publisher, ≤64 chars.
func ValidateSKU(s string) error { return skuRule.check(s) }
