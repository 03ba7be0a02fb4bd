# Test fixture: the Azure builder plugin the Azure templates need (packer init).
packer {
  required_plugins {
    azure = {
      source  = "github.com/hashicorp/azure"
      version = ">= 2.1.8"
    }
  }
}
