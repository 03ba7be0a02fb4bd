#!/bin/bash
# cse_config.sh — the CSE configuration parent, installed on the node as
# /opt/azure/containers/provision_configs.sh (mode 0744) and sourced by the
# CSE main script.
#
# It keeps the functions every node needs and sources one module per
# feature area. Each module is found through its path variable
# (CSE_CONFIG_GPU_FILEPATH, …), set by cse_cmd.sh / the node controller so a
# hotfix can point at a newer copy; when the variable is unset or empty the
# module is the sibling named like this file: provision_configs_gpu.sh on
# the node, cse_config_gpu.sh in the source tree. An explicit path wins.
#
# All modules are always packaged (artifacts/cse/manifest.json lists them;
# stage_cse_modules() stages them), whatever the image's features.

# configureAdminUser: the one parent function kept here as an example of
# the core that is not split out.
configureAdminUser() {
    chage -E -1 -I -1 -m 0 -M 99999 "${ADMINUSER:-azureuser}" 2>/dev/null || true
}

# Modules. Each line is the real layout's rule:
#   source "${CSE_CONFIG_<X>_FILEPATH:-${BASH_SOURCE[0]%.sh}_<x>.sh}"
# A module that cannot be sourced fails the parent: a node without its GPU
# or kubelet functions must not half-provision.
source "${CSE_CONFIG_GPU_FILEPATH:-${BASH_SOURCE[0]%.sh}_gpu.sh}" || return 1 2>/dev/null || exit 1
source "${CSE_CONFIG_LOCALDNS_FILEPATH:-${BASH_SOURCE[0]%.sh}_localdns.sh}" || return 1 2>/dev/null || exit 1
source "${CSE_CONFIG_KUBELET_FILEPATH:-${BASH_SOURCE[0]%.sh}_kubelet.sh}" || return 1 2>/dev/null || exit 1
source "${CSE_CONFIG_NETWORK_FILEPATH:-${BASH_SOURCE[0]%.sh}_network.sh}" || return 1 2>/dev/null || exit 1
source "${CSE_CONFIG_ADDONS_FILEPATH:-${BASH_SOURCE[0]%.sh}_addons.sh}" || return 1 2>/dev/null || exit 1
source "${CSE_CONFIG_CHRONY_FILEPATH:-${BASH_SOURCE[0]%.sh}_chrony.sh}" || return 1 2>/dev/null || exit 1
