// Package packer is the one place in imgflow that knows how to run packer
// well: it loads legacy JSON templates, finds every {{user}} and {{env}}
// reference they make, refuses to start a build that would render a
// variable as an empty string, runs `packer build -machine-readable` and
// `packer validate` with secrets kept out of argv, logs and errors, and
// turns packer's output into typed results (managed image id, gallery image
// version id, OS disk VHD URI).
//
// imgflow is tested with packer 1.9.5 (`make deps` builds it with `go
// install github.com/hashicorp/packer@v1.9.5`; it bundles the azure plugin
// v1.4.0). Facts about it this package relies on, measured on 1.9.5 with
// the null and file builders and shell-local (see real_test.go):
//
//   - Everything goes to stdout as `timestamp,target,type,data...`; commas in
//     data are written as %!(PACKER_COMMA), newlines as the two characters \n
//     and carriage returns as \r. ui lines have an empty target.
//   - For a legacy JSON template a build's target (and its ui prefix) is
//     "TYPE.NAME" for a builder with a "name" and "TYPE" for one without,
//     while -only takes NAME: results map targets back to NAME.
//   - An undeclared {{user `x`}} renders as "" without any warning, and a
//     var-file may carry keys the template does not declare (they are
//     accepted and visible to {{user}}). imgflow therefore checks references,
//     not declarations: see Template.CheckVariables.
//   - {{env}} is only allowed in the "variables" section; anywhere else
//     packer fails with "env vars are not allowed here".
//   - Variable defaults and var-file values must be JSON strings (or null
//     for a required variable, which packer refuses to leave unset:
//     "required variable not set: NAME").
//   - Values of "sensitive-variables" are masked as <sensitive> in the
//     human UI but NOT in -machine-readable output, so the Runner redacts
//     them itself.
//   - `-only=name` with a name that matches no builder fails with "No builds
//     to run" (packer 1.6.6 built nothing and succeeded). The Runner rejects
//     unknown names up front, naming the builders.
//   - packer runs as a wrapper process, the packer that does the work and
//     one process per plugin, all in one process group. SIGINT to the
//     wrapper alone is ignored; SIGINT to the group cancels the build
//     ("Cancelling build after receiving interrupt", exit 1) and reaches the
//     shell-local scripts too. SIGTERM to the group cancels the same way
//     ("…after receiving terminated") but packer then exits 0 now and then
//     (2 runs in 18 here). The Runner sends SIGINT to the group, judges a
//     cancelled build by its context, not the exit status, and sends
//     SIGKILL after KillGrace: the azure-arm builder's cleanup cannot be
//     measured offline and may need longer.
//   - For an HCL2 template (.pkr.hcl), JSON var-files (named *.json) work
//     the same, an undeclared variable in one is a warning, sensitive
//     values are not masked in -machine-readable output either, and build
//     names, targets and -only names are all "TYPE.NAME". An -only that
//     matches nothing is only a warning there: validate then checks nothing
//     and says "The configuration is valid.", another reason to reject
//     unknown names up front.
//   - `packer validate` takes the same -var-file, -only and template
//     arguments as build, prints "The configuration is valid." or ui error
//     lines, and exits 1 on an invalid template. It does not authenticate:
//     azure-arm templates validate offline (see Runner.Validate).
package packer
