# The template choice of AgentBaker's packer.mk, and stand-ins for the
# targets that build what the templates upload (the prefetch script, the
# lister, image-fetcher, the node controller): small files, so that a test run needs no Go toolchain.
GOARCH=amd64
ifeq (${ARCHITECTURE},ARM64)
	GOARCH=arm64
endif

build-packer: setup-golang generate-prefetch-scripts build-image-fetcher build-aks-node-controller build-lister-binary
ifeq (${ARCHITECTURE},ARM64)
ifeq (${OS_SKU},Ubuntu)
ifeq ($(findstring NVIDIA_GB,$(FEATURE_FLAGS)),NVIDIA_GB)
	packer build -var-file=vhdbuilder/packer/settings.json vhdbuilder/packer/vhd-image-builder-arm64-gb.json
else
	packer build -var-file=vhdbuilder/packer/settings.json vhdbuilder/packer/vhd-image-builder-arm64-gen2.json
endif
else ifeq (${OS_SKU},AzureLinux)
	packer build -var-file=vhdbuilder/packer/settings.json vhdbuilder/packer/vhd-image-builder-mariner-arm64.json
else ifeq (${OS_SKU},AzureContainerLinux)
	packer build -var-file=vhdbuilder/packer/settings.json vhdbuilder/packer/vhd-image-builder-acl-arm64.json
endif
else
ifeq (${OS_SKU},Ubuntu)
ifeq ($(findstring cvm,$(FEATURE_FLAGS)),cvm)
	packer build -var-file=vhdbuilder/packer/settings.json vhdbuilder/packer/vhd-image-builder-cvm.json
else
	packer build -var-file=vhdbuilder/packer/settings.json vhdbuilder/packer/vhd-image-builder-base.json
endif
else ifeq (${OS_SKU},AzureLinux)
ifeq ($(findstring cvm,$(FEATURE_FLAGS)),cvm)
	packer build -var-file=vhdbuilder/packer/settings.json vhdbuilder/packer/vhd-image-builder-mariner-cvm.json
else
	packer build -var-file=vhdbuilder/packer/settings.json vhdbuilder/packer/vhd-image-builder-mariner.json
endif
else ifeq (${OS_SKU},AzureContainerLinux)
	packer build -var-file=vhdbuilder/packer/settings.json vhdbuilder/packer/vhd-image-builder-acl.json
endif
endif

setup-golang:
	@echo "setup-golang: installs Go on the machine; not run by imgflow" >&2; exit 1

generate-prefetch-scripts:
	printf '#!/bin/sh\necho prefetch fixture\n' > vhdbuilder/packer/prefetch.sh

build-image-fetcher:
	mkdir -p image-fetcher/bin
	printf '#!/bin/sh\necho image-fetcher fixture amd64\n' > image-fetcher/bin/image-fetcher-linux-amd64
	printf '#!/bin/sh\necho image-fetcher fixture arm64\n' > image-fetcher/bin/image-fetcher-linux-arm64

build-aks-node-controller:
	mkdir -p aks-node-controller/bin
	printf '#!/bin/sh\necho aks-node-controller fixture amd64\n' > aks-node-controller/bin/aks-node-controller-linux-amd64
	printf '#!/bin/sh\necho aks-node-controller fixture arm64\n' > aks-node-controller/bin/aks-node-controller-linux-arm64

build-lister-binary:
	mkdir -p vhdbuilder/lister/bin
	printf '#!/bin/sh\necho lister fixture $(GOARCH)\n' > vhdbuilder/lister/bin/lister

# AzureLinuxOSGuard is built with imagecustomizer, not packer.
run-imagecustomizer publish-imagecustomizer:
	@echo "$@: imagecustomizer builds are not part of this fixture" >&2; exit 1
