package cloud

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

const displayNameHint = `use the region's name, not its display name (westeurope, not "West Europe")`

func locationRule(field string) nameRule {
	return nameRule{
		field: field, min: 1, max: 40,
		allowed: isLowerAlnum,
		charset: "lowercase letters and digits",
		example: "westeurope",
		charFix: func(v string, _ []rune) string {
			if n := normalizeRegion(v); n != v && n != "" && len(badRunes(n, isLowerAlnum)) == 0 {
				return fmt.Sprintf("%s, so here %q", displayNameHint, n)
			}
			return displayNameHint
		},
	}
}

// normalizeRegion turns a display name or near miss ("West Europe",
// "west-europe") into region-name shape.
func normalizeRegion(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '-' || r == '_' {
			return -1
		}
		return r
	}, strings.ToLower(s))
}

// NormalizeLocation returns the region name ARM means by s: ARM accepts a
// location in any case and with the spaces of its display name ("West
// Europe", "WestEurope") and stores it as westeurope. Every builtin taking
// a location passes it through here first, so plans, journals, step keys
// and comparisons with existing resources all see one spelling, and a
// rerun with "West Europe" after westeurope changes nothing. What ARM
// refuses ("west-europe") is left for ValidateLocationName to explain.
func NormalizeLocation(s string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), " ", "")
}

// ValidateLocationName checks a location (region) name's syntax: 1–40
// lowercase letters and digits, e.g. westeurope.
func ValidateLocationName(name string) error { return locationRule("location").check(name) }

// ValidateTargetRegions checks an image version's target regions. source is
// the version's own region, which must be among them. Each name must be a
// syntactically valid region name listed once (case-insensitively), with a
// replica count of 0 (the default) to 100 and an empty or valid storage
// account type. When known is non-nil (the subscription's locations), every
// region must be a known Physical location; unknown names get up to three
// suggestions.
func ValidateTargetRegions(source string, regions []TargetRegion, known []Location) error {
	var p problemList
	if source == "" {
		p.add(invalid("location", "", "is required: it is the image version's source region", "set location, e.g. westeurope"))
	} else {
		p.add(ValidateLocationName(source))
	}

	var byName map[string]Location
	if known != nil {
		byName = make(map[string]Location, len(known))
		for _, l := range known {
			byName[strings.ToLower(l.Name)] = l
		}
	}

	first := make(map[string]int, len(regions)) // lower-cased name → index
	hasSource := false
	names := make([]string, len(regions))
	for i, r := range regions {
		names[i] = r.Name
		key := strings.ToLower(r.Name)
		syntaxErr := locationRule("target region").check(r.Name)
		p.add(syntaxErr)
		if r.Name != "" {
			if j, dup := first[key]; dup {
				p.add(invalid("target regions", r.Name,
					fmt.Sprintf("is a duplicate of entry %d (%q); region names are case-insensitive and each may be listed once", j+1, regions[j].Name),
					"remove one of them"))
			} else {
				first[key] = i
			}
		}
		if source != "" && strings.EqualFold(r.Name, source) {
			hasSource = true
		}
		if r.ReplicaCount < 0 || r.ReplicaCount > 100 {
			p.add(invalid("replica count", strconv.Itoa(r.ReplicaCount),
				fmt.Sprintf("of target region %q must be between 1 and 100 (0 means the version's default)", r.Name),
				"50 replicas per region are usually enough"))
		}
		if r.StorageAccountType != "" {
			if e := storageAccountTypeRule.check(r.StorageAccountType); e != nil {
				e.Problem = fmt.Sprintf("(target region %q) %s", r.Name, e.Problem)
				p.add(e)
			}
		}
		if byName != nil && syntaxErr == nil {
			p.add(checkKnownRegion(r.Name, byName, known))
		}
	}

	if source != "" && !hasSource {
		p.add(invalid("target regions", strings.Join(names, ","),
			fmt.Sprintf("do not include the source region %q", source),
			fmt.Sprintf("add %s: Azure requires the image version's own region among its target regions", source)))
	}
	return p.err()
}

func checkKnownRegion(name string, byName map[string]Location, known []Location) error {
	loc, ok := byName[strings.ToLower(name)]
	switch {
	case !ok:
		fix := "list this subscription's regions with `az account list-locations -o table`"
		if s := suggestRegions(name, known, 3); len(s) > 0 {
			fix = "did you mean " + orList(s) + "?"
		}
		return invalid("target region", name, "is not a location of this subscription", fix)
	case loc.RegionType == RegionTypeLogical:
		return invalid("target region", name, "is a geography, not a region",
			"use physical regions (region type Physical), e.g. westeurope and northeurope instead of europe")
	case loc.RegionType != RegionTypePhysical:
		return invalid("target region", name,
			fmt.Sprintf("has region type %q; only Physical regions can hold image replicas", loc.RegionType),
			"use a physical region, e.g. westeurope")
	case loc.NoImageVersions:
		return invalid("target region", name,
			"is not a region where this subscription can create gallery image versions (the Microsoft.Compute provider does not offer galleries/images/versions there)",
			"remove it, or have the subscription enabled for it; available: "+strings.Join(VersionRegions(known), ", "))
	}
	return nil
}

// VersionRegions are the physical regions of known where gallery image
// versions can be created, sorted.
func VersionRegions(known []Location) []string {
	var out []string
	for _, l := range known {
		if l.RegionType == RegionTypePhysical && !l.NoImageVersions {
			out = append(out, l.Name)
		}
	}
	slices.Sort(out)
	return out
}

func orList(s []string) string {
	if len(s) == 1 {
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// suggestRegions returns up to n known Physical region names closest to
// name by edit distance, nearest first, leaving out distant ones.
func suggestRegions(name string, known []Location, n int) []string {
	type cand struct {
		name string
		d    int
	}
	target := normalizeRegion(name)
	limit := max(2, len([]rune(target))/3)
	var cands []cand
	for _, l := range known {
		if l.RegionType == RegionTypeLogical {
			continue
		}
		d := editDistance(target, strings.ToLower(l.Name))
		if dn := editDistance(target, normalizeRegion(l.DisplayName)); l.DisplayName != "" && dn < d {
			d = dn
		}
		if d <= limit {
			cands = append(cands, cand{l.Name, d})
		}
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if a.d != b.d {
			return a.d - b.d
		}
		return strings.Compare(a.name, b.name)
	})
	var out []string
	for _, c := range cands {
		if len(out) == n {
			break
		}
		if !slices.Contains(out, c.name) {
			out = append(out, c.name)
		}
	}
	return out
}

// editDistance is the Levenshtein distance between a and b, by rune.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
