package localsim

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/imgflow/imgflow/cloud"
)

// azureConfig is the part of a rendered azure-arm builder configuration the
// simulation reads. Field names follow packer 1.6.6's JSON keys, plus the
// azure plugin's later ones for direct gallery publishing and confidential
// VMs (security_type, specialized, …).
type azureConfig struct {
	build string

	subscription string
	location     string
	osType       string
	// osDiskGB is os_disk_size_gb; 0 when the template leaves it to the
	// source image.
	osDiskGB int64

	// VHD output.
	storageAccount   string
	resourceGroup    string
	captureContainer string
	capturePrefix    string

	// Managed image output.
	imageName          string
	imageResourceGroup string
	buildResourceGroup string

	// Sources: marketplace, image_url or shared_image_gallery.
	publisher, offer, sku, version string
	imageURL                       string
	sigSource                      *sigRef

	// skipCreateImage is skip_create_image: the plugin then captures and
	// publishes nothing (the build is a provisioning test).
	skipCreateImage bool

	// The build VM's security (plugin 2.x keys).
	securityType, securityEncryptionType string
	secureBoot, vtpm                     bool

	// shared_image_gallery_destination and its version settings.
	sigDest           *sigRef
	specialized       bool
	cvmEncryptionType string
	regions           []string
	replicaCount      int
	excludeFromLatest bool
	endOfLife         *time.Time

	tags map[string]string
}

// sigRef is a shared_image_gallery source or destination block.
type sigRef struct {
	subscription, resourceGroup, gallery, image, version string
}

func (s *sigRef) String() string {
	return fmt.Sprintf("%s/%s/%s (resource group %s)", s.gallery, s.image, s.version, s.resourceGroup)
}

func (c *azureConfig) vhdMode() bool     { return c.captureContainer != "" || c.capturePrefix != "" }
func (c *azureConfig) managedMode() bool { return c.imageName != "" || c.imageResourceGroup != "" }

// galleryMode is a build with no managed image and no VHD that publishes
// the VM straight to shared_image_gallery_destination (the azure plugin
// since 1.0; what Arm64 and ConfidentialVM builds need).
func (c *azureConfig) galleryMode() bool { return c.sigDest != nil && !c.vhdMode() && !c.managedMode() }

// architecture is the build VM's CPU architecture as far as the rendered
// template tells: Arm64 when the marketplace SKU names it (Canonical's
// 22_04-lts-arm64, server-arm64; Azure Linux's azure-linux-3-arm64-…),
// "" when unknown. A gallery source's architecture is read from its
// definition by the simulation.
func (c *azureConfig) architecture() string {
	if c.sku == "" {
		return ""
	}
	if strings.Contains(strings.ToLower(c.sku), "arm64") {
		return cloud.ArchArm64
	}
	return cloud.ArchX64
}

