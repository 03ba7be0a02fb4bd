package cloud

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"
)

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

// StorageAccountHashLen is how many hex digits of the subscription's hash
// SubscriptionStorageAccountName appends to its prefix; a prefix may then
// have up to 24 − StorageAccountHashLen characters.
const StorageAccountHashLen = 8

// SubscriptionStorageAccountName is prefix followed by the first
// StorageAccountHashLen hex digits of the SHA-256 of the subscription id
// (lower-cased). Storage account names are global across Azure, so a fixed
// name ("aksvhdclassic") may belong to another subscription; this one is
// the same on every run in one subscription and differs between them.
// The prefix is checked: 1–16 lowercase letters and digits.
func SubscriptionStorageAccountName(subscription, prefix string) (string, error) {
	const field = "storage account name prefix"
	maxPrefix := 24 - StorageAccountHashLen
	if n := utf8.RuneCountInString(prefix); n < 1 || n > maxPrefix {
		return "", invalid(field, prefix, fmt.Sprintf("is %d characters long; it must be 1–%d (%d hex digits of the subscription follow)", n, maxPrefix, StorageAccountHashLen), "e.g. aksvhd")
	}
	if bad := badRunes(prefix, isLowerAlnum); len(bad) > 0 {
		return "", invalid(field, prefix, fmt.Sprintf("contains %s (allowed: lowercase letters and digits)", quoteRunes(bad)), "e.g. "+strings.ToLower(strings.Map(func(r rune) rune {
			if isASCIIAlnum(r) {
				return r
			}
			return -1
		}, prefix)))
	}
	sum := sha256.Sum256([]byte(strings.ToLower(subscription)))
	return prefix + hex.EncodeToString(sum[:])[:StorageAccountHashLen], nil
}
