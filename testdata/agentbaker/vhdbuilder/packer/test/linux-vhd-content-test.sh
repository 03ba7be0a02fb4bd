#!/bin/bash
# Fixture: a VHD content test of the shape of AgentBaker's. The test VM
# runs it as root with seven arguments; each test function prints
# "NAME: Start" and "NAME: Finish" on stdout and reports a failure on
# stderr as "NAME:Error: message".
VHD_LOGS_FILEPATH=/opt/azure/vhd-install.complete
COMPONENTS_FILEPATH=/opt/azure/components.json

OS_VERSION="$1"
ENABLE_FIPS="$2"
OS_SKU="$3"
GIT_BRANCH="$4"
IMG_SKU="$5"
FEATURE_FLAGS="$6"
GIT_COMMIT_HASH="$7"

err() {
  echo "$1:Error: $2" >>/dev/stderr
}

testVHDBuildLogsExist() {
  local test="testVHDBuildLogsExist"
  echo "$test: Start"
  if [ -f "$VHD_LOGS_FILEPATH" ]; then
    echo "$test: $VHD_LOGS_FILEPATH exists"
  else
    err $test "File $VHD_LOGS_FILEPATH not found"
  fi
  echo "$test: Finish"
}

testCriticalTools() {
  local test="testCriticalTools"
  echo "$test: Start"
  for tool in jq curl netstat; do
    if ! command -v "$tool" >/dev/null; then
      err $test "$tool is not installed"
    fi
  done
  echo "$test: Finish"
}

testFips() {
  local test="testFips"
  local os_version=$1
  local enable_fips=$2
  echo "$test: Start"
  if [ "${enable_fips,,}" = "true" ]; then
    if [ "$(cat /proc/sys/crypto/fips_enabled 2>/dev/null)" != "1" ]; then
      err $test "FIPS is not enabled on ${os_version}"
    fi
  fi
  echo "$test: Finish"
}

testBlobfuse2() {
  local test="testBlobfuse2"
  echo "$test: Start"
  if ! command -v blobfuse2 >/dev/null; then
    err $test "blobfuse2 is not installed"
  fi
  echo "$test: Finish"
}

testImagesPulled() {
  local test="testImagesPulled"
  echo "$test: Start"
  if [ ! -f "$COMPONENTS_FILEPATH" ]; then
    err $test "$COMPONENTS_FILEPATH not found"
  fi
  echo "$test: Finish"
}

# Every test runs; a failure is reported on stderr, never by exiting.
testVHDBuildLogsExist
testCriticalTools
testFips $OS_VERSION $ENABLE_FIPS
if [ "$OS_SKU" = "Ubuntu" ]; then
  testBlobfuse2
fi
testImagesPulled
