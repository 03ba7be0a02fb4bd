package cloud

import (
	"regexp"
	"strings"
	"sync"
)

// subscriptionIDRE is a subscription id as ARM spells it: a GUID, 8-4-4-4-12
// hexadecimal digits.
var subscriptionIDRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)
})

// ValidateSubscriptionID checks a subscription id: ARM answers any other
// spelling with InvalidSubscriptionId, and only after a round trip.
func ValidateSubscriptionID(id string) error {
	if subscriptionIDRE().MatchString(id) {
		return nil
	}
	return invalid("subscription id", id, "a subscription id is a GUID (8-4-4-4-12 hexadecimal digits)",
		"copy it from `az account list --query [].id`, e.g. 00000000-0000-0000-0000-000000000000")
}

// SameSubscription reports whether a and b name the same subscription
// (ARM compares ids case-insensitively); "" is the target's own.
func SameSubscription(a, b string) bool { return strings.EqualFold(a, b) }
