#!/usr/bin/env bash
# A stand-in for packer 1.9.5 that prints realistic `-machine-readable`
# azure-arm output without touching Azure. Used by packer/run_test.go.
#
# Shapes follow packer 1.9.5 (an unnamed azure-arm builder's target is
# "azure-arm"): everything on stdout as
# timestamp,target,type,data...; commas escaped as %!(PACKER_COMMA), newlines
# as the two characters \n; the azure-arm artifact string is the shape of
# builder/azure/arm/artifact.go String() of packer-plugin-azure v1.4.0.
#
# Controlled by the environment:
#   FAKE_PACKER_MODE      vhd (default) | managed | sig | fail | hang | hang-ignore-int
#   FAKE_PACKER_ARGV_FILE write argv (one per line) and "varfile-mode PATH MODE"
#                         for every -var-file, to this file
#   FAKE_PACKER_PID_FILE  write "PID" and "CHILD_PID" lines here (hang modes)
#   FAKE_PACKER_ECHO_VAR  print the value of this variable, read from the
#                         last -var-file, in a ui message (as a provisioner
#                         echoing a secret would)
#   FAKE_PACKER_ECHO_ENV  print NAME=value for each of these (space-separated)
#                         environment variables in a ui message (as a
#                         provisioner echoing its environment would)
#   FAKE_PACKER_RG        existing: build in an existing resource group
#                         (build_resource_group_name), which packer never
#                         deletes; async: delete the temporary one without
#                         waiting (async_resourcegroup_delete)
set -u

# bash's own clock: a date process per line made a fake build take seconds
# on a busy machine.
out() { printf '%(%s)T,%s\n' -1 "$1"; }

if [ "${1:-}" = "version" ]; then
	out ",version,1.9.5"
	out ",version-prelease,"
	out ",version-commit,"
	out ",ui,say,Packer v1.9.5"
	exit 0
fi

if [ "${1:-}" != "build" ] && [ "${1:-}" != "validate" ]; then
	echo "fake-packer: unsupported command: $*" >&2
	exit 2
fi

varfile=""
for a in "$@"; do
	case "$a" in
	-var-file=*) varfile="${a#-var-file=}" ;;
	esac
done

if [ -n "${FAKE_PACKER_ARGV_FILE:-}" ]; then
	: >"$FAKE_PACKER_ARGV_FILE"
	for a in "$@"; do printf '%s\n' "$a" >>"$FAKE_PACKER_ARGV_FILE"; done
	for a in "$@"; do
		case "$a" in
		-var-file=*)
			f="${a#-var-file=}"
			printf 'varfile-mode %s %s\n' "$f" "$(stat -c %a "$f")" >>"$FAKE_PACKER_ARGV_FILE"
			;;
		esac
	done
fi

mode="${FAKE_PACKER_MODE:-vhd}"

# validate: packer 1.9.5's lines for a valid template, or (mode fail) its
# error for a provisioner script that does not exist, naming the value of
# FAKE_PACKER_ECHO_VAR as real packer would when the path holds it.
if [ "$1" = validate ]; then
	if [ "$mode" = fail ]; then
		v=""
		if [ -n "${FAKE_PACKER_ECHO_VAR:-}" ] && [ -n "$varfile" ]; then
			v=$(sed -n "s/^ *\"${FAKE_PACKER_ECHO_VAR}\": \"\\(.*\\)\",\\{0,1\\}\$/\\1/p" "$varfile")
		fi
		out ",ui,error,Error: Failed to prepare build: \"azure-arm\"\\n\\n1 error(s) occurred:\\n\\n* Bad script '/scripts/$v.sh': stat\\n/scripts/$v.sh: no such file or directory\\n\\n"
		exit 1
	fi
	out ",ui,say,The configuration is valid."
	exit 0
fi
b=azure-arm
rg=packer-Resource-Group-k3v9x2m1qa

