#!/bin/bash
# Fixture: the scan AgentBaker runs on a VM of the new image; imgflow reads
# the trivy version it pins.
TRIVY_GITHUB_VERSION="0.69.3"
trivy rootfs --format json --output /tmp/trivy-report.json /
