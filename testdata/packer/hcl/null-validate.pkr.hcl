# Checked with real packer 1.9.5 (`packer validate`, `packer build`) by
# packer/hcl_real_test.go: build names, required and undeclared variables.
variable "required_name" {
  type = string
  validation {
    condition     = length(var.required_name) > 0
    error_message = "The required_name must not be empty."
  }
}

variable "greeting" {
  type    = string
  default = "hello"
}

variable "count_of" {
  type    = number
  default = 2
}

locals {
  message = "${var.greeting}-${var.required_name}"
}

source "null" "first" {
  communicator = "none"
}

source "null" "second" {
  communicator = "none"
}

build {
  name    = "named"
  sources = ["source.null.first", "source.null.second"]

  provisioner "shell-local" {
    inline = ["echo ${local.message} ${source.name} ${var.count_of}"]
  }
}

build {
  sources = ["source.null.first"]
}
