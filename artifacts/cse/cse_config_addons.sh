#!/bin/bash
# cse_config_addons.sh — static pod add-ons. On the node:
# provision_configs_addons.sh ($CSE_CONFIG_ADDONS_FILEPATH). Hotfix key:
# provisionConfigsAddons.
CSE_CONFIG_ADDONS_LOADED_FROM="${BASH_SOURCE[0]}"

ADDONS_DIR=/etc/kubernetes/addons

configClusterAutoscalerAddon() { mkdir -p "$ADDONS_DIR" && touch "$ADDONS_DIR/cluster-autoscaler.yaml"; }
configACIConnectorAddon() { mkdir -p "$ADDONS_DIR" && touch "$ADDONS_DIR/aci-connector.yaml"; }
configAzurePolicyAddon() { mkdir -p "$ADDONS_DIR" && touch "$ADDONS_DIR/azure-policy.yaml"; }
