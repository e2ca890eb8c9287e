#!/bin/sh
# Sets up Debian's python3-keystone on sqlite in $1 and serves its public WSGI app on
# 127.0.0.1:$2 until process $4 exits (host/apiserver/tests/keystone/setup-keystone.sh,
# the key repositories $1/fernet-keys and $1/credential-keys, which the tests replace,
# and `[fernet_tokens] max_active_keys` = $5). The admin user is
# `admin` / $3 in project `admin`, domain Default (as `keystone-manage bootstrap` leaves
# a Keystone).
set -eu
dir=$1; port=$2; password=$3; watch=$4; max_active_keys=$5
py=/usr/bin/python3
mkdir -p "$dir/fernet-keys" "$dir/credential-keys" "$dir/log"
chmod 0700 "$dir/fernet-keys" "$dir/credential-keys"
cat > "$dir/keystone.conf" <<CONF
[DEFAULT]
log_file = $dir/log/keystone.log
[database]
connection = sqlite:///$dir/keystone.db
[fernet_tokens]
key_repository = $dir/fernet-keys
max_active_keys = $max_active_keys
[fernet_receipts]
key_repository = $dir/fernet-keys
[credential]
key_repository = $dir/credential-keys
[token]
provider = fernet
CONF
manage() { $py /usr/bin/keystone-manage --config-file "$dir/keystone.conf" "$@"; }
manage db_sync
# WAL: the WSGI app's and keystone-manage's connections do not lock each other out.
$py -c "import sqlite3,sys; sqlite3.connect(sys.argv[1]).execute('PRAGMA journal_mode=WAL')" "$dir/keystone.db"
# bootstrap wants keys; the tests put the reconciler's in their place.
manage fernet_setup
manage credential_setup
manage bootstrap --bootstrap-password "$password" \
  --bootstrap-admin-url "http://127.0.0.1:$port/v3" \
  --bootstrap-internal-url "http://127.0.0.1:$port/v3" \
  --bootstrap-public-url "http://127.0.0.1:$port/v3" \
  --bootstrap-region-id RegionOne
export OS_KEYSTONE_CONFIG_FILES="$dir/keystone.conf"
$py /usr/bin/keystone-wsgi-public --host 127.0.0.1 --port "$port" &
server=$!
trap 'kill "$server" 2>/dev/null || true' EXIT
# /proc, not `kill -0`: the test process may run as another user than this script.
while [ -d "/proc/$watch" ] && kill -0 "$server" 2>/dev/null; do sleep 1; done
