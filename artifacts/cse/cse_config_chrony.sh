#!/bin/bash
# cse_config_chrony.sh — time synchronisation through the Hyper-V PTP clock.
# On the node: provision_configs_chrony.sh ($CSE_CONFIG_CHRONY_FILEPATH).
# Hotfix key: provisionConfigsChrony.
CSE_CONFIG_CHRONY_LOADED_FROM="${BASH_SOURCE[0]}"

# configureChrony points chrony at the PTP clock and restarts it.
configureChrony() {
    echo "refclock PHC /dev/ptp_hyperv poll 3 dpoll -2 offset 0" >/etc/chrony/conf.d/azure-ptp.conf
    systemctl restart chrony.service
}
