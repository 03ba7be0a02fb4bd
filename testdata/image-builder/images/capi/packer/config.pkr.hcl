# Test fixture: the provisioner plugins every node template needs (packer init).
packer {
  required_plugins {
    ansible = {
      source  = "github.com/hashicorp/ansible"
      version = ">= 1.1.0"
    }
    goss = {
      source  = "github.com/YaleUniversity/goss"
      version = ">= 3.2.14"
    }
  }
}