preamble() {
	out ",ui,say,==> $b: Running builder ..."
	out ",ui,say,==> $b: Getting tokens using client secret"
	if [ "${FAKE_PACKER_RG:-}" = existing ]; then
		out ",ui,say,==> $b: Using existing resource group ..."
		out ",ui,say,==> $b:  -> ResourceGroupName : '$rg'"
		out ",ui,say,==> $b:  -> Location          : 'westus2'"
	else
		out ",ui,say,==> $b: Creating resource group ..."
		out ",ui,say,==> $b:  -> ResourceGroupName : '$rg'"
		out ",ui,say,==> $b:  -> Location          : 'westus2'"
		out ",ui,say,==> $b:  -> Tags              :"
		out ",ui,say,==> $b:  ->> createdBy : imgflow"
	fi
	out ",ui,say,==> $b: Validating deployment template ..."
	out ",ui,say,==> $b: Deploying deployment template ..."
	out ",ui,say,==> $b: Waiting for SSH to become available..."
	out ",ui,say,==> $b: Provisioning with shell script: /tmp/packer-shell123"
	out ",ui,message,    $b: Reading package lists... Done%!(PACKER_COMMA) 3 upgraded%!(PACKER_COMMA) 0 newly installed"
	if [ -n "${FAKE_PACKER_ECHO_VAR:-}" ] && [ -n "$varfile" ]; then
		v=$(sed -n "s/^ *\"${FAKE_PACKER_ECHO_VAR}\": \"\\(.*\\)\",\\{0,1\\}\$/\\1/p" "$varfile")
		out ",ui,message,    $b: token=$v"
	fi
	for name in ${FAKE_PACKER_ECHO_ENV:-}; do
		out ",ui,message,    $b: env $name=${!name:-}"
	done
}

# cleanup prints the temporary resource group's deletion, as the step's
# Cleanup in packer-plugin-azure v1.4.0 does.
cleanup() {
	case "${FAKE_PACKER_RG:-}" in
	existing) out ",ui,say,==> $b: \\n==> $b: The resource group was not created by Packer%!(PACKER_COMMA) not deleting ..." ;;
	async)
		out ",ui,say,==> $b: \\n==> $b: Cleanup requested%!(PACKER_COMMA) deleting resource group ..."
		out ",ui,say,==> $b: \\n==> $b:  Not waiting for Resource Group delete as requested by user. Resource Group Name is $rg"
		;;
	*)
		out ",ui,say,==> $b: \\n==> $b: Cleanup requested%!(PACKER_COMMA) deleting resource group ..."
		out ",ui,say,==> $b: Resource group has been deleted."
		;;
	esac
}

finish() {
	cleanup
	out ",ui,say,Build '$b' finished after 14 minutes 2 seconds."
	out ",ui,say,\\n==> Wait completed after 14 minutes 2 seconds"
	out ",ui,say,\\n==> Builds finished. The artifacts of successful builds are:"
	out "$b,artifact-count,1"
	out "$b,artifact,0,builder-id,Azure.ResourceManagement.VMImage"
	out "$b,artifact,0,id,$1"
	out "$b,artifact,0,string,$2"
	out "$b,artifact,0,files-count,0"
	out "$b,artifact,0,end"
	out ",ui,say,--> $b: $2"
}

sub=/subscriptions/00000000-0000-0000-0000-000000000000
case "$mode" in
vhd)
	preamble
	out ",ui,say,==> $b: Capturing image ..."
	vhd="https://imgflowvhds.blob.core.windows.net/system/Microsoft.Compute/Images/aks-vhds/aks-osDisk.5e8f1c2a-1b2c-4d5e-8f90-123456789abc.vhd"
	tpl="https://imgflowvhds.blob.core.windows.net/system/Microsoft.Compute/Images/aks-vhds/aks-vmTemplate.5e8f1c2a-1b2c-4d5e-8f90-123456789abc.json"
	sas="?se=2021-01-31T00%3A00%3A00Z&sig=Zm9vYmFyYmF6cXV4%2BQ%3D%3D&sp=r&sr=b&sv=2018-03-28"
	s="Azure.ResourceManagement.VMImage:\\n\\nOSType: Linux\\nStorageAccountLocation: westus2\\nOSDiskUri: $vhd\\nOSDiskUriReadOnlySas: $vhd$sas\\nTemplateUri: $tpl\\nTemplateUriReadOnlySas: $tpl$sas\\n"
	finish "$vhd" "$s"
	;;
