#!/bin/bash
# cse_config_network.sh — node network configuration. On the node:
# provision_configs_network.sh ($CSE_CONFIG_NETWORK_FILEPATH). Hotfix key:
# provisionConfigsNetwork.
CSE_CONFIG_NETWORK_LOADED_FROM="${BASH_SOURCE[0]}"

# configureSecondaryNICs brings up the NICs after the first.
configureSecondaryNICs() {
    local nic
    for nic in ${SECONDARY_NICS:-}; do
        ip link set "$nic" up
    done
}

# ensureAzureNetworkConfig writes the CNI configuration.
ensureAzureNetworkConfig() {
    local config="${NETWORK_CONFIG:-}"
    [ -n "$config" ] || config='{}'
    mkdir -p /etc/cni/net.d
    printf '%s\n' "$config" >/etc/cni/net.d/10-azure.conflist
}
