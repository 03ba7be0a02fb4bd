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
	"sync"
	"time"
	"unicode/utf8"

	"github.com/imgflow/imgflow/internal/redact"
)

// ---------------------------------------------------------------------------
// Community galleries

var communityPrefixRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9]{5,16}$`) })

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
	case !communityPrefixRE().MatchString(prefix):
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
	shown := redact.URL(raw)
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
			p.add(invalid("source uri", redact.URL(s.URI), "is not a blob URL",
				"want https://<account>.blob.core.windows.net/<container>/<name>.vhd"))
			break
		}
		if strings.Contains(s.URI, "?") {
			p.add(invalid("source uri", redact.URL(s.URI), "carries a query string (a SAS?)",
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
