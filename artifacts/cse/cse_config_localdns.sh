#!/bin/bash
# cse_config_localdns.sh — the node-local DNS cache. On the node:
# provision_configs_localdns.sh ($CSE_CONFIG_LOCALDNS_FILEPATH). Hotfix key:
# provisionConfigsLocalDNS.
CSE_CONFIG_LOCALDNS_LOADED_FROM="${BASH_SOURCE[0]}"

LOCALDNS_COREFILE=/opt/azure/containers/localdns/localdns.corefile

# generateLocalDNSFiles writes the Corefile from LOCALDNS_COREFILE_BASE64.
generateLocalDNSFiles() {
    mkdir -p "$(dirname "$LOCALDNS_COREFILE")"
    echo "${LOCALDNS_COREFILE_BASE64:-}" | base64 -d >"$LOCALDNS_COREFILE"
}

# enableLocalDNS starts the cache when the cluster asks for it.
enableLocalDNS() {
    [ "${SHOULD_ENABLE_LOCALDNS:-false}" = "true" ] || return 0
    generateLocalDNSFiles && systemctl enable --now localdns.service
}
