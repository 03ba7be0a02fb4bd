package cloud

import "strings"

// UpdateCommunityProfile returns old with next's updatable fields, keeping
// old's prefix when known (which azrules.CheckCommunityProfileChange
// allows only in another case); next nil keeps old.
func UpdateCommunityProfile(old, next *CommunityInfo) *CommunityInfo {
	if next == nil {
		if old == nil {
			return nil
		}
		c := *old
		return &c
	}
	c := *next
	if old != nil && old.PublicNamePrefix != "" {
		c.PublicNamePrefix = old.PublicNamePrefix
	}
	return &c
}

// PrivateOnlySecurityType reports the SecurityType feature (of an image
// definition's features) that community galleries refuse: TrustedLaunch
// and ConfidentialVM; their "...Supported" variants are fine.
func PrivateOnlySecurityType(features map[string]string) (string, bool) {
	for k, v := range features {
		if strings.EqualFold(k, "SecurityType") && (strings.EqualFold(v, "TrustedLaunch") || strings.EqualFold(v, "ConfidentialVM")) {
			return v, true
		}
	}
	return "", false
}
