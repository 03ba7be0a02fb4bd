# An HCL2 template that needs the azure plugin 2.x (packer 1.9.5 bundles
# 1.4.0): only `packer init`, which downloads it, makes it valid.
packer {
  required_plugins {
    azure = {
      source  = "github.com/hashicorp/azure"
      version = ">= 2.0.0"
    }
  }
}

variable "subscription_id" {
  type = string
}

source "azure-arm" "sig" {
  use_azure_cli_auth = true
  subscription_id    = var.subscription_id
  location           = "westeurope"
  os_type            = "Linux"
  image_publisher    = "Canonical"
  image_offer        = "0001-com-ubuntu-server-jammy"
  image_sku          = "22_04-lts-gen2"
  vm_size            = "Standard_D4ds_v5"
  specialized        = true

  managed_image_name                = "img"
  managed_image_resource_group_name = "rg"
}

build {
  sources = ["source.azure-arm.sig"]
}