// parseConfig reads a rendered builder configuration. Values may be JSON
// strings where packer expects numbers or booleans: packer decodes them
// weakly typed, and templates pass them through {{user}}. unsetEnv is the
// build's packer.Rendering.UnsetEnv: an error about a value made from an
// environment variable the build was not given names that variable.
func parseConfig(build string, raw map[string]any, unsetEnv map[string][]string) (*azureConfig, error) {
	var errs []error
	r := &reader{m: raw, path: build, unsetEnv: unsetEnv, errs: &errs}
	c := &azureConfig{build: build}
	c.subscription = r.str("subscription_id")
	c.location = r.str("location")
	c.osType = r.str("os_type")
	c.osDiskGB = int64(r.int("os_disk_size_gb"))
	c.storageAccount = r.str("storage_account")
	c.resourceGroup = r.str("resource_group_name")
	c.captureContainer = r.str("capture_container_name")
	c.capturePrefix = r.str("capture_name_prefix")
	c.imageName = r.str("managed_image_name")
	c.imageResourceGroup = r.str("managed_image_resource_group_name")
	c.buildResourceGroup = r.str("build_resource_group_name")
	c.publisher, c.offer, c.sku, c.version = r.str("image_publisher"), r.str("image_offer"), r.str("image_sku"), r.str("image_version")
	c.imageURL = r.str("image_url")
	if sub := r.obj("shared_image_gallery"); sub != nil {
		src := &sigRef{sub.str("subscription"), sub.str("resource_group"), sub.str("gallery_name"), sub.str("image_name"), sub.str("image_version")}
		// packer's rule: the block is a source only when it names a gallery.
		// image-builder's marketplace builds carry it with every field "".
		if src.gallery != "" {
			c.sigSource = src
		}
		for _, key := range []string{"community_gallery_image_id", "direct_shared_gallery_image_id"} {
			if id := sub.str(key); id != "" {
				sub.fail(key, fmt.Sprintf("is %s: packer builds from it, but the local target cannot read a shared gallery; build from the image's own gallery (gallery_name, image_name, image_version)", id))
			}
		}
	}
	if sub := r.obj("shared_image_gallery_destination"); sub != nil {
		c.sigDest = &sigRef{sub.str("subscription"), sub.str("resource_group"), sub.str("gallery_name"), sub.str("image_name"), sub.str("image_version")}
		c.regions = sub.regionList("replication_regions")
		c.specialized = sub.bool("specialized")
		c.cvmEncryptionType = sub.str("confidential_vm_image_encryption_type")
	}
	if (c.location == "") == (c.buildResourceGroup == "") {
		if c.location == "" {
			r.fail("location", `is "": specify either a location to build in or an existing build_resource_group_name (packer's rule)`)
		} else {
			r.fail("location", "and build_resource_group_name are both set: specify one of them, not both (packer's rule)")
		}
	}
	c.skipCreateImage = r.bool("skip_create_image")
	c.securityType = r.str("security_type")
	c.securityEncryptionType = r.str("security_encryption_type")
	c.secureBoot = r.bool("secure_boot_enabled")
	c.vtpm = r.bool("vtpm_enabled")
	c.replicaCount = r.int("shared_image_gallery_replica_count")
	c.excludeFromLatest = r.bool("shared_gallery_image_version_exclude_from_latest")
	if eol := r.str("shared_gallery_image_version_end_of_life_date"); eol != "" {
		t, err := time.Parse(time.RFC3339, eol)
		if err != nil {
			r.fail("shared_gallery_image_version_end_of_life_date", "is not an RFC 3339 time (e.g. 2030-01-01T00:00:00Z)")
		} else {
			c.endOfLife = &t
		}
	}
	c.tags = r.strMap("azure_tags")
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if err := c.check(); err != nil {
		return nil, withUnsetEnv(err, unsetEnv)
	}
	return c, nil
}

// withUnsetEnv adds to a failed check the settings that were rendered from
// environment variables the build was not given: an empty image_publisher
// is "a marketplace source needs image_publisher, …" to packer, and
// IMG_PUBLISHER missing from env= to the user.
func withUnsetEnv(err error, unsetEnv map[string][]string) error {
	if len(unsetEnv) == 0 {
		return err
	}
	paths := make([]string, 0, len(unsetEnv))
	for p := range unsetEnv {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var from []string
	for _, p := range paths {
		from = append(from, fmt.Sprintf("%s from {{env `%s`}}", p, strings.Join(unsetEnv[p], "`}}, {{env `")))
	}
	return fmt.Errorf("%w\n(rendered from environment variables packer_build's env does not set or sets to \"\", which packer renders as \"\": %s; pass them in env = {…})", err, strings.Join(from, "; "))
}

// check applies packer 1.6.6's rules for the shapes imgflow builds (its
// messages where it has one), plus the silent skip imgflow refuses.
func (c *azureConfig) check() error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("build %s: "+format, append([]any{c.build}, args...)...))
	}
	if c.osType == "" {
		fail("an os_type must be specified (Linux or Windows)")
	} else if err := cloud.ValidateOSType(c.osType); err != nil {
		fail("os_type: %v", err)
	}
	sources := 0
	if c.publisher != "" || c.offer != "" || c.sku != "" {
		sources++
		if c.publisher == "" || c.offer == "" || c.sku == "" {
			fail("a marketplace source needs image_publisher, image_offer and image_sku")
		}
	}
	if c.imageURL != "" {
		sources++
	}
	if c.sigSource != nil {
		sources++
		if c.sigSource.resourceGroup == "" || c.sigSource.gallery == "" || c.sigSource.image == "" || c.sigSource.version == "" {
			fail("shared_image_gallery needs resource_group, gallery_name, image_name and image_version")
		}
	}
	if sources != 1 {
		fail("specify exactly one source: a marketplace image (image_publisher, image_offer, image_sku), a VHD (image_url) or a gallery image (shared_image_gallery)")
	}
	switch {
	case c.vhdMode() && c.managedMode():
		fail("specify either a VHD (storage_account, resource_group_name, capture_container_name, capture_name_prefix) or a managed image (managed_image_name, managed_image_resource_group_name) output, not both")
	case c.vhdMode():
		if c.storageAccount == "" || c.resourceGroup == "" || c.captureContainer == "" || c.capturePrefix == "" {
			fail("a VHD output needs storage_account, resource_group_name, capture_container_name and capture_name_prefix")
		}
		if c.sigSource != nil {
			fail("VHD Target [capture_container_name] is not supported when using Shared Image Gallery as source: use managed_image_name and managed_image_resource_group_name")
		}
	case c.managedMode():
		if c.imageName == "" || c.imageResourceGroup == "" {
			fail("a managed image output needs managed_image_name and managed_image_resource_group_name")
		}
		if c.imageURL != "" {
			fail("A managed image must be created from a managed image, it cannot be created from a VHD (image_url)")
		}
	case c.sigDest != nil:
		// Published straight to the gallery.
	default:
		fail("no output: set storage_account, resource_group_name, capture_container_name and capture_name_prefix (VHD), managed_image_name and managed_image_resource_group_name (managed image), or shared_image_gallery_destination alone (straight to the gallery)")
	}
	if c.sigDest != nil {
		if c.vhdMode() {
			fail("shared_image_gallery_destination with a VHD output: packer 1.6.6 silently skips the gallery in VHD mode; remove the VHD keys to publish straight to the gallery")
		}
		if c.sigDest.resourceGroup == "" || c.sigDest.gallery == "" || c.sigDest.image == "" || c.sigDest.version == "" {
			fail("shared_image_gallery_destination needs resource_group, gallery_name, image_name and image_version")
		} else if err := cloud.ValidateVersion(c.sigDest.version); err != nil {
			fail("shared_image_gallery_destination.image_version: %v", err)
		}
	}
	errs = append(errs, c.checkSecurity()...)
	if c.osDiskGB < 0 {
		fail("os_disk_size_gb must be positive")
	}
	return errors.Join(errs...)
}

