package main

import (
	"os/exec"

	"github.com/imgflow/imgflow/builtins"
	"github.com/imgflow/imgflow/packer"
)

// packerValidator returns what validates a plan's packer_build calls with
// the real `packer validate`: nil when off is set or when no packer is on
// PATH (plans then rely on imgflow's model of the template alone). Each
// distinct build is validated once.
func packerValidator(off bool) builtins.PackerValidator {
	if off {
		return nil
	}
	if _, err := exec.LookPath("packer"); err != nil {
		return nil
	}
	return builtins.PackerValidateOnce(&packer.Runner{})
}
