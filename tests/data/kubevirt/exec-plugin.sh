#!/bin/sh
# Test exec credential plugin (client.authentication.k8s.io/v1). Its output proves that it received its
# kubeconfig args and env and the KUBERNETES_EXEC_INFO variable:
#   token = "$EXEC_TOKEN_PREFIX-$1-<cluster server from KUBERNETES_EXEC_INFO, when provideClusterInfo is set>"
# EXEC_COUNT_FILE: a line is appended per run (tests count runs to check caching).
# EXEC_EXPIRY: expirationTimestamp (default far future). EXEC_CERT_FILE/EXEC_KEY_FILE: also return a client
# certificate. EXEC_FAIL: exit with this code after printing a message on stderr.
set -e
if [ -n "$EXEC_COUNT_FILE" ]; then echo run >> "$EXEC_COUNT_FILE"; fi
if [ -n "$EXEC_FAIL" ]; then echo "plugin failed on purpose" >&2; exit "$EXEC_FAIL"; fi
case "$KUBERNETES_EXEC_INFO" in
  *'"apiVersion":"client.authentication.k8s.io/v1"'*'"kind":"ExecCredential"'*) ;;
  *) echo "KUBERNETES_EXEC_INFO missing or wrong: $KUBERNETES_EXEC_INFO" >&2; exit 3 ;;
esac
server=$(printf '%s' "$KUBERNETES_EXEC_INFO" | sed -n 's/.*"server":"\([^"]*\)".*/\1/p')
token="${EXEC_TOKEN_PREFIX}-$1"
if [ -n "$server" ]; then token="$token-$server"; fi
expiry="${EXEC_EXPIRY:-2099-01-01T00:00:00Z}"
cert=""
if [ -n "$EXEC_CERT_FILE" ]; then
  c=$(awk '{printf "%s\\n", $0}' "$EXEC_CERT_FILE")
  k=$(awk '{printf "%s\\n", $0}' "$EXEC_KEY_FILE")
  cert=",\"clientCertificateData\":\"$c\",\"clientKeyData\":\"$k\""
fi
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s","expirationTimestamp":"%s"%s}}\n' \
  "$token" "$expiry" "$cert"
