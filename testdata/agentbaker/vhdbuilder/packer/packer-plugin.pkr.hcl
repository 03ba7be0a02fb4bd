# The azure plugin the templates need (the CVM builders' keys are 2.x's):
# `packer init` of this file comes before any build, as in AgentBaker.
packer {
  required_plugins {
    azure = {
      version = "= 2.5.0"
      source  = "github.com/hashicorp/azure"
    }
  }
}
