#!/bin/bash
# Fixture: helpers the install scripts source on the build VM.
retrycmd_if_failure() { local n=$1; shift 3; for _ in $(seq 1 "$n"); do "$@" && return 0; sleep 1; done; return 1; }