// checkSecurity applies the azure plugin's (2.x) rules for the build VM's
// security settings: confidential VMs, Secure Boot, vTPM and specialized
// images are published straight to a gallery, never as a managed image or
// VHD.
func (c *azureConfig) checkSecurity() []error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("build %s: "+format, append([]any{c.build}, args...)...))
	}
	switch c.securityType {
	case "", securityTrustedLaunch, securityConfidentialVM:
	default:
		fail("security_type %q must be %s or %s", c.securityType, securityTrustedLaunch, securityConfidentialVM)
	}
	cvm := c.securityType == securityConfidentialVM
	if c.securityEncryptionType != "" && !cvm {
		fail("security_encryption_type must be unset if the security_type is not set to %q", securityConfidentialVM)
	}
	if cvm && (c.vhdMode() || c.managedMode()) {
		fail("a security_type of %q cannot build a VHD or a managed image: Azure publishes a confidential VM only straight to a gallery; remove the managed_image_* (or VHD) keys and keep shared_image_gallery_destination with specialized = true",
			securityConfidentialVM)
	}
	if c.managedMode() && (c.secureBoot || c.vtpm) {
		fail("a managed image (managed_image_name, managed_image_resource_group_name) can not set secure_boot_enabled or vtpm_enabled: publish straight to shared_image_gallery_destination instead")
	}
	if c.managedMode() && c.specialized {
		fail("a managed image (managed_image_name, managed_image_resource_group_name) can not be specialized: remove shared_image_gallery_destination.specialized, or the managed_image_* keys to publish straight to the gallery")
	}
	if cvm && c.securityEncryptionType == "VMGuestStateOnly" && c.cvmEncryptionType != "" && c.cvmEncryptionType != "EncryptedVMGuestStateOnlyWithPmk" {
		fail("security_encryption_type \"VMGuestStateOnly\" needs shared_image_gallery_destination.confidential_vm_image_encryption_type \"EncryptedVMGuestStateOnlyWithPmk\", not %q", c.cvmEncryptionType)
	}
	return errs
}

// The azure plugin's security_type values.
const (
	securityTrustedLaunch  = "TrustedLaunch"
	securityConfidentialVM = "ConfidentialVM"
)