managed | sig)
	preamble
	out ",ui,say,==> $b: Capturing image ..."
	out ",ui,say,==> $b:  -> Image ResourceGroupName   : 'aks-images'"
	out ",ui,say,==> $b:  -> Image Name                : 'aks-ubuntu-2204-2021.01.01'"
	img="$sub/resourceGroups/aks-images/providers/Microsoft.Compute/images/aks-ubuntu-2204-2021.01.01"
	s="Azure.ResourceManagement.VMImage:\\n\\nOSType: Linux\\nManagedImageResourceGroupName: aks-images\\nManagedImageName: aks-ubuntu-2204-2021.01.01\\nManagedImageId: $img\\nManagedImageLocation: westus2\\n"
	if [ "$mode" = sig ]; then
		out ",ui,say,==> $b: Publishing to Shared Image Gallery ..."
		out ",ui,say,==> $b:  -> SIG replication regions    : '[westus2 eastus]'"
		ver="$sub/resourceGroups/aks-galleries/providers/Microsoft.Compute/galleries/aksgallery/images/ubuntu2204/versions/2021.01.01"
		# azure plugin v1.4.0 (bundled with packer 1.9.5) adds the gallery's
		# coordinates after the version id.
		s="${s}ManagedImageSharedImageGalleryId: $ver\\nSharedImageGalleryResourceGroup: aks-galleries\\nSharedImageGalleryName: aksgallery\\nSharedImageGalleryImageName: ubuntu2204\\nSharedImageGalleryImageVersion: 2021.01.01\\nSharedImageGalleryReplicatedRegions: westus2%!(PACKER_COMMA) eastus\\n"
	fi
	finish "$img" "$s"
	;;
fail)
	preamble
	out ",ui,say,==> $b: Provisioning step had errors: Running the cleanup provisioner%!(PACKER_COMMA) if present..."
	cleanup
	out ",ui,error,Build '$b' errored after 3 minutes 1 second: Script exited with non-zero exit status: 100. Allowed exit codes are: [0]"
	out ",ui,say,\\n==> Wait completed after 3 minutes 1 second"
	out ",error-count,1"
	out ",ui,error,\\n==> Some builds didn't complete successfully and had errors:"
	out "$b,error,Script exited with non-zero exit status: 100. Allowed exit codes are: [0]"
	out ",ui,error,--> $b: Script exited with non-zero exit status: 100. Allowed exit codes are: [0]"
	out ",ui,say,\\n==> Builds finished but no artifacts were created."
	exit 1
	;;
hang | hang-ignore-int)
	if [ "$mode" = hang-ignore-int ]; then
		# Like packer 1.6.6 with SIGTERM while azure-arm retries: nothing
		# stops it but SIGKILL. The child inherits the ignored signals.
		trap '' INT TERM
	fi
	preamble
	sleep 600 &
	child=$!
	out ",ui,say,==> $b: Waiting for the deployment to finish..."
	# The trap goes in, and the PID file announces we are ready, only when
	# nothing but builtins runs before wait: an interrupt sent right after
	# never meets the default disposition, nor a foreground child (out's
	# date) that it would kill instead.
	if [ "$mode" = hang ]; then
		trap 'out ",ui,error,Cancelling build after receiving interrupt"; kill "$child" 2>/dev/null; out ",ui,say,Cleanly cancelled builds after being interrupted."; exit 1' INT
	fi
	if [ -n "${FAKE_PACKER_PID_FILE:-}" ]; then
		printf 'PID %s\nCHILD_PID %s\n' "$$" "$child" >"$FAKE_PACKER_PID_FILE"
	fi
	wait "$child"
	exit 0
	;;
*)
	echo "fake-packer: unknown FAKE_PACKER_MODE=$mode" >&2
	exit 2
	;;
esac
