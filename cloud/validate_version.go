package cloud

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// ---------------------------------------------------------------------------
// Versions

const maxVersionPart = 1<<31 - 1 // Azure's int32 limit

var versionPartNames = [3]string{"Major", "Minor", "Patch"}

// ParseVersion parses an image version name Major.Minor.Patch whose parts
// are decimal integers 0..2147483647.
func ParseVersion(s string) ([3]int32, error) {
	var out [3]int32
	const field = "version"
	const example = "e.g. 4152.2.3"
	if s == "" {
		return out, invalid(field, s, "is empty", "use Major.Minor.Patch, "+example)
	}
	if strings.EqualFold(s, "latest") || strings.EqualFold(s, "recent") {
		return out, invalid(field, s, "is a reference alias, not a version name", "name a concrete Major.Minor.Patch version, "+example)
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		fix := "use Major.Minor.Patch, " + example
		switch {
		case len(parts) < 3:
			if ex := s + strings.Repeat(".0", 3-len(parts)); ValidateVersion(ex) == nil {
				fix = "use Major.Minor.Patch, e.g. " + ex
			}
		default:
			if ex := strings.Join(parts[:3], "."); ValidateVersion(ex) == nil {
				fix = "use Major.Minor.Patch, e.g. " + ex
			}
		}
		return out, invalid(field, s, fmt.Sprintf("has %d part(s); Azure wants exactly three: Major.Minor.Patch", len(parts)), fix)
	}
	var p problemList
	for i, part := range parts {
		name := versionPartNames[i]
		switch {
		case part == "":
			p.add(invalid(field, s, name+" part is empty", "use Major.Minor.Patch, "+example))
		case strings.IndexFunc(part, func(r rune) bool { return r < '0' || r > '9' }) >= 0:
			p.add(invalid(field, s, fmt.Sprintf("%s part %q is not a decimal integer (digits only, no sign)", name, part), "use Major.Minor.Patch, "+example))
		default:
			n, err := strconv.ParseInt(part, 10, 32)
			if err != nil {
				p.add(invalid(field, s,
					fmt.Sprintf("%s part %q exceeds 2147483647 (2^31-1, Azure's int32 limit for each part)", name, part),
					"use a shorter scheme such as YYMMDD, e.g. 1.0.261202"))
				continue
			}
			out[i] = int32(n)
		}
	}
	if err := p.err(); err != nil {
		return [3]int32{}, err
	}
	return out, nil
}

// ValidateVersion checks an image version name (see ParseVersion).
func ValidateVersion(s string) error {
	_, err := ParseVersion(s)
	return err
}

// CompareVersions orders version names as Azure picks "latest": by Major,
// then Minor, then Patch, numerically. It returns -1, 0 or +1. An invalid
// name sorts before every valid one; two invalid names compare as strings.
func CompareVersions(a, b string) int {
	va, errA := ParseVersion(a)
	vb, errB := ParseVersion(b)
	switch {
	case errA != nil && errB != nil:
		return strings.Compare(a, b)
	case errA != nil:
		return -1
	case errB != nil:
		return 1
	}
	for i := range va {
		if c := cmp.Compare(va[i], vb[i]); c != 0 {
			return c
		}
	}
	return 0
}
