#!/usr/bin/env bash
# Makes sure the tools the tests drive are present (run by `npm test` through `pretest`):
# Debian's chromium for the dashboard's browser test, promtool (package prometheus) for the
# /metrics test, zsh and fish, whose completion the completion test drives for real, and jq and
# openssl, which the README's tour (run by the walkthrough test) uses. Installs what is missing
# with apt-get when we may (root, or sudo without a password), with one `apt-get update` at most;
# otherwise says so and leaves the tests to report the tool as missing. MKT_SKIP_TOOL_INSTALL=1
# skips them all, MKT_SKIP_CHROMIUM_INSTALL=1 chromium.
set -euo pipefail

say() { echo "ensure-test-tools: $*" >&2; }

missing=()   # Debian packages to install
if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  if [ "${MKT_SKIP_CHROMIUM_INSTALL:-}" = "1" ] || [ "${MKT_SKIP_TOOL_INSTALL:-}" = "1" ]; then
    say "chromium is missing and installing it is turned off (MKT_SKIP_CHROMIUM_INSTALL or MKT_SKIP_TOOL_INSTALL); the browser test will fail"
  else
    missing+=(chromium)
  fi
fi
if ! command -v promtool >/dev/null 2>&1 && [ ! -x /usr/bin/promtool ]; then
  if [ "${MKT_SKIP_TOOL_INSTALL:-}" = "1" ]; then
    say "promtool is missing and MKT_SKIP_TOOL_INSTALL=1; the metrics test will fail"
  else
    missing+=(prometheus)
  fi
fi
for tool in zsh fish jq openssl; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    if [ "${MKT_SKIP_TOOL_INSTALL:-}" = "1" ]; then
      say "$tool is missing and MKT_SKIP_TOOL_INSTALL=1; the tests that run it will fail"
    else
      missing+=("$tool")
    fi
  fi
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  say "missing: ${missing[*]}, and this is not a Debian-like system; install chromium, promtool (Prometheus), zsh, fish, jq and openssl yourself"
  exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
  else
    say "missing: ${missing[*]}, and installing needs root: sudo apt-get install --no-install-recommends ${missing[*]}"
    exit 0
  fi
fi
say "installing Debian ${missing[*]} (once)"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
command -v chromium >/dev/null 2>&1 && say "$(chromium --version 2>/dev/null || echo 'chromium installed')"
command -v promtool >/dev/null 2>&1 && say "$(promtool --version 2>&1 | head -n 1 || echo 'promtool installed')"
exit 0
