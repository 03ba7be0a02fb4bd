# Test fixture: opens WinRM for ansible on the build VM.
Write-Output "winrm configured (fixture)"
