// Package packer is the one place in imgflow that knows how to run packer
// well: it loads legacy JSON templates and HCL2 .pkr.hcl templates, finds
// every {{user}} and {{env}} reference (var.NAME and env("NAME") in HCL2)
// they make, renders them as packer does, runs `packer init` for an HCL2
// template's required_plugins, refuses to start a build packer would refuse
// (or that would build nothing), runs `packer build -machine-readable` and
// `packer validate` with secrets kept out of argv, logs and errors,
// and turns packer's output into typed results (managed image id, gallery
// image version id, OS disk VHD URI).
//
// Variable semantics follow packer 1.9.5, the version image-builder pins,
// measured with `packer build` on the null builder (semantics_real_test.go
// compares Render with packer's own rendering) and `packer validate` on the
// azure-arm builder it bundles (packer-plugin-azure 1.4.0):
//
//   - A var-file is a JSON object of strings; null is read as "" and the key
//     counts as set, so a null satisfies a required variable (image-builder's
//     config/cni.json, containerd.json). Numbers and booleans are an error
//     ("cannot unmarshal number into Go value of type string").
//   - A var-file may carry keys the template does not declare; {{user}}
//     sees them.
//   - A required variable ("name": null in "variables") with no value fails
//     the build ("required variable not set"): CheckVariables.
//   - Defaults and var-file values may use {{user}} and {{env}}. An {{env}}
//     name the environment lacks is "". A {{user}} reference to a variable
//     nobody sets is "" too (image-builder's ansible-args.json refers to a
//     dozen such). packer's loop that renders variables only reports "Failed
//     to interpolate … Packer treats all variables used to interpolate other
//     user variables as required" when no other variable that uses {{user}}
//     renders in its last pass, which real templates never meet; imgflow
//     renders "" always and keeps its own check for a variable that refers to
//     itself.
//   - In builders, provisioners and post-processors an undeclared, unset
//     {{user `x`}} renders as "" without a word. That hides misspelt names
//     (AgentBaker's {{user `VHD_BUILD_TIMESTAMP`}}), so UnsetVariables lists
//     them and packer_build prints them as warnings, not errors: the stock
//     templates rely on it (image-builder's {{user `distro_name`}}).
//   - {{env}} is only allowed in "variables" and var-files; anywhere else
//     packer fails with "env vars are not allowed here".
//   - Build names are rendered ("name": "sig-{{user `build_name`}}") before
//     -only matches them exactly; a name that matches nothing stops packer
//     with "No builds to run" when no build is left, and is skipped silently
//     otherwise. The Runner rejects every unknown name up front.
//
// packer gets imgflow's environment, then CHECKPOINT_DISABLE=1,
// Runner.Env and BuildRequest.Env; the local simulation (localsim) renders
// {{env}} from BuildRequest.Env alone.
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
// imgflow is tested with packer 1.9.5 (`make deps` builds it with `go
// install github.com/hashicorp/packer@v1.9.5`; it bundles the azure plugin
// v1.4.0). Facts about its output and processes this package relies on,
// measured on 1.9.5 with the null and file builders and shell-local (see
// real_test.go):
//
//   - Everything goes to stdout as `timestamp,target,type,data...`; commas in
//     data are written as %!(PACKER_COMMA), newlines as the two characters \n
//     and carriage returns as \r. ui lines have an empty target.
//   - For a legacy JSON template a build's target (and its ui prefix) is
//     "TYPE.NAME" for a builder with a "name" and "TYPE" for one without,
//     while -only takes NAME: results map targets back to NAME.
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
//     shell-local scripts too: on a loaded machine a script now and then
//     dies of it before packer's handler runs, and packer then reports the
//     script's failure ("exit status: -1") instead of a cancellation.
//     SIGTERM to the group cancels the same way
//     ("…after receiving terminated") but packer then exits 0 now and then
//     (2 runs in 18 here). The Runner sends SIGINT to the group, judges a
//     cancelled build by its context, not the exit status, and sends
//     SIGKILL after KillGrace (15 minutes by default): the azure-arm
//     builder's cleanup, deleting the build VM and its temporary resource
//     group and waiting for Azure, cannot be measured offline and takes
//     minutes.
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
