#!/bin/bash
# cse_config_kubelet.sh — kubelet configuration and start. On the node:
# provision_configs_kubelet.sh ($CSE_CONFIG_KUBELET_FILEPATH). Hotfix key:
# provisionConfigsKubelet.
CSE_CONFIG_KUBELET_LOADED_FROM="${BASH_SOURCE[0]}"

KUBELET_DEFAULT_FILE=/etc/default/kubelet

# configureKubeletServing sets the serving certificate flags.
configureKubeletServing() {
    if [ "${ENABLE_KUBELET_SERVING_CERTIFICATE_ROTATION:-false}" = "true" ]; then
        echo "KUBELET_SERVING_FLAGS=--rotate-server-certificates=true" >>"$KUBELET_DEFAULT_FILE"
    fi
}

# ensureKubelet writes kubelet's flags and starts it.
ensureKubelet() {
    echo "KUBELET_FLAGS=${KUBELET_FLAGS:-}" >"$KUBELET_DEFAULT_FILE"
    configureKubeletServing
    systemctl enable --now kubelet.service
}
