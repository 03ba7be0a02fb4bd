package builtins

import (
	"context"
	"fmt"

	"github.com/imgflow/imgflow/cloud"
)

// Subscriptions hands out the providers of the subscriptions of a run
// other than its target's: a gallery may live in another subscription of
// the tenant than the build (AgentBaker's GALLERY_SUBSCRIPTION_ID). Each
// is reached as the target is (same credential, same kind of target, a
// dry-run view in the validation pass and plans), one provider per
// subscription for the run. Implementations are safe for concurrent use.
type Subscriptions interface {
	// Provider returns the provider of subscription sub, a valid
	// subscription id other than the target's.
	Provider(ctx context.Context, sub string) (cloud.Provider, error)
}

// SubscriptionArg is the cleanup argument naming the subscription of the
// resource to delete, set only when it is not the target's (journals
// written before it existed, and most runs, have none).
const SubscriptionArg = "subscription_id"

// ProviderFor returns the provider of subscription sub: the target's for
// "" or the target's own id, else the one Subscriptions hands out.
func (r *Run) ProviderFor(ctx context.Context, sub string) (cloud.Provider, error) {
	if sub == "" || cloud.SameSubscription(sub, r.Provider.SubscriptionID()) {
		return r.Provider, nil
	}
	if err := cloud.ValidateSubscriptionID(sub); err != nil {
		return nil, err
	}
	if r.Subscriptions == nil {
		return nil, fmt.Errorf("subscription %s: this run reaches only its target's subscription %s", sub, r.Provider.SubscriptionID())
	}
	p, err := r.Subscriptions.Provider(ctx, sub)
	if err != nil {
		return nil, fmt.Errorf("subscription %s: %w", sub, err)
	}
	return p, nil
}

// subscriptionOf is the subscription in an ARM id, "" when id is not one
// (a value a test made up): the target's, then.
func subscriptionOf(id string) string {
	rid, err := cloud.ParseResourceID(id)
	if err != nil {
		return ""
	}
	return rid.Subscription
}

// providerOfID is the provider of the subscription a resource's ARM id
// names (a gallery(), image_definition() or image_version() struct's id).
func (c *Call) providerOfID(id string) (cloud.Provider, error) {
	return c.Run.ProviderFor(c.Ctx(), subscriptionOf(id))
}

// inOther is what a step's summary adds for a resource in a subscription
// other than the target's, so a plan shows where each change goes.
func (c *Call) inOther(p cloud.Provider) string {
	if p == nil || cloud.SameSubscription(p.SubscriptionID(), c.Run.Provider.SubscriptionID()) {
		return ""
	}
	return " (subscription " + p.SubscriptionID() + ")"
}

// withSubscription adds the subscription of a resource's ARM id to a
// deletion's args when it is not the target's, so the deletion, a
// resumed run's and gc's, go to that subscription.
func (r *Run) withSubscription(args map[string]any, id string) map[string]any {
	sub := subscriptionOf(id)
	if sub == "" || cloud.SameSubscription(sub, r.Provider.SubscriptionID()) {
		return args
	}
	out := make(map[string]any, len(args)+1)
	for k, v := range args {
		out[k] = v
	}
	out[SubscriptionArg] = sub
	return out
}

// cleanupProvider is the provider a journaled cleanup runs against: that
// of its args' subscription, else p.
func cleanupProvider(ctx context.Context, p cloud.Provider, subs Subscriptions, args map[string]any) (cloud.Provider, error) {
	sub, _ := args[SubscriptionArg].(string)
	if sub == "" || cloud.SameSubscription(sub, p.SubscriptionID()) {
		return p, nil
	}
	if err := cloud.ValidateSubscriptionID(sub); err != nil {
		return nil, err
	}
	if subs == nil {
		return nil, fmt.Errorf("the resource is in subscription %s, which this target cannot reach", sub)
	}
	return subs.Provider(ctx, sub)
}

// targetSubscriptionOnly refuses a resource group of another subscription
// where a builtin makes its resource in the target's only (storage
// accounts and managed images: blob transfers reach the target's).
func (c *Call) targetSubscriptionOnly(what, sub string) error {
	if sub == "" || cloud.SameSubscription(sub, c.Run.Provider.SubscriptionID()) {
		return nil
	}
	return fmt.Errorf("%s: its resource group is in subscription %s, but imgflow makes storage accounts and managed images in the target's subscription %s only: pass a resource_group() of the target's subscription (only galleries, their definitions and versions may be in another)", what, sub, c.Run.Provider.SubscriptionID())
}
