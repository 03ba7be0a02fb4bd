# Test fixture: generalizes the Windows VM before packer captures it.
Write-Output "sysprep /generalize /oobe /shutdown (fixture)"
