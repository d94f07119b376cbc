# bootstorm in-guest beacon agent (Windows).
#
# Reports "desktop usable" to a bootstorm run: POST /v1/ready with the VM's identity and its per-VM token.
# Run by two scheduled tasks (see install-beacon.ps1): at startup (machine booted) and at logon (the
# desktop is usable — the milestone VDI users care about). URL and token come from, in order:
#   1. environment BOOTSTORM_BEACON_URL / BOOTSTORM_BEACON_TOKEN / BOOTSTORM_VM_NAME
#   2. vSphere guestinfo through VMware Tools (guestinfo.bootstorm.url / .token / .vm)
#   3. C:\ProgramData\bootstorm\beacon.json ({"url": ..., "token": ..., "vm": ...}), e.g. written by
#      cloudbase-init user data on KubeVirt
param([int]$MaxAttempts = 60)
$ErrorActionPreference = 'Stop'

function Get-GuestInfo([string]$Key) {
  $rpc = Join-Path $env:ProgramFiles 'VMware\VMware Tools\rpctool.exe'
  if (Test-Path $rpc) {
    try { return (& $rpc "info-get guestinfo.bootstorm.$Key" 2>$null) } catch { return $null }
  }
  return $null
}

$url = $env:BOOTSTORM_BEACON_URL
$token = $env:BOOTSTORM_BEACON_TOKEN
$vm = $env:BOOTSTORM_VM_NAME
if (-not $url) { $url = Get-GuestInfo 'url' }
if (-not $token) { $token = Get-GuestInfo 'token' }
if (-not $vm) { $vm = Get-GuestInfo 'vm' }
$conf = Join-Path $env:ProgramData 'bootstorm\beacon.json'
if ((-not $url -or -not $token) -and (Test-Path $conf)) {
  $c = Get-Content $conf -Raw | ConvertFrom-Json
  if (-not $url) { $url = $c.url }
  if (-not $token) { $token = $c.token }
  if (-not $vm) { $vm = $c.vm }
}
if (-not $vm) { $vm = $env:COMPUTERNAME }
if (-not $url -or -not $token) {
  Write-Output 'bootstorm-beacon: no beacon URL/token configured; nothing to do'
  exit 0
}

$ip = (Get-NetIPAddress -AddressFamily IPv4 -ErrorAction SilentlyContinue |
       Where-Object { $_.IPAddress -notlike '127.*' -and $_.IPAddress -notlike '169.254.*' } |
       Select-Object -First 1).IPAddress
$body = @{ vm = $vm; token = $token; ip = $ip } | ConvertTo-Json -Compress
# The providers hand over the listener's full URL ('.../v1/ready'); a base URL gets the path appended.
$endpoint = $url.TrimEnd('/')
if (-not $endpoint.EndsWith('/v1/ready')) { $endpoint = $endpoint + '/v1/ready' }

$delay = 1
for ($attempt = 1; $attempt -le $MaxAttempts; $attempt++) {
  try {
    Invoke-RestMethod -Method Post -Uri $endpoint -ContentType 'application/json' `
      -Body $body -TimeoutSec 5 | Out-Null
    Write-Output "bootstorm-beacon: ready reported for $vm"
    exit 0
  } catch {
    $code = $_.Exception.Response.StatusCode.value__
    if ($code -in 400, 401, 404) {
      Write-Output "bootstorm-beacon: listener refused the call (HTTP $code); check URL and token"
      exit 1
    }
  }
  Start-Sleep -Seconds $delay
  if ($delay -lt 10) { $delay *= 2 }
}
Write-Output "bootstorm-beacon: gave up after $MaxAttempts attempts"
exit 1
