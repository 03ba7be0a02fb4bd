# artifacts/packer/sig-marketplace.json written as HCL2, as a user moving
# to packer >= 1.7 would: marketplace image -> provisioned VM -> managed
# image <sig_image_name>-<sig_image_version> -> gallery version. Used by
# builtins/hcl_build_test.go, which checks that both give the same build.
packer {
  required_plugins {
    azure = {
      source  = "github.com/hashicorp/azure"
      version = ">= 2.5.0"
    }
  }
}

variable "subscription_id" { type = string }
variable "location" { type = string }
variable "vm_size" {
  type    = string
  default = "Standard_D16ds_v5"
}
variable "os_disk_size_gb" {
  type    = number
  default = 30
}
variable "build_id" {
  type    = string
  default = "local"
}
variable "imgflow_files_dir" { type = string }
variable "imgflow_installs" { type = string }
variable "bcc_version" { type = string }
variable "ua_token" {
  type      = string
  default   = ""
  sensitive = true
}
variable "sig_resource_group_name" { type = string }
variable "sig_gallery_name" { type = string }
variable "sig_image_name" { type = string }
variable "sig_image_version" { type = string }
variable "managed_image_resource_group_name" { type = string }

locals {
  image_sku = "22_04-lts-gen2"
  shell     = "chmod +x {{.Path}}; {{.Vars}} sudo -E /bin/bash -eu {{.Path}}"
}

source "azure-arm" "sig" {
  use_azure_cli_auth     = true
  subscription_id        = var.subscription_id
  location               = var.location
  vm_size                = var.vm_size
  os_type                = "Linux"
  os_disk_size_gb        = var.os_disk_size_gb
  ssh_read_write_timeout = "5m"

  image_publisher = "Canonical"
  image_offer     = "0001-com-ubuntu-server-jammy"
  image_sku       = local.image_sku
  image_version   = "latest"

  managed_image_name                 = "${var.sig_image_name}-${var.sig_image_version}"
  managed_image_resource_group_name  = var.managed_image_resource_group_name
  managed_image_storage_account_type = "Premium_LRS"
  polling_duration_timeout           = "1h"

  shared_image_gallery_destination {
    subscription        = var.subscription_id
    resource_group      = var.sig_resource_group_name
    gallery_name        = var.sig_gallery_name
    image_name          = var.sig_image_name
    image_version       = var.sig_image_version
    replication_regions = [var.location]
  }

  azure_tags = {
    createdBy = "imgflow"
    buildId   = var.build_id
    os        = "Linux"
    image_sku = local.image_sku
  }
}

build {
  sources = ["source.azure-arm.sig"]

  provisioner "file" {
    source      = "${var.imgflow_files_dir}/home/packer/"
    destination = "/home/packer/"
  }

  provisioner "shell" {
    script           = "${path.root}/../../../artifacts/scripts/install-files.sh"
    environment_vars = ["IMGFLOW_INSTALLS=${var.imgflow_installs}", "BCC_VERSION=${var.bcc_version}", "UA_TOKEN=${var.ua_token}"]
    execute_command  = local.shell
  }

  provisioner "shell" {
    inline = ["sudo /usr/sbin/waagent -force -deprovision+user && export HISTSIZE=0 && sync"]
  }
}
