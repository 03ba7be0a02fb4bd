// Package packer is the one place in imgflow that knows how to run packer
// 1.6.6 well: it loads legacy JSON templates, finds every {{user}} and
// {{env}} reference they make, refuses to start a build that would render a
// variable as an empty string, runs `packer build -machine-readable` with
// secrets kept out of argv, logs and errors, and turns packer's output into
// typed results (managed image id, gallery image version id, OS disk VHD URI).
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
