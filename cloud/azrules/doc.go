// Package azrules simulates the rules Azure Resource Manager and the
// Compute gallery service apply to requests: which changes an existing
// resource accepts, where nested resources may live, what a version's
// source and target regions must be, and the error each refusal answers
// with (code, HTTP status, message).
//
// Every simulated target shares it: the local target (cloud/local), the
// dry-run overlay (cloud/overlay) and the fake ARM server the Azure
// target is tested against (cloud/azure/fakearm), so a rule is written,
// and fixed, once. The rules work on package cloud's types; fakearm
// converts its SDK models at its edge. Rules that the client-side ensure
// functions of package cloud also need (cloud.SameSource,
// cloud.PrivateOnlySecurityType) live in package cloud, which cannot
// import this one.
//
// A rule returns nil or a *cloud.Error shaped as Azure answers (see
// cloud.StatusOf for the status of each code); resource names the ARM id
// or blob URL (without SAS) the refusal concerns. Outside cloud/azsim,
// this package is the only place an ARM error is built: the Azure target
// too takes the answers it gives for Azure (a request it refuses before
// sending, an answer it normalises) from here, as
// TestARMErrorsBuiltOnlyInTheSimulation checks.
package azrules
