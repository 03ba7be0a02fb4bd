// Package artifacts holds the files image builds stage, as data: the CSE
// configuration scripts and their manifest (cse/), the MGLRU tmpfiles rule
// (tmpfiles/), the azure-arm packer templates (packer/), the scripts the
// templates run on the build VM (scripts/) and the build tools built before
// packer runs (build-tools/). It has no Go API; its tests check that the
// artifacts keep the rules issue 3 sets (every template that uploads the
// CSE parent uploads every module, templates pass `packer validate`, BCC is
// pinned, the sourcing rule holds).
package artifacts
