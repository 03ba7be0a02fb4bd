#!/bin/bash
# capz-smoke-test.sh — image-builder's "Test SIG Image" stage for a CAPZ
# reference image (build-azure-sig.yaml): a VM booted from the built
# managed image must have kubelet and kubeadm of the Kubernetes version,
# containerd running, and pass `kubeadm init --dry-run`. Run by
# lib/capz.star's smoke_test() through command().
#
#   capz-smoke-test.sh MODE IMAGE_ID LOCATION KUBERNETES_VERSION
#
# MODE vm boots the VM with the Azure CLI (logged in as imgflow is) in a
# resource group of its own, runs the checks with `az vm run-command`, and
# deletes the group whatever happened. MODE simulate (the local target,
# where no VM can boot) checks the arguments and prints the checks it
# would run.
set -euo pipefail

usage() { echo "usage: $0 vm|simulate IMAGE_ID LOCATION KUBERNETES_VERSION" >&2; exit 2; }
[[ $# -eq 4 ]] || usage
mode=$1 image=$2 location=$3 version=$4

[[ $image == /subscriptions/*/providers/Microsoft.Compute/images/* || $image == /subscriptions/*/providers/Microsoft.Compute/galleries/*/images/*/versions/* ]] ||
	{ echo "not a managed image or gallery image version id: $image" >&2; exit 2; }
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "Kubernetes version $version: want major.minor.patch" >&2; exit 2; }
[[ $location =~ ^[a-z0-9]+$ ]] || { echo "location $location: want a region name such as northcentralus" >&2; exit 2; }

# The checks, as one shell script for the VM.
checks="set -e
kubeadm version -o short | grep -x v$version
kubelet --version | grep -x 'Kubernetes v$version'
systemctl is-active containerd
sudo kubeadm init --dry-run --kubernetes-version v$version >/dev/null
echo smoke-test-passed"

case $mode in
simulate)
	echo "simulated: no VM booted from $image in $location; on Azure (mode vm) it would run:"
	echo "$checks"
	;;
vm)
	group="capz-smoke-test-$(date +%s)-$$"
	trap 'az group delete -n "$group" --yes --no-wait >/dev/null || true' EXIT
	az group create -n "$group" -l "$location" -o none
	az vm create -g "$group" -n smoke --image "$image" --size Standard_D2s_v3 \
		--admin-username capi --generate-ssh-keys --public-ip-address "" -o none
	out=$(az vm run-command invoke -g "$group" -n smoke --command-id RunShellScript \
		--scripts "$checks" --query 'value[0].message' -o tsv)
	echo "$out"
	# run-command succeeds whatever the script did: only the last check's
	# marker, printed under set -e, says every check passed.
	grep -qx smoke-test-passed <<<"$out" || { echo "smoke test failed on $image" >&2; exit 1; }
	;;
*) usage ;;
esac
