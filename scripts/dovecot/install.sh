#!/usr/bin/env bash
# Installs Dovecot's IMAP server (dovecot-imapd) non-interactively if it is missing, and makes
# sure the distribution's own dovecot service is not running: scripts/dovecot/dovecot.js starts
# private instances (one per scratch dir), the system instance on ports 143/993 is not needed.
set -euo pipefail

SUDO=''
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install.sh: run as root (or install sudo)" >&2; exit 1; }
  SUDO='sudo'
fi

if command -v dovecot >/dev/null && [ -x /usr/lib/dovecot/dovecot-lda ] &&
  dpkg-query -W -f='${Status}' dovecot-imapd 2>/dev/null | grep -q 'install ok installed'; then
  echo "dovecot-imapd already installed ($(dovecot --version))"
else
  # policy-rc.d exit 101 stops the postinst from starting the service (there is no systemd here,
  # and where there is, we do not want a system instance either).
  policy=/usr/sbin/policy-rc.d
  created_policy=''
  if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
    $SUDO chmod +x "$policy"
    created_policy=1
  fi
  trap 'if [ -n "$created_policy" ]; then $SUDO rm -f "$policy"; fi' EXIT
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold dovecot-imapd
  echo "installed dovecot-imapd ($(dovecot --version))"
fi

# Stop the system instance if something started it (it uses /etc/dovecot/dovecot.conf and
# /run/dovecot; our instances have their own base_dir, so it is merely in the way on 143/993).
if [ -f /run/dovecot/master.pid ] && kill -0 "$(cat /run/dovecot/master.pid)" 2>/dev/null; then
  echo "stopping the system dovecot instance"
  $SUDO doveadm stop 2>/dev/null || $SUDO kill "$(cat /run/dovecot/master.pid)" || true
fi
if command -v systemctl >/dev/null && [ -d /run/systemd/system ]; then
  $SUDO systemctl disable --now dovecot.service dovecot.socket >/dev/null 2>&1 || true
fi
