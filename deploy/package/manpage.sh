#!/usr/bin/env bash
# manpage.sh BOOTSTORM OUT: bootstorm(1) from the binary's own --help (Debian's help2man), with a section per
# subcommand from `bootstorm <subcommand> --help`, so the page says what the binary does. OUT is gzipped.
set -euo pipefail
bin=$1 out=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The subcommands, as the top-level help lists them (CLI11: "Subcommands:" then "  name  description").
mapfile -t subs < <("$bin" --help | awk '/^Subcommands:/ {on = 1; next} on && /^  [a-z]/ {print $1}')
{
  echo "[SUBCOMMANDS]"
  for sub in "${subs[@]}"; do
    echo ".SS bootstorm $sub"
    echo ".nf"
    "$bin" "$sub" --help | sed -e 's/\\/\\\\/g' -e 's/^\./\\\&./'
    echo ".fi"
  done
  cat <<'MORE'
[FILES]
.TP
.I /usr/share/bootstorm/labs
Lab profiles of the embedded simulator (a plan names one with \fBplatform.lab: <name>\fR);
\fBBOOTSTORM_LABS_DIR\fR overrides the directory.
.TP
.I /usr/share/bootstorm/plans
Example plans.
.TP
.I /usr/share/bootstorm/deploy
The guest beacon agents (Linux, Windows) and the Kubernetes manifests for running bootstorm in a cluster.
[ENVIRONMENT]
.TP
.B BOOTSTORM_LABS_DIR
Where lab profiles are looked up instead of /usr/share/bootstorm/labs.
[SEE ALSO]
/usr/share/doc/bootstorm/README.md
MORE
} >"$work/include"
help2man --no-info --no-discard-stderr --section 1 --name "boot-storm orchestrator for VDI on vSphere and KubeVirt" \
  --include "$work/include" --output "$work/bootstorm.1" "$bin"
gzip -9n <"$work/bootstorm.1" >"$out"
