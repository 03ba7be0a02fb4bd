package azrules

import (
	"fmt"
	"strings"

	"github.com/imgflow/imgflow/cloud"
)

// Built-in roles that grant what imgflow does (Azure's built-in role
// definitions): Contributor every resource write, Compute Gallery Sharing
// Admin the gallery share action Contributor lacks, Storage Blob Data
// Contributor the blob data actions, Storage Account Key Operator Service
// Role an account's keys.
const (
	RoleContributor        = "Contributor"
	RoleGallerySharing     = "Compute Gallery Sharing Admin"
	RoleBlobDataContrib    = "Storage Blob Data Contributor"
	RoleKeyOperator        = "Storage Account Key Operator Service Role"
	ActionShareGallery     = "Microsoft.Compute/galleries/share/action"
	ActionListKeys         = "Microsoft.Storage/storageAccounts/listKeys/action"
	DataActionBlobWrite    = "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/write"
	DataActionBlobDelete   = "Microsoft.Storage/storageAccounts/blobServices/containers/blobs/delete"
	ActionContainerWrite   = "Microsoft.Storage/storageAccounts/blobServices/containers/write"
	actionGroupWrite       = "Microsoft.Resources/subscriptions/resourceGroups/write"
	actionGroupDelete      = "Microsoft.Resources/subscriptions/resourceGroups/delete"
	actionDiskGetAccess    = "Microsoft.Compute/disks/beginGetAccess/action"
	actionDiskEndGetAccess = "Microsoft.Compute/disks/endGetAccess/action"
)

// Need is one action a change needs at a scope, and the built-in role
// that grants it.
type Need struct {
	// Scope is an ARM id: the subscription for resource groups, else the
	// resource group. A blob or container need names its account instead
	// (Account), which the caller resolves to the account's group.
	Scope   string
	Account string
	Action  string
	// Data marks a data action (dataActions, notDataActions).
	Data bool
	Role string
	// Or, when set, is another way to the same end (a blob written with
	// the account key instead of the token): either suffices.
	Or *Need
}

// Key identifies a need for de-duplication.
func (n Need) Key() string {
	return strings.ToLower(n.Scope + "|" + n.Account + "|" + n.Action + "|" + fmt.Sprint(n.Data))
}

// resourceActions are the ARM resource types of the kinds that are plain
// resource writes, by change kind.
var resourceActions = map[string]string{
	cloud.KindGallery:         "Microsoft.Compute/galleries",
	cloud.KindImageDefinition: "Microsoft.Compute/galleries/images",
	cloud.KindImageVersion:    "Microsoft.Compute/galleries/images/versions",
	cloud.KindManagedImage:    "Microsoft.Compute/images",
	cloud.KindStorageAccount:  "Microsoft.Storage/storageAccounts",
	cloud.KindDisk:            "Microsoft.Compute/disks",
	cloud.KindVM:              "Microsoft.Compute/virtualMachines",
	cloud.KindRunCommand:      "Microsoft.Compute/virtualMachines/runCommands",
}

// NeedsOf lists what change c needs in subscription sub. keys reports
// whether blob calls to an account go through its shared key (listKeys)
// rather than the caller's token (data actions).
func NeedsOf(sub string, c cloud.Change, auth func(account string) cloud.BlobAuthMode) []Need {
	subScope := "/subscriptions/" + sub
	verb := "write"
	if c.Op == cloud.OpDelete {
		verb = "delete"
	}
	switch c.Kind {
	case cloud.KindResourceGroup:
		action := actionGroupWrite
		if verb == "delete" {
			action = actionGroupDelete
		}
		return []Need{{Scope: subScope, Action: action, Role: RoleContributor}}
	case cloud.KindContainer, cloud.KindBlob:
		ref, err := cloud.ParseBlobURL(c.ID)
		if err != nil {
			return nil
		}
		keys := Need{Account: ref.Account, Action: ActionListKeys, Role: RoleKeyOperator}
		token := Need{Account: ref.Account, Action: ActionContainerWrite, Role: RoleBlobDataContrib}
		if c.Kind == cloud.KindBlob {
			token.Action, token.Data = DataActionBlobWrite, true
			if verb == "delete" {
				token.Action = DataActionBlobDelete
			}
		}
		switch auth(ref.Account) {
		case cloud.BlobAuthGiven:
			return nil
		case cloud.BlobAuthKeys:
			return []Need{keys}
		case cloud.BlobAuthEither:
			token.Or = &keys
		}
		return []Need{token}
	}
	scope := groupScope(sub, c.ID)
	switch c.Kind {
	case cloud.KindCommunitySharing:
		return []Need{{Scope: scope, Action: ActionShareGallery, Role: RoleGallerySharing}}
	case cloud.KindDiskAccess:
		action := actionDiskGetAccess
		if verb == "delete" {
			action = actionDiskEndGetAccess
		}
		return []Need{{Scope: scope, Action: action, Role: RoleContributor}}
	}
	if typ, ok := resourceActions[c.Kind]; ok {
		return []Need{{Scope: scope, Action: typ + "/" + verb, Role: RoleContributor}}
	}
	return nil
}

func groupScope(sub, id string) string {
	if rid, err := cloud.ParseResourceID(id); err == nil && rid.ResourceGroup != "" {
		return "/subscriptions/" + sub + "/resourceGroups/" + rid.ResourceGroup
	}
	return "/subscriptions/" + sub
}

// Allowed reports whether perms grant the need (or its alternative), as
// ARM evaluates them: some entry (one role assignment's definition)
// matches it with an Actions pattern and none of that entry's NotActions
// (NotActions take away only from their own role's Actions; they are not
// a deny). Patterns compare case-insensitively, '*' standing for any
// run of characters.
func (n Need) Allowed(perms []cloud.Permission) bool {
	return Allowed(perms, n.Action, n.Data) || (n.Or != nil && n.Or.Allowed(perms))
}

// Allowed reports whether perms grant action (a data action when data),
// as ARM evaluates them: see Need.Allowed.
func Allowed(perms []cloud.Permission, action string, data bool) bool {
	for _, p := range perms {
		grant, deny := p.Actions, p.NotActions
		if data {
			grant, deny = p.DataActions, p.NotDataActions
		}
		if matchesAny(grant, action) && !matchesAny(deny, action) {
			return true
		}
	}
	return false
}

func matchesAny(patterns []string, action string) bool {
	for _, p := range patterns {
		if globMatch(strings.ToLower(p), strings.ToLower(action)) {
			return true
		}
	}
	return false
}

// globMatch matches s against pattern, where '*' is any run of characters.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == s
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return strings.HasSuffix(s, parts[len(parts)-1])
}

// RoleCommand is the az command that grants role at scope.
func RoleCommand(role, scope string) string {
	return fmt.Sprintf(`az role assignment create --assignee <principal-id> --role %q --scope %s`, role, scope)
}
