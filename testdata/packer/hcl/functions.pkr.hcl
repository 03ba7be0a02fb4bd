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
    coalesce_empty = coalesce("", "x")
    sorted     = sort(["b", "a", "c"])
    distinct   = distinct(["a", "a", "b"])
    compact    = compact(["a", "", "b"])
    chomp      = chomp("line\n")
    indent     = indent(2, "a\nb")
    parseint   = parseint("ff", 16)
    zipmap     = zipmap(["a", "b"], ["1", "2"])
    values     = values({ a = "1", b = "2" })
    flatten    = flatten([["a"], ["b", ["c"]]])
    slice      = slice(["a", "b", "c"], 1, 3)
    element    = element(["a", "b"], 3)
    numbers    = [abs(-2), ceil(1.2), floor(1.8), pow(2, 3), signum(-5), log(8, 2)]
    range      = range(3)
    formatlist = formatlist("%s-x", ["a", "b"])
    chunklist  = chunklist(["a", "b", "c"], 2)
    regex_replace = regex_replace("v1.2.3", "[0-9]", "N")
    timeadd    = timeadd("2026-12-03T09:30:00Z", "1h")
    jsondecode = jsondecode("{\"a\": [1, 2]}")
    csvdecode  = csvdecode("a,b\n1,2\n")
    trim       = trim("--x--", "-")
    trimsuffix = trimsuffix("image.vhd", ".vhd")
    strrev     = strrev("abc")
    regexall   = regexall("[0-9]", "a1b2")
    reverse    = reverse(["a", "b"])
    try        = try(var.tags["owner"], "nobody")
    can        = can(var.tags["owner"])
  }
}

source "null" "fn" {
  communicator = "none"
}

build {
  sources = ["source.null.fn"]

  provisioner "shell-local" {
    # base64: the JSON's \n would become a newline in packer's output.
    inline = ["echo RESULTS=${base64encode(jsonencode(local.results))}"]
  }
}
