#!/bin/bash
# cse_config_gpu.sh — GPU driver configuration, NVIDIA and AMD. On the node:
# provision_configs_gpu.sh, sourced by provision_configs.sh (or from
# $CSE_CONFIG_GPU_FILEPATH). Hotfix key: provisionConfigsGPU.
CSE_CONFIG_GPU_LOADED_FROM="${BASH_SOURCE[0]}"

# configGPUDrivers installs the driver for the node's GPU vendor.
configGPUDrivers() {
    case "${GPU_VENDOR:-nvidia}" in
    nvidia) configNvidiaDrivers ;;
    amd) configAMDDrivers ;;
    *) echo "configGPUDrivers: unknown GPU vendor ${GPU_VENDOR}" >&2; return 1 ;;
    esac
}

configNvidiaDrivers() {
    [ -x /usr/bin/nvidia-smi ] || { echo "nvidia driver not installed on this image" >&2; return 1; }
    /usr/bin/nvidia-smi -pm 1
}

configAMDDrivers() {
    modprobe amdgpu
}

# ensureGPUDrivers configures the drivers when the node has a GPU.
ensureGPUDrivers() {
    if [ "${GPU_NODE:-false}" = "true" ]; then
        configGPUDrivers
    fi
}
