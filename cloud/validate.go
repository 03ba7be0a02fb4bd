package cloud

import (
	"errors"
	"fmt"
	"maps"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
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
			if !galleryNameRE.MatchString(ex) {
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

// galleryNameRE is galleryRule as a regexp, for checking suggested fixes.
var galleryNameRE = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9._]{0,78}[A-Za-z0-9])?$`)

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
		if c := compareInt32(va[i], vb[i]); c != 0 {
			return c
		}
	}
	return 0
}

func compareInt32(a, b int32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ---------------------------------------------------------------------------
// Community galleries

var communityPrefixRE = regexp.MustCompile(`^[A-Za-z0-9]{5,16}$`)

// ValidateCommunityInfo checks a community gallery's public publisher
// information. All four fields are required and every missing one is
// reported.
func ValidateCommunityInfo(c CommunityInfo) error {
	var p problemList
	missing := func(field, key, example string) {
		p.add(invalid(field, "", "is required for a community gallery", fmt.Sprintf("set %s, e.g. %s", key, example)))
	}

	switch prefix := c.PublicNamePrefix; {
	case prefix == "":
		missing("community prefix", "prefix", "flatcar4capi")
	case !communityPrefixRE.MatchString(prefix):
		var why []string
		if bad := badRunes(prefix, isASCIIAlnum); len(bad) > 0 {
			why = append(why, "it contains "+quoteRunes(bad))
		}
		if n := utf8.RuneCountInString(prefix); n < 5 || n > 16 {
			why = append(why, fmt.Sprintf("it is %d characters long", n))
		}
		p.add(invalid("community prefix", prefix,
			fmt.Sprintf("must be alphanumeric, 5–16 characters, no '-' (%s)", strings.Join(why, " and ")),
			"e.g. flatcar4capi instead of flatcar-capi"))
	}

	if c.PublisherURI == "" {
		missing("publisher URI", "publisher_uri", "https://www.flatcar.org")
	} else {
		p.add(checkPublicURL("publisher URI", c.PublisherURI, "https://www.flatcar.org"))
	}

	if c.PublisherContact == "" {
		missing("publisher e-mail", "publisher_email", "maintainers@example.org")
	} else {
		p.add(checkEmail("publisher e-mail", c.PublisherContact))
	}

	if c.EULA == "" {
		missing("EULA URL", "eula", "https://example.org/eula")
	} else {
		p.add(checkPublicURL("EULA URL", c.EULA, "https://example.org/eula"))
	}
	return p.err()
}

// checkPublicURL requires an absolute http(s) URL without credentials or a
// query: the value becomes public. A query is never echoed (it may be a SAS).
func checkPublicURL(field, raw, example string) error {
	shown := RedactURL(raw)
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return invalid(field, shown, "is not an absolute URL", "e.g. "+example)
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return invalid(field, shown, fmt.Sprintf("has scheme %q; only http and https are allowed", u.Scheme), "e.g. "+example)
	}
	var p problemList
	if u.User != nil {
		p.add(invalid(field, u.Redacted(), "contains credentials, and this value is public", "remove the user information"))
	}
	if u.RawQuery != "" || u.ForceQuery {
		clean := *u
		clean.RawQuery, clean.ForceQuery, clean.User = "", false, nil
		p.add(invalid(field, shown, "has a query string, and this value is public (never put a SAS token in it)",
			"remove everything from '?' on, e.g. "+clean.String()))
	}
	return p.err()
}

func checkEmail(field, s string) error {
	addr, err := mail.ParseAddress(s)
	if err != nil {
		return invalid(field, s, "is not an e-mail address", "e.g. maintainers@example.org")
	}
	if addr.Address != s {
		return invalid(field, s, "must be a bare e-mail address (no display name, brackets or spaces)", "use "+addr.Address)
	}
	return nil
}

// ---------------------------------------------------------------------------
// Enumerations

// enumRule is an Azure enumeration: exact spelling only, but near misses
// get a "did you mean".
type enumRule struct {
	field  string
	key    string // the workflow's key, for the fix
	values []string
	// aliases maps lower-cased common spellings to the Azure value.
	aliases map[string]string
}

func (r enumRule) list() string {
	return strings.Join(r.values, ", ")
}

func (r enumRule) check(v string) *ValidationError {
	if v == "" {
		return invalid(r.field, v, "is required", fmt.Sprintf("set %s to one of %s", r.key, r.list()))
	}
	if slices.Contains(r.values, v) {
		return nil
	}
	for _, want := range r.values {
		if strings.EqualFold(v, want) {
			return invalid(r.field, v, "is not spelled as Azure wants it (values are case-sensitive)", "did you mean "+want+"?")
		}
	}
	if want, ok := r.aliases[strings.ToLower(v)]; ok {
		return invalid(r.field, v, fmt.Sprintf("is not an Azure value (want one of %s)", r.list()), "did you mean "+want+"?")
	}
	return invalid(r.field, v, "is not one of "+r.list(), fmt.Sprintf("set %s to one of %s", r.key, r.list()))
}

var (
	osTypeRule = enumRule{field: "os type", key: "os_type", values: []string{OSTypeLinux, OSTypeWindows}}

	osStateRule = enumRule{field: "os state", key: "os_state", values: []string{OSStateGeneralized, OSStateSpecialized}}

	hyperVGenerationRule = enumRule{
		field: "hyper-v generation", key: "hyper_v_generation", values: []string{HyperVGenV1, HyperVGenV2},
		aliases: map[string]string{"1": HyperVGenV1, "gen1": HyperVGenV1, "2": HyperVGenV2, "gen2": HyperVGenV2},
	}

	architectureRule = enumRule{
		field: "architecture", key: "architecture", values: []string{ArchX64, ArchArm64},
		aliases: map[string]string{
			"amd64": ArchX64, "x86_64": ArchX64, "x86-64": ArchX64,
			"aarch64": ArchArm64, "arm": ArchArm64,
		},
	}

	storageAccountTypeRule = enumRule{
		field: "storage account type", key: "storage_account_type",
		values: []string{StorageStandardLRS, StorageStandardZRS, StoragePremiumLRS},
		aliases: map[string]string{
			"standardlrs": StorageStandardLRS, "standard-lrs": StorageStandardLRS, "lrs": StorageStandardLRS,
			"standardzrs": StorageStandardZRS, "standard-zrs": StorageStandardZRS, "zrs": StorageStandardZRS,
			"premiumlrs": StoragePremiumLRS, "premium-lrs": StoragePremiumLRS,
		},
	}
)

// nilIfNone avoids a typed-nil error.
func nilIfNone(e *ValidationError) error {
	if e == nil {
		return nil
	}
	return e
}

// ValidateOSType accepts Linux or Windows.
func ValidateOSType(s string) error { return nilIfNone(osTypeRule.check(s)) }

// ValidateOSState accepts Generalized or Specialized.
func ValidateOSState(s string) error { return nilIfNone(osStateRule.check(s)) }

// ValidateHyperVGeneration accepts V1 or V2.
func ValidateHyperVGeneration(s string) error { return nilIfNone(hyperVGenerationRule.check(s)) }

// ValidateArchitecture accepts x64 or Arm64.
func ValidateArchitecture(s string) error { return nilIfNone(architectureRule.check(s)) }

// ValidateStorageAccountType accepts Standard_LRS, Standard_ZRS or
// Premium_LRS.
func ValidateStorageAccountType(s string) error { return nilIfNone(storageAccountTypeRule.check(s)) }

// ---------------------------------------------------------------------------
// Image definitions

// Image feature names and SecurityType values.
const (
	featureSecurityType         = "SecurityType"
	featureAcceleratedNetwork   = "IsAcceleratedNetworkSupported"
	featureHibernate            = "IsHibernateSupported"
	featureDiskControllerTypes  = "DiskControllerTypes"
	securityTrustedLaunch       = "TrustedLaunch"
	securityConfidentialVM      = "ConfidentialVM"
	securityTrustedLaunchSupp   = "TrustedLaunchSupported"
	securityConfidentialVMSupp  = "ConfidentialVMSupported"
	securityTrustedLaunchAndCVM = "TrustedLaunchAndConfidentialVmSupported"
)

var (
	featureKeys = []string{featureSecurityType, featureAcceleratedNetwork, featureHibernate, featureDiskControllerTypes}

	securityTypeRule = enumRule{
		field: "feature SecurityType", key: "SecurityType",
		values: []string{securityTrustedLaunchSupp, securityConfidentialVMSupp, securityTrustedLaunchAndCVM, securityTrustedLaunch, securityConfidentialVM},
	}

	diskControllerRule = enumRule{
		field: "feature DiskControllerTypes", key: "DiskControllerTypes",
		values: []string{"SCSI", "SCSI,NVMe", "NVMe,SCSI"},
	}
)

func boolFeatureRule(key string) enumRule {
	return enumRule{field: "feature " + key, key: key, values: []string{"true", "false"}}
}

// ValidateImageDefinition checks a definition before it is created: its
// names, identifier, enumerations, features and end of life. community says
// the gallery is (or will be) a community gallery. Gallery, resource group
// and location are checked when set. An empty architecture or Hyper-V
// generation is left to Azure's default (x64; V1 or V2 by API version), but
// Arm64 and every SecurityType require an explicit V2.
func ValidateImageDefinition(d ImageDefinition, community bool, now time.Time) error {
	var p problemList
	p.add(ValidateImageDefinitionName(d.Name))
	if d.Gallery != "" {
		p.add(ValidateGalleryName(d.Gallery))
	}
	if d.ResourceGroup != "" {
		p.add(ValidateResourceGroupName(d.ResourceGroup))
	}
	if d.Location != "" {
		p.add(ValidateLocationName(d.Location))
	}
	p.add(ValidatePublisher(d.Publisher))
	p.add(ValidateOffer(d.Offer))
	p.add(ValidateSKU(d.SKU))
	p.add(ValidateOSType(d.OSType))
	p.add(ValidateOSState(d.OSState))
	if d.HyperVGeneration != "" {
		p.add(ValidateHyperVGeneration(d.HyperVGeneration))
	}
	if d.Architecture != "" {
		p.add(ValidateArchitecture(d.Architecture))
	}
	gen2 := strings.EqualFold(d.HyperVGeneration, HyperVGenV2)
	if strings.EqualFold(d.Architecture, ArchArm64) && !gen2 {
		p.add(invalid("hyper-v generation", d.HyperVGeneration, "Arm64 images are Generation 2 only", `set hyper_v_generation="V2"`))
	}

	for _, k := range slices.Sorted(maps.Keys(d.Features)) {
		v := d.Features[k]
		switch k {
		case featureSecurityType:
			if e := securityTypeRule.check(v); e != nil {
				p.add(e)
				continue
			}
			if !gen2 {
				p.add(invalid("feature SecurityType", v, "requires a Generation 2 image", `set hyper_v_generation="V2"`))
			}
			if community && (v == securityTrustedLaunch || v == securityConfidentialVM) {
				p.add(invalid("feature SecurityType", v, "is allowed in private galleries only",
					fmt.Sprintf("use %sSupported in a community gallery", v)))
			}
		case featureAcceleratedNetwork, featureHibernate:
			p.add(nilIfNone(boolFeatureRule(k).check(v)))
		case featureDiskControllerTypes:
			if e := diskControllerRule.check(v); e != nil {
				// Also catch "SCSI, NVMe" and "scsi, nvme".
				norm := strings.ReplaceAll(v, " ", "")
				for _, want := range diskControllerRule.values {
					if strings.EqualFold(norm, want) {
						e.Fix = "did you mean " + want + "?"
					}
				}
				p.add(e)
			}
		default:
			fix := "use one of " + strings.Join(featureKeys, ", ")
			for _, want := range featureKeys {
				if strings.EqualFold(k, want) {
					fix = "did you mean " + want + "? (feature names are case-sensitive)"
				}
			}
			p.add(invalid("feature", k, "is not an image feature imgflow supports", fix))
		}
	}
	if d.EndOfLife != nil {
		p.add(checkFuture(*d.EndOfLife, now))
	}
	return p.err()
}

// ---------------------------------------------------------------------------
// Image versions

// ValidateReplicaCount accepts 0 (Azure's default, 1) to 100, the maximum
// number of replicas per image version.
func ValidateReplicaCount(n int) error {
	if n < 0 || n > 100 {
		return invalid("replica count", strconv.Itoa(n), "must be between 1 and 100 (0 means the default, 1)", "50 replicas per region are usually enough")
	}
	return nil
}

// ValidateImageVersion checks a version before it is created: its name,
// replica count, storage account type, end of life, source, and its target
// regions with the version's Location as the source region
// (ValidateTargetRegions without known locations). Resource group, gallery
// and definition names are checked when set.
func ValidateImageVersion(v ImageVersion, now time.Time) error {
	var p problemList
	p.add(ValidateVersion(v.Name))
	if v.ResourceGroup != "" {
		p.add(ValidateResourceGroupName(v.ResourceGroup))
	}
	if v.Gallery != "" {
		p.add(ValidateGalleryName(v.Gallery))
	}
	if v.Definition != "" {
		p.add(ValidateImageDefinitionName(v.Definition))
	}
	p.add(ValidateReplicaCount(v.ReplicaCount))
	if v.StorageAccountType != "" {
		p.add(ValidateStorageAccountType(v.StorageAccountType))
	}
	if v.EndOfLife != nil {
		p.add(checkFuture(*v.EndOfLife, now))
	}
	p.add(validateImageSource(v.Source))
	p.add(ValidateTargetRegions(v.Location, v.TargetRegions, nil))
	return p.err()
}

var (
	exampleManagedImageID = ManagedImageID("<subscription>", "<rg>", "<image>")
	exampleVersionID      = ImageVersionID("<subscription>", "<rg>", "<gallery>", "<definition>", "<version>")
	exampleStorageID      = StorageAccountID("<subscription>", "<rg>", "<account>")
)

func validateImageSource(s ImageSource) error {
	switch s.Kind {
	case "":
		return invalid("source", "", "is required", "set a vhd, managed_image or image_version source")
	case SourceVHD:
		return validateVHDSource(s)
	case SourceManagedImage:
		return checkSourceID(s.ID, "source id", "managed image", "Microsoft.Compute", []string{"images"}, exampleManagedImageID)
	case SourceImageVersion:
		return checkSourceID(s.ID, "source id", "gallery image version", "Microsoft.Compute", []string{"galleries", "images", "versions"}, exampleVersionID)
	}
	return invalid("source kind", string(s.Kind), "is not a known source kind",
		fmt.Sprintf("use one of %s, %s, %s", SourceVHD, SourceManagedImage, SourceImageVersion))
}

// checkSourceID requires an ARM id of provider/types.
func checkSourceID(id, field, what, provider string, types []string, example string) error {
	if id == "" {
		return invalid(field, "", "is required for a "+what+" source", "e.g. "+example)
	}
	rid, err := ParseResourceID(id)
	if err != nil {
		return invalid(field, id, "is not an ARM resource id", "e.g. "+example)
	}
	if !rid.Is(provider, types...) {
		got := "a resource group"
		if rid.Provider != "" {
			got = "a " + rid.Provider + "/" + strings.Join(rid.Types, "/") + " resource"
		}
		fix := "e.g. " + example
		switch {
		case what == "managed image" && rid.Is("Microsoft.Compute", "galleries", "images", "versions"):
			fix = "set the source kind to " + string(SourceImageVersion)
		case what == "gallery image version" && rid.Is("Microsoft.Compute", "images"):
			fix = "set the source kind to " + string(SourceManagedImage)
		}
		return invalid(field, id, fmt.Sprintf("is %s, not a %s (%s/%s)", got, what, provider, strings.Join(types, "/")), fix)
	}
	return nil
}

func validateVHDSource(s ImageSource) error {
	var p problemList
	var account string
	switch {
	case s.URI == "":
		p.add(invalid("source uri", "", "is required for a vhd source",
			"set the page blob URL, e.g. https://<account>.blob.core.windows.net/<container>/<name>.vhd"))
	default:
		ref, err := ParseBlobURL(s.URI)
		if err != nil {
			p.add(invalid("source uri", RedactURL(s.URI), "is not a blob URL",
				"want https://<account>.blob.core.windows.net/<container>/<name>.vhd"))
			break
		}
		if strings.Contains(s.URI, "?") {
			p.add(invalid("source uri", RedactURL(s.URI), "carries a query string (a SAS?)",
				"drop it: Azure reads the blob through the storage account id"))
		}
		account = ref.Account
		p.add(ValidateStorageAccountName(ref.Account))
		p.add(ValidateContainerName(ref.Container))
		p.add(ValidateVHDBlobName(ref.Name))
	}
	if s.StorageAccountID == "" {
		p.add(invalid("source storage account id", "", "is required for a vhd source (the caller needs listKeys on it)", "e.g. "+exampleStorageID))
	} else if err := checkSourceID(s.StorageAccountID, "source storage account id", "storage account", "Microsoft.Storage", []string{"storageAccounts"}, exampleStorageID); err != nil {
		p.add(err)
	} else if rid, _ := ParseResourceID(s.StorageAccountID); account != "" && !strings.EqualFold(rid.Names[0], account) {
		p.add(invalid("source storage account id", s.StorageAccountID,
			fmt.Sprintf("names account %q but the source uri is in account %q", rid.Names[0], account),
			"use the id of the account that holds the VHD"))
	}
	return p.err()
}

// ---------------------------------------------------------------------------
// End of life

// checkFuture requires an end-of-life time after now.
func checkFuture(t, now time.Time) error {
	if t.After(now) {
		return nil
	}
	return invalid("end of life", t.UTC().Format(time.RFC3339),
		fmt.Sprintf("is not in the future (now is %s)", now.UTC().Format(time.RFC3339)),
		"Azure requires a future date, e.g. "+now.AddDate(1, 0, 0).UTC().Format(time.DateOnly))
}

// ParseEndOfLife parses an end-of-life date: RFC 3339 or yyyy-MM-dd. A bare
// date means T12:59:59Z of that day, as az CLI sends it. The result, in UTC,
// must be after now.
func ParseEndOfLife(s string, now time.Time) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		d, derr := time.Parse(time.DateOnly, s)
		if derr != nil {
			return time.Time{}, invalid("end of life", s, "is neither an RFC 3339 time nor a yyyy-MM-dd date",
				"e.g. "+now.AddDate(1, 0, 0).UTC().Format(time.DateOnly)+" or "+now.AddDate(1, 0, 0).UTC().Format(time.DateOnly)+"T00:00:00Z")
		}
		t = d.Add(12*time.Hour + 59*time.Minute + 59*time.Second)
	}
	t = t.UTC()
	if err := checkFuture(t, now); err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			ve.Value = s
		}
		return time.Time{}, err
	}
	return t, nil
}

// ---------------------------------------------------------------------------
// Storage

// ValidateStorageAccountName checks a storage account name: 3–24 lowercase
// letters and digits.
func ValidateStorageAccountName(name string) error {
	const field = "storage account name"
	var p problemList
	if n := utf8.RuneCountInString(name); n < 3 || n > 24 {
		p.add(invalid(field, name, fmt.Sprintf("is %d characters long; it must be 3–24", n), "e.g. flatcarimages"))
	}
	if bad := badRunes(name, isLowerAlnum); len(bad) > 0 {
		fix := "use only lowercase letters and digits, e.g. flatcarimages"
		if lower := strings.ToLower(name); len(badRunes(lower, isLowerAlnum)) == 0 {
			fix = "use lowercase: " + lower
		}
		p.add(invalid(field, name, fmt.Sprintf("contains %s (allowed: lowercase letters and digits)", quoteRunes(bad)), fix))
	}
	return p.err()
}

// ValidateContainerName checks a blob container name: 3–63 lowercase
// letters, digits and '-', starting with a letter or digit, without "--"
// and not ending with '-'.
func ValidateContainerName(name string) error {
	const field = "container name"
	var p problemList
	if n := utf8.RuneCountInString(name); n < 3 || n > 63 {
		p.add(invalid(field, name, fmt.Sprintf("is %d characters long; it must be 3–63", n), "e.g. vhds"))
	}
	allowed := func(r rune) bool { return isLowerAlnum(r) || r == '-' }
	if bad := badRunes(name, allowed); len(bad) > 0 {
		fix := "use only lowercase letters, digits and '-', e.g. vhds"
		if lower := strings.ToLower(name); len(badRunes(lower, allowed)) == 0 {
			fix = "use lowercase: " + lower
		}
		p.add(invalid(field, name, fmt.Sprintf("contains %s (allowed: lowercase letters, digits and '-')", quoteRunes(bad)), fix))
		return p.err()
	}
	if strings.HasPrefix(name, "-") {
		p.add(invalid(field, name, "must start with a letter or digit", "remove the leading '-'"))
	}
	if strings.HasSuffix(name, "-") {
		p.add(invalid(field, name, "must not end with '-'", "remove the trailing '-'"))
	}
	if strings.Contains(name, "--") {
		p.add(invalid(field, name, "contains \"--\"; dashes must not be consecutive", "use a single '-'"))
	}
	return p.err()
}

// ValidateBlobName checks a blob name: 1–1024 characters, not ending with
// '.' or '/'.
func ValidateBlobName(name string) error {
	const field = "blob name"
	if name == "" {
		return invalid(field, name, "is empty", "e.g. flatcar-linux-4152.2.3-stable-amd64.vhd")
	}
	var p problemList
	if n := utf8.RuneCountInString(name); n > 1024 {
		p.add(invalid(field, name, fmt.Sprintf("is %d characters long; the maximum is 1024", n), "shorten it"))
	}
	if strings.HasSuffix(name, ".") || strings.HasSuffix(name, "/") {
		fix := "remove the trailing '.' or '/'"
		if t := strings.TrimRight(name, "./"); t != "" {
			fix += ", e.g. " + t
		}
		p.add(invalid(field, name, "must not end with '.' or '/'", fix))
	}
	return p.err()
}

// ValidateVHDBlobName checks the name of a VHD page blob: a valid blob name
// ending with ".vhd".
func ValidateVHDBlobName(name string) error {
	if err := ValidateBlobName(name); err != nil {
		return err
	}
	if !strings.HasSuffix(strings.ToLower(name), ".vhd") {
		return invalid("blob name", name, "does not end with .vhd, as a VHD page blob's name should", "e.g. "+name+".vhd")
	}
	return nil
}
