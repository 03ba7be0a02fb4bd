# A confidential-VM gallery build in the shape of AgentBaker's CVM
# template, written as HCL2: the plugin pin, a specialized ConfidentialVM
# image published straight to a gallery without a managed image.
packer {
  required_plugins {
    azure = {
      source  = "github.com/hashicorp/azure"
      version = ">= 2.5.0"
    }
  }
}

variable "subscription_id" {
  type = string
}

variable "client_secret" {
  type      = string
  default   = ""
  sensitive = true
}

variable "client_id" {
  type    = string
  default = env("AZURE_CLIENT_ID")
}

variable "location" {
  type    = string
  default = "westus2"
}

variable "os_disk_size_gb" {
  type    = number
  default = 30
}

variable "sig_image_version" {
  type = string
}

variable "replication_regions" {
  type    = list(string)
  default = ["westus2", "eastus"]
}

variable "tags" {
  type    = map(string)
  default = {}
}

locals {
  gallery    = "aks_cvm_gallery"
  image_name = "${lower(var.os_sku)}-cvm"
  all_tags   = merge({ createdBy = "imgflow", os = local.image_name }, var.tags)
}

variable "os_sku" {
  type    = string
  default = "Ubuntu2204"
}

local "build_stamp" {
  expression = formatdate("YYYYMMDD", timestamp())
}

source "azure-arm" "cvm" {
  client_id       = var.client_id
  client_secret   = var.client_secret
  subscription_id = var.subscription_id
  location        = var.location
  vm_size         = "Standard_DC8ads_v5"
  os_type         = "Linux"
  os_disk_size_gb = var.os_disk_size_gb

  image_publisher = "Canonical"
  image_offer     = "0001-com-ubuntu-confidential-vm-jammy"
  image_sku       = "22_04-lts-cvm"

  # The OS disk is encrypted with the guest state (EncryptedWithPmk in the
  # gallery); the image goes straight to the gallery, no managed image.
  security_type            = "ConfidentialVM"
  security_encryption_type = "DiskWithVMGuestState"
  secure_boot_enabled      = true
  vtpm_enabled             = true
  skip_create_image        = true

  shared_image_gallery_destination {
    subscription        = var.subscription_id
    resource_group      = "aks-cvm"
    gallery_name        = local.gallery
    image_name          = local.image_name
    image_version       = var.sig_image_version
    replication_regions = var.replication_regions
    specialized         = true
    # Only in the destination block, as in packer-plugin-azure.
    confidential_vm_image_encryption_type = "EncryptedWithPmk"
  }

  azure_tags = local.all_tags
  temp_resource_group_name = "imgflow-${source.name}-${local.build_stamp}"
}

build {
  name    = "cvm"
  sources = ["source.azure-arm.cvm"]

  provisioner "shell" {
    inline          = ["echo building ${var.os_sku}", "sudo apt-get update"]
    execute_command = "sudo -E sh '{{ .Path }}'"
  }

  post-processor "manifest" {
    output = "manifest.json"
  }
}
