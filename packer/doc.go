// Package packer is the one place in imgflow that knows how to run packer
// well: it loads legacy JSON templates (packer 1.6.6's format) and HCL2
// .pkr.hcl templates, finds every {{user}} and {{env}} reference (var.NAME
// and env("NAME") in HCL2) they make, refuses to start a build that would
// render a variable as an empty string, runs `packer init` for an HCL2
// template's required_plugins and `packer build -machine-readable` with
// secrets kept out of argv, logs and errors, and turns packer's output into
// typed results (managed image id, gallery image version id, OS disk VHD URI).
//
// Facts about packer 1.9.5 and HCL2 this package relies on (measured, and
// checked by hcl_real_test.go with null sources):
//
//   - Build names are "type.name" for a build block without a name and
//     "build-name.type.name" for one with; -only takes them as they are.
//     Two builds of one name are accepted and both run; imgflow refuses them.
//   - A variable without a default and no value fails with `Unset variable
//     "x"`; default = null is a value (null). An undeclared -var fails
//     ("Undefined -var variable"), an undeclared var-file key only warns.
//   - A JSON var-file string converts to a number or bool variable, not to a
//     list or map: those need JSON lists and objects.
//   - replace() is literal: "/…/" is not a regular expression.
//   - Without the plugins of required_plugins, packer fails ("Did you run
//     packer init for this project ?"); `packer init` installs them.
//
// Facts about packer 1.6.6 this package relies on (measured with Debian's
// packer 1.6.6+ds2-1+b1, see ../shared/reference/azure-sdk-and-tools.md §6):
//
//   - Everything goes to stdout as `timestamp,target,type,data...`; commas in
//     data are written as %!(PACKER_COMMA), newlines as the two characters \n
//     and carriage returns as \r. ui lines have an empty target.
//   - An undeclared {{user `x`}} renders as "" without any warning, and a
//     var-file may carry keys the template does not declare (they are
//     accepted and visible to {{user}}). imgflow therefore checks references,
//     not declarations: see Template.CheckVariables.
//   - {{env}} is only allowed in the "variables" section; anywhere else
//     packer fails with "env vars are not allowed here".
//   - Variable defaults and var-file values must be JSON strings (or null
//     for a required variable).
//   - Values of "sensitive-variables" are masked as <sensitive> in the
//     human UI but NOT in -machine-readable output, so the Runner redacts
//     them itself.
//   - `-only=name` with a name that matches no builder is not an error: packer
//     exits 0 with "no artifacts were created". The Runner rejects unknown
//     names up front.
//   - SIGINT cancels a build cleanly; SIGTERM is ignored while the azure-arm
//     builder retries, so cancellation is SIGINT then SIGKILL.
package packer