// reader reads typed fields of a JSON object, collecting errors.
type reader struct {
	m    map[string]any
	path string // build name and keys, for messages
	rel  string // keys from the builder's root ("" there), for unsetEnv
	// unsetEnv maps builder-relative paths to the env names their values
	// were made from but the build was not given (packer.Rendering.UnsetEnv).
	unsetEnv map[string][]string
	errs     *[]error
}

func (r *reader) fail(key, msg string) {
	*r.errs = append(*r.errs, fmt.Errorf("%s.%s %s%s", r.path, key, msg, r.envHint(key)))
}

// envHint says which environment variables the build was not given made
// the value of key (or of its elements) what it is; "" when none.
func (r *reader) envHint(key string) string {
	rel := key
	if r.rel != "" {
		rel = r.rel + "." + key
	}
	seen := map[string]bool{}
	for path, names := range r.unsetEnv {
		if path == rel || strings.HasPrefix(path, rel+"[") || strings.HasPrefix(path, rel+".") {
			for _, n := range names {
				seen[n] = true
			}
		}
	}
	if len(seen) == 0 {
		return ""
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	refs := make([]string, len(names))
	for i, n := range names {
		refs[i] = fmt.Sprintf("{{env `%s`}}", n)
	}
	return fmt.Sprintf(" (made from %s, which packer renders as \"\" because packer_build's env does not set it or sets it to \"\": pass env = {%q: …})",
		strings.Join(refs, ", "), names[0])
}

func (r *reader) str(key string) string {
	switch v := r.m[key].(type) {
	case nil:
		return ""
	case string:
		return v
	case float64, bool:
		return fmt.Sprint(v)
	}
	r.fail(key, "must be a string")
	return ""
}

func (r *reader) int(key string) int {
	switch v := r.m[key].(type) {
	case nil:
		return 0
	case float64:
		return int(v)
	case string:
		if v == "" {
			return 0
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			r.fail(key, fmt.Sprintf("is %q, not a whole number", v))
		}
		return n
	}
	r.fail(key, "must be a number")
	return 0
}

func (r *reader) bool(key string) bool {
	switch v := r.m[key].(type) {
	case nil:
		return false
	case bool:
		return v
	case string:
		if v == "" {
			return false
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			r.fail(key, fmt.Sprintf("is %q, not true or false", v))
		}
		return b
	}
	r.fail(key, "must be a boolean")
	return false
}

func (r *reader) obj(key string) *reader {
	switch v := r.m[key].(type) {
	case nil:
		return nil
	case map[string]any:
		rel := key
		if r.rel != "" {
			rel = r.rel + "." + key
		}
		return &reader{m: v, path: r.path + "." + key, rel: rel, unsetEnv: r.unsetEnv, errs: r.errs}
	}
	r.fail(key, "must be an object")
	return nil
}

// regionList reads a list of Azure regions as packer 1.9.5's azure-arm
// does: a string is split on commas (the plugin SDK's string-to-slice decode
// hook; "" is no region), a list is taken element by element, and each
// region is lower-cased with its spaces removed. An empty region is an
// error: Azure would refuse it.
func (r *reader) regionList(key string) []string {
	var raw []string
	from := "" // the comma-separated string, for messages
	switch v := r.m[key].(type) {
	case nil:
		return nil
	case string:
		if v == "" {
			return nil
		}
		raw, from = strings.Split(v, ","), v
	case []any:
		for _, e := range v {
			s, ok := e.(string)
			if !ok {
				r.fail(key, "must be a list of strings")
				return nil
			}
			raw = append(raw, s)
		}
	default:
		r.fail(key, "must be a list of strings or a comma-separated string")
		return nil
	}
	out := make([]string, 0, len(raw))
	for i, s := range raw {
		region := strings.ToLower(strings.ReplaceAll(s, " ", ""))
		switch {
		case region == "" && from != "":
			r.fail(key, fmt.Sprintf("%q has an empty region at position %d", from, i+1))
			continue
		case region == "":
			r.fail(fmt.Sprintf("%s[%d]", key, i), `is "": a region name is required`)
			continue
		}
		out = append(out, region)
	}
	return out
}

func (r *reader) strMap(key string) map[string]string {
	switch v := r.m[key].(type) {
	case nil:
		return nil
	case map[string]any:
		out := make(map[string]string, len(v))
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			s, ok := v[k].(string)
			if !ok {
				r.fail(key+"."+k, "must be a string")
				continue
			}
			out[k] = s
		}
		return out
	}
	r.fail(key, "must be an object of strings")
	return nil
}
