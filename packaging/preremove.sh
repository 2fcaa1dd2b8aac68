#!/bin/sh
# Quire pre-remove: stop the service. Documents in /var/lib/quire are kept,
# also on purge; delete the folder yourself once you have a backup.
set -e
if [ -d /run/systemd/system ]; then
	systemctl stop quire.service >/dev/null 2>&1 || true
	case "$1" in
	remove | purge | 0) systemctl disable quire.service >/dev/null 2>&1 || true ;;
	esac
fi
exit 0
