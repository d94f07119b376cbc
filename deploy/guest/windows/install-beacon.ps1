# Installs the bootstorm beacon into a golden Windows image: copies the agent and registers two scheduled
# tasks, one at startup (SYSTEM) and one at logon of any user. Run once, elevated, before sealing the image.
$ErrorActionPreference = 'Stop'
$dir = Join-Path $env:ProgramData 'bootstorm'
New-Item -ItemType Directory -Force -Path $dir | Out-Null
Copy-Item -Force (Join-Path $PSScriptRoot 'bootstorm-beacon.ps1') $dir
$script = Join-Path $dir 'bootstorm-beacon.ps1'
$action = New-ScheduledTaskAction -Execute 'powershell.exe' `
  -Argument "-NoProfile -NonInteractive -ExecutionPolicy Bypass -File `"$script`""
$startup = New-ScheduledTaskTrigger -AtStartup
$logon = New-ScheduledTaskTrigger -AtLogOn
$settings = New-ScheduledTaskSettingsSet -AllowStartIfOnBatteries -DontStopIfGoingOnBatteries -StartWhenAvailable
Register-ScheduledTask -TaskName 'bootstorm-beacon-startup' -Action $action -Trigger $startup `
  -Settings $settings -User 'SYSTEM' -RunLevel Highest -Force | Out-Null
Register-ScheduledTask -TaskName 'bootstorm-beacon-logon' -Action $action -Trigger $logon `
  -Settings $settings -Force | Out-Null
Write-Output 'bootstorm beacon installed: tasks bootstorm-beacon-startup and bootstorm-beacon-logon'
