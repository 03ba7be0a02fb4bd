# The functions imgflow evaluates, as packer 1.9.5 evaluates them:
# packer/hcl_real_test.go prints local.results with a shell-local
# provisioner and compares it with imgflow's own evaluation.
variable "csv" {
  type    = string
  default = " a,B ,c "
}

variable "regions" {
  type    = list(string)
  default = ["westeurope", "eastus"]
}

variable "tags" {
  type    = map(string)
  default = { team = "node" }
}

variable "unset" {
  type    = string
  default = null
}

locals {
  parts = split(",", trimspace(var.csv))
  results = {
    upper      = upper(var.csv)
    lower      = lower(var.csv)
    joined     = join("-", local.parts)
    replaced   = replace("v1.2.3", ".", "_")
    regexp     = replace("v1.2.3", "/[0-9]+/", "N")
    formatted  = format("%s-%03d-%v", "img", 7, true)
    concat     = concat(var.regions, ["northeurope"])
    coalesce   = coalesce(var.unset, "fallback")
    lookup     = lookup(var.tags, "team", "none")
    missing    = lookup(var.tags, "owner", "none")
    contains   = contains(var.regions, "eastus")
    length     = length(local.parts)
    strlen     = length("ubuntu")
    trimmed    = trimspace("  x  ")
    date       = formatdate("YYYY-MM-DD hh:mm", "2026-12-03T09:30:00Z")
    merged     = merge(var.tags, { os = "linux" })
    substr     = substr("ubuntu2204", 0, 6)
    regex      = regex("[0-9]+", "ubuntu2204")
    title      = title("confidential vm")
    trimprefix = trimprefix("aks-ubuntu", "aks-")
    minmax     = [min(3, 1, 2), max(3, 1, 2)]
    keys       = keys(var.tags)
    conditional = length(var.regions) > 1 ? "multi" : "single"
    for_expr   = [for r in var.regions : upper(r)]
  }
}

source "null" "fn" {
  communicator = "none"
}

build {
  sources = ["source.null.fn"]

  provisioner "shell-local" {
    inline = ["echo 'RESULTS=${jsonencode(local.results)}'"]
  }
}
