# AKS Ubuntu confidential VM image (AgentBaker's vhd-image-builder-cvm): the
# VM is published straight to the gallery as a Specialized version with VM
# guest state encrypted by a platform key. Needs the azure plugin 2.x
# (security_type, specialized, confidential_vm_image_encryption_type): they
# are declared in required_plugins and installed by packer init (packer 1.9.5
# bundles the 1.4 plugin, which does not know them). The definition must be
# Specialized with SecurityType ConfidentialVM.

packer {
  required_plugins {
    azure = {
      source  = "github.com/hashicorp/azure"
      version = ">= 2.1.0"
    }
  }
}

variable "subscription_id" {
  type = string
}

variable "location" {
  type = string
}

variable "vm_size" {
  type    = string
  default = "Standard_DC16ads_v5"
}

variable "os_disk_size_gb" {
  type    = string
  default = "30"
}

variable "build_id" {
  type    = string
  default = "local"
}

variable "imgflow_files_dir" {
  type = string
}

variable "imgflow_downloads_dir" {
  type = string
}

variable "imgflow_installs" {
  type = string
}

variable "img_publisher" {
  type    = string
  default = "Canonical"
}

variable "img_offer" {
  type = string
}

variable "img_sku" {
  type = string
}

variable "img_version" {
  type    = string
  default = "latest"
}

variable "enable_fips" {
  type    = string
  default = "false"
}

variable "bcc_version" {
  type = string
}

variable "ua_token" {
  type      = string
  default   = ""
  sensitive = true
}

variable "sig_resource_group_name" {
  type = string
}

variable "sig_gallery_name" {
  type = string
}

variable "sig_image_name" {
  type = string
}

variable "sig_image_version" {
  type = string
}

source "azure-arm" "cvm" {
  use_azure_cli_auth       = true
  subscription_id          = "${var.subscription_id}"
  location                 = "${var.location}"
  vm_size                  = "${var.vm_size}"
  os_type                  = "Linux"
  os_disk_size_gb          = "${var.os_disk_size_gb}"
  ssh_read_write_timeout   = "5m"
  image_publisher          = "${var.img_publisher}"
  image_offer              = "${var.img_offer}"
  image_sku                = "${var.img_sku}"
  image_version            = "${var.img_version}"
  polling_duration_timeout = "1h"
  secure_boot_enabled      = true
  vtpm_enabled             = true
  security_type            = "ConfidentialVM"
  security_encryption_type = "VMGuestStateOnly"
  shared_image_gallery_destination {
    specialized                           = true
    confidential_vm_image_encryption_type = "EncryptedVMGuestStateOnlyWithPmk"
    subscription                          = "${var.subscription_id}"
    resource_group                        = "${var.sig_resource_group_name}"
    gallery_name                          = "${var.sig_gallery_name}"
    image_name                            = "${var.sig_image_name}"
    image_version                         = "${var.sig_image_version}"
    replication_regions                   = ["${var.location}"]
  }
  azure_tags = {
    createdBy = "imgflow"
    buildId   = "${var.build_id}"
    os        = "Linux"
    image_sku = "${var.img_sku}"
  }
}

build {
  sources = ["source.azure-arm.cvm"]

  provisioner "shell" {
    inline = ["sudo mkdir -p /opt/azure/containers /opt/scripts /opt/certs"]
  }

  provisioner "file" {
    source      = "${var.imgflow_files_dir}/home/packer/"
    destination = "/home/packer/"
  }

  provisioner "shell" {
    script           = "${path.root}/../scripts/install-files.sh"
    environment_vars = ["IMGFLOW_INSTALLS=${var.imgflow_installs}"]
    execute_command  = "chmod +x {{.Path}}; {{.Vars}} sudo -E /bin/bash -eu {{.Path}}"
  }

  provisioner "shell" {
    environment_vars = ["UA_TOKEN=${var.ua_token}", "ENABLE_FIPS=${var.enable_fips}"]
    execute_command  = "chmod +x {{.Path}}; {{.Vars}} sudo -E /bin/bash -eu {{.Path}}"
    inline           = ["if [ -n \"$UA_TOKEN\" ]; then ua attach \"$UA_TOKEN\"; fi", "if [ \"$${ENABLE_FIPS,,}\" = true ]; then ua enable fips-updates --assume-yes; fi"]
  }

  provisioner "shell" {
    script           = "${path.root}/../scripts/install-bcc.sh"
    environment_vars = ["BCC_VERSION=${var.bcc_version}"]
    execute_command  = "chmod +x {{.Path}}; {{.Vars}} sudo -E /bin/bash -eu {{.Path}}"
  }

  provisioner "file" {
    direction   = "download"
    source      = "/var/log/bcc_installation.log"
    destination = "${var.imgflow_downloads_dir}/bcc-tools-installation.log"
  }

  provisioner "shell" {
    inline = ["test -x /home/packer/lister || { echo 'lister was not uploaded: pass aks.build_tools(...).uploads in files'; exit 1; }", "sudo /home/packer/lister /opt/azure/containers | sudo tee /opt/azure/image-bom.json >/dev/null"]
  }

  provisioner "shell" {
    script           = "${path.root}/../scripts/release-notes.sh"
    environment_vars = ["IMG_PUBLISHER=${var.img_publisher}", "IMG_OFFER=${var.img_offer}", "IMG_SKU=${var.img_sku}", "IMG_VERSION=${var.img_version}", "BUILD_ID=${var.build_id}"]
    execute_command  = "chmod +x {{.Path}}; {{.Vars}} sudo -E /bin/bash -eu {{.Path}}"
  }

  provisioner "file" {
    direction   = "download"
    source      = "/opt/azure/vhd-install.complete"
    destination = "${var.imgflow_downloads_dir}/release-notes.txt"
  }

  provisioner "file" {
    direction   = "download"
    source      = "/opt/azure/image-bom.json"
    destination = "${var.imgflow_downloads_dir}/image-bom.json"
  }

  provisioner "shell" {
    inline = ["sudo /usr/sbin/waagent -force -deprovision+user && export HISTSIZE=0 && sync"]
  }
}
