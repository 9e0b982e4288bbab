#!/usr/bin/env bash
# Makes sure Debian's chromium is present for the dashboard's browser test (run by `npm test`
# through `pretest`). Installs it with apt-get when missing and we may (root, or sudo without
# a password); otherwise says so and leaves the test to report chromium as missing.
set -euo pipefail

if command -v chromium >/dev/null 2>&1 || [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "${MKT_SKIP_CHROMIUM_INSTALL:-}" = "1" ]; then
  echo "ensure-chromium: chromium is missing and MKT_SKIP_CHROMIUM_INSTALL=1; the browser test will fail" >&2
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: chromium is missing and this is not a Debian-like system; install chromium yourself" >&2
  exit 0
fi
SUDO=""
if [ "$(id -u)" != "0" ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    SUDO="sudo -n"
  else
    echo "ensure-chromium: chromium is missing and installing it needs root: sudo apt-get install chromium" >&2
    exit 0
  fi
fi
echo "ensure-chromium: installing Debian chromium (once)" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
command -v chromium >/dev/null 2>&1 && echo "ensure-chromium: $(chromium --version 2>/dev/null || echo installed)" >&2
