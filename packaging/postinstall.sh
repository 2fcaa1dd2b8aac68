#!/bin/sh
# Quire post-install: the service user, the data dir, and the service.
set -e
if ! id -u quire >/dev/null 2>&1; then
	useradd --system --user-group --home-dir /var/lib/quire --no-create-home \
		--shell /usr/sbin/nologin --comment "Quire document server" quire
fi
mkdir -p /var/lib/quire
chown quire:quire /var/lib/quire
chmod 0750 /var/lib/quire
# The service reads its config (which may hold secrets) but cannot change it.
chown root:quire /etc/quire/quire.toml
chmod 0640 /etc/quire/quire.toml
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
	systemctl enable quire.service >/dev/null 2>&1 || true
	systemctl restart quire.service >/dev/null 2>&1 || true
fi
cat <<'MSG'
Quire is installed: config /etc/quire/quire.toml, data /var/lib/quire.
  status:       systemctl status quire   (logs: journalctl -u quire)
  admin token:  sudo -u quire quire token --config /etc/quire/quire.toml --user admin --groups Admins
  check setup:  sudo -u quire quire doctor --config /etc/quire/quire.toml
It listens on 127.0.0.1:8080; set listen (and tls) in the config to serve the LAN.
MSG
exit 0
