#!/bin/bash
# Fixture: what the build VM installs, and the release notes it writes.
set -eux
VHD_LOGS_FILEPATH=/opt/azure/vhd-install.complete
echo "Components installed for ${IMG_SKU} (FEATURE_FLAGS=${FEATURE_FLAGS}):" >> "$VHD_LOGS_FILEPATH"
echo "  - containerd" >> "$VHD_LOGS_FILEPATH"
df -h / > /opt/azure/disk-usage.txt
