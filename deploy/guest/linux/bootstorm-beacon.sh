#!/bin/sh
# bootstorm in-guest beacon agent (Linux).
#
# Tells the bootstorm run that this desktop is usable: POST /v1/ready to the run's beacon listener with the
# VM's identity and its per-VM token. The URL and token reach the guest through what the provider hands
# over, searched in this order:
#   1. environment BOOTSTORM_BEACON_URL / BOOTSTORM_BEACON_TOKEN / BOOTSTORM_VM_NAME
#   2. /etc/bootstorm/beacon.env (written by the cloud-init snippet from the KubeVirt provider's user data)
#   3. vSphere guestinfo (guestinfo.bootstorm.url / .token / .vm) through vmware-rpctool, when present
# It retries with backoff until the listener answers 200 (or 'duplicate'), then exits 0. A 401/400 is final.
set -u

conf=${BOOTSTORM_BEACON_CONF:-/etc/bootstorm/beacon.env}
if [ -r "$conf" ]; then
  # shellcheck disable=SC1090
  . "$conf"
fi

guestinfo() {
  if command -v vmware-rpctool >/dev/null 2>&1; then
    vmware-rpctool "info-get guestinfo.bootstorm.$1" 2>/dev/null || true
  fi
}

url=${BOOTSTORM_BEACON_URL:-$(guestinfo url)}
token=${BOOTSTORM_BEACON_TOKEN:-$(guestinfo token)}
vm=${BOOTSTORM_VM_NAME:-$(guestinfo vm)}
[ -n "$vm" ] || vm=$(hostname)
max_attempts=${BOOTSTORM_BEACON_ATTEMPTS:-60}

if [ -z "$url" ] || [ -z "$token" ]; then
  echo "bootstorm-beacon: no beacon URL/token configured (env, $conf or guestinfo); nothing to do" >&2
  exit 0
fi

# The providers hand over the listener's full URL (".../v1/ready"); a base URL gets the path appended.
case "${url%/}" in
  */v1/ready) endpoint=${url%/} ;;
  *) endpoint="${url%/}/v1/ready" ;;
esac

# First non-loopback IPv4 address, if any (optional in the request).
ip=$(hostname -I 2>/dev/null | awk '{print $1}')

json_escape() { printf '%s' "$1" | sed 's/\\/\\\\/g; s/"/\\"/g'; }
body=$(printf '{"vm":"%s","token":"%s","ip":"%s"}' "$(json_escape "$vm")" "$(json_escape "$token")" "$(json_escape "$ip")")

attempt=1
delay=1
while [ "$attempt" -le "$max_attempts" ]; do
  code=$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 -H 'Content-Type: application/json' \
    --data "$body" "$endpoint" 2>/dev/null || echo 000)
  case "$code" in
    200) echo "bootstorm-beacon: ready reported for $vm" >&2; exit 0 ;;
    400|401|404) echo "bootstorm-beacon: listener refused the call (HTTP $code); check URL and token" >&2; exit 1 ;;
  esac
  sleep "$delay"
  [ "$delay" -lt 10 ] && delay=$((delay * 2))
  attempt=$((attempt + 1))
done
echo "bootstorm-beacon: gave up after $max_attempts attempts (last HTTP $code)" >&2
exit 1
