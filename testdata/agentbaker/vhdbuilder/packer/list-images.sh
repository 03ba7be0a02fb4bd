#!/bin/bash
# Fixture: runs the lister, which writes image-bom.json.
set -eux
/home/packer/lister --sku "${SKU_NAME}" --node-image-version "${IMAGE_VERSION}" --output-path /opt/azure/containers/image-bom.json
