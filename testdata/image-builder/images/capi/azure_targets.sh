# Test fixture: the Azure gallery targets the Makefile builds, one list per
# generation, in the KEY="a b c" form its build-azure-sig rules grep for.
SIG_TARGETS="ubuntu-2204 ubuntu-2404 ubuntu-2604 azurelinux-3 windows-2022-containerd windows-2025-containerd flatcar"
SIG_GEN2_TARGETS="ubuntu-2204 ubuntu-2404 ubuntu-2604 azurelinux-3 flatcar"
SIG_CVM_TARGETS="ubuntu-2204 ubuntu-2404 windows-2022-containerd"
